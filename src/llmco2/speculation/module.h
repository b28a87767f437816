// speculation/module.h - namespace llmco2::speculation, and the folders whose names it uses unqualified: those its
// CMake target links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

#include "model/module.h"

namespace llmco2::speculation {
using namespace llmco2::model;
}  // namespace llmco2::speculation
