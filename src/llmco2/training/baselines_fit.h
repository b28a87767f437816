// training/baselines_fit.h - fitting the paper's non-GNN baselines: LLMCarbon's one utilisation and DeepEn's
// per-kernel random forests (XGBoost in random-forest mode).
#pragma once

#include <cstdint>
#include <vector>

#include "predictor/model_file.h"
#include "training/module.h"
#include "training/training_set.h"

namespace llmco2::training {

// The utilisation whose LLMCarbon energies best match the examples in log space (geometric mean ratio), in (0, 1].
double fit_llmcarbon_utilisation(const std::vector<const Example*>& examples);
ModelFile llmcarbon_model_file(double utilisation);

struct DeepEnOptions {
  int trees = 100;
  int max_depth = 12;
  double subsample = 0.8, colsample = 0.8;
  uint64_t seed = 1;
  int threads = 2;
};

// Each example's measured energy (latency) is split over its kernels in proportion to their Roofline times (per
// phase where the phases were measured): DeepEn measured kernels one by one, which no public dataset did.
ModelFile fit_deepen(const std::vector<const Example*>& examples, const DeepEnOptions& options);

}  // namespace llmco2::training
