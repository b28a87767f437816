// research_training/train.h - one predictor fitted on dataset rows in memory: what `train` writes to a file and
// `evaluate` trains once per predictor and test set.
#pragma once

#include <string>
#include <vector>

#include "dataset/record.h"
#include "llmco2/training.h"
#include "predictor/model_file.h"
#include "research_training/module.h"
#include "sim/sim_params.h"

namespace llmco2::research {

// Fits `predictor` (a registered one but the simulator: predictor/registry.h) on `rows`. Throws Error.
ModelFile train_predictor(const std::string& predictor, const std::vector<DatasetRow>& rows, const SimParams& params,
                          const TrainSettings& settings);

}  // namespace llmco2::research
