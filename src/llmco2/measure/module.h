// measure/module.h - namespace llmco2::measure, and the folders whose names it uses unqualified: those its CMake target
// links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "dataset/module.h"
#include "hardware/module.h"

namespace llmco2::measure {
using namespace llmco2::dataset;
using namespace llmco2::hardware;
}  // namespace llmco2::measure
