// tests/support/all_modules.h - the tests, benchmarks and fuzz harnesses name every folder's declarations unqualified
// (as if in namespace llmco2), through the folders no other folder links; the library never includes it.
#pragma once

#include "compare/module.h"
#include "evaluation/module.h"
#include "evidence/module.h"
#include "measure/module.h"
#include "measured/module.h"
#include "training/module.h"

namespace llmco2 {
using namespace llmco2::compare;
using namespace llmco2::evaluation;
using namespace llmco2::evidence;
using namespace llmco2::measure;
using namespace llmco2::measured;
using namespace llmco2::training;
}  // namespace llmco2
