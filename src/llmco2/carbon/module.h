// carbon/module.h - namespace llmco2::carbon, and the folders whose names it uses unqualified: those its CMake target
// links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "predictor/module.h"

namespace llmco2::carbon {
using namespace llmco2::predictor;
}  // namespace llmco2::carbon
