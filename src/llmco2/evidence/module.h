// evidence/module.h - namespace llmco2::evidence, and the folders whose names it uses unqualified: those its CMake
// target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "sim/module.h"

namespace llmco2::evidence {
using namespace llmco2::sim;
}  // namespace llmco2::evidence
