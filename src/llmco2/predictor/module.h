// predictor/module.h - namespace llmco2::predictor, and the folders whose names it uses unqualified: those its CMake
// target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "sim/module.h"

namespace llmco2::predictor {
using namespace llmco2::sim;
}  // namespace llmco2::predictor
