// train_cli/commands.h - the subcommands of llmco2-train (the libtorch half of the CLI: train and eval).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "predictor/gnn.h"
#include "predictor/model_file.h"
#include "training/training_set.h"

namespace llmco2::cli {


struct TrainSettings {
  std::optional<FeatureSet> features;
  std::optional<TargetScaling> scaling;
  int epochs = 150, patience = 20, hidden = 64, threads = 2, batch_size = 512;
  int trees = 100, depth = 12;  // DeepEn's forests
  uint64_t seed = 1;
  bool progress = true;
};

// Fits `predictor` (a registered one but the simulator: predictor/registry.h) on `rows`.
ModelFile train_predictor(const std::string& predictor, const std::vector<DatasetRow>& rows, const SimParams& params,
                          const TrainSettings& settings);

void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);

}  // namespace llmco2::cli
