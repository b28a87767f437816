// trace/module.h - namespace llmco2::trace, and the folders whose names it uses unqualified: those its CMake target
// links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "carbon/module.h"

namespace llmco2::trace {
using namespace llmco2::carbon;
}  // namespace llmco2::trace
