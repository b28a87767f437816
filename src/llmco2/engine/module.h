// engine/module.h - namespace llmco2::engine, and the folders whose names it uses unqualified: those its CMake target
// links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "hardware/module.h"

namespace llmco2::engine {
using namespace llmco2::hardware;
}  // namespace llmco2::engine
