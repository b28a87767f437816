// evaluation/module.h - namespace llmco2::evaluation, and the folders whose names it uses unqualified: those its CMake
// target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "predictor/module.h"
#include "serving/module.h"

namespace llmco2::evaluation {
using namespace llmco2::predictor;
using namespace llmco2::serving;
}  // namespace llmco2::evaluation
