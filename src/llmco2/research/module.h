// research/module.h - namespace llmco2::research, and the folders whose names it uses unqualified: those its CMake
// target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "api/module.h"
#include "calibration/module.h"
#include "evaluation/module.h"
#include "measure/module.h"
#include "measured/module.h"
#include "sampling/module.h"

namespace llmco2::research {
using namespace llmco2::api;
using namespace llmco2::calibration;
using namespace llmco2::evaluation;
using namespace llmco2::measure;
using namespace llmco2::measured;
using namespace llmco2::sampling;
}  // namespace llmco2::research
