// model/module.h - namespace llmco2::model, and the folders whose names it uses unqualified: those its CMake target
// links (build/<preset>/layers.txt), each named once, through the folders it links directly.
#pragma once

namespace llmco2::model {}  // namespace llmco2::model
