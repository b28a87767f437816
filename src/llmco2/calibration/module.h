// calibration/module.h - namespace llmco2::calibration, and the folders whose names it uses unqualified: those its
// CMake target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "sim/module.h"

namespace llmco2::calibration {
using namespace llmco2::sim;
}  // namespace llmco2::calibration
