// api/module.h - namespace llmco2::api, and the folders whose names it uses unqualified: those its CMake target links
// (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "compare/module.h"
#include "evidence/module.h"

namespace llmco2::api {
using namespace llmco2::compare;
using namespace llmco2::evidence;
}  // namespace llmco2::api
