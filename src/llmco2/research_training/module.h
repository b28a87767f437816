// research_training/module.h - namespace llmco2::research (training, evaluation), and the folders whose names it uses
// unqualified: those its CMake target links (layers.txt), each named once, through those it links directly.
#pragma once

#include "api/module.h"
#include "evaluation/module.h"
#include "measure/module.h"
#include "measured/module.h"
#include "training/module.h"

namespace llmco2::research {
using namespace llmco2::api;
using namespace llmco2::evaluation;
using namespace llmco2::measure;
using namespace llmco2::measured;
using namespace llmco2::training;
}  // namespace llmco2::research
