// features/module.h - namespace llmco2::features, and the folders whose names it uses unqualified: those its CMake
// target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "engine/module.h"
#include "graph/module.h"

namespace llmco2::features {
using namespace llmco2::engine;
using namespace llmco2::graph;
}  // namespace llmco2::features
