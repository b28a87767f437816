// training/module.h - namespace llmco2::training, and the folders whose names it uses unqualified: those its CMake
// target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "calibration/module.h"
#include "predictor/module.h"
#include "sampling/module.h"

namespace llmco2::training {
using namespace llmco2::calibration;
using namespace llmco2::predictor;
using namespace llmco2::sampling;
}  // namespace llmco2::training
