// compare/module.h - namespace llmco2::compare, and the folders whose names it uses unqualified: those its CMake target
// links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "serving/module.h"
#include "trace/module.h"

namespace llmco2::compare {
using namespace llmco2::serving;
using namespace llmco2::trace;
}  // namespace llmco2::compare
