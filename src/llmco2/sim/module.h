// sim/module.h - namespace llmco2::sim, and the folders whose names it uses unqualified: those its CMake target links
// (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "dataset/module.h"
#include "features/module.h"
#include "speculation/module.h"

namespace llmco2::sim {
using namespace llmco2::dataset;
using namespace llmco2::features;
using namespace llmco2::speculation;
}  // namespace llmco2::sim
