// llmco2/training.h - training and evaluating the learned predictors as library calls (`llmco2 train`, `llmco2
// eval`). These link libtorch (the GNNs) and XGBoost (DeepEn's forests), so they live apart from llmco2/api.h and
// llmco2/research.h: a program that only predicts never maps them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmco2/error.h"

namespace llmco2::research {

// The predictors `train` can fit: every registered predictor but the simulator, whose parameters `calibrate` fits.
std::vector<std::string> trainable_predictors();
// Every registered predictor, in the registry's order (baselines, GNNs, simulator): what `evaluate` scores.
std::vector<std::string> evaluated_predictors();

struct TrainSettings {
  std::string features, scaling;  // GNN features (llmco2, phases, merged) and target (log, sim_ratio); empty: the
                                  // predictor's own recipe
  int epochs = 150, patience = 20, hidden = 64, threads = 2, batch_size = 512;
  int trees = 100, depth = 12;  // DeepEn's forests
  uint64_t seed = 1;
  bool progress = true;  // progress lines on stderr
};

struct TrainOptions {
  std::vector<std::string> data;  // dataset CSVs (llmco2 simulate --plan, llmco2 import)
  std::string out;                // model file to write
  std::string predictor = "llmco2";
  std::string params;  // simulator parameters for the physics features; empty: data/sim/params.json
  TrainSettings settings;
};
// Fits the predictor on the rows and writes its model file atomically; returns the file's model kind.
std::string train(const TrainOptions& options);

struct EvalOptions {
  long train_count = 50000, test_count = 5000;  // simulated configurations of the paper's protocol, test set (a)
  std::string held_out = "mlenergy-v2";         // the measured source held out as test set (b)
  std::string measured_dir;                     // imported measurements; empty: data/measured
  std::string report = "docs/predictor-accuracy.md", plots = "docs/predictor-accuracy";
  // Where each predictor's error band on (b) goes (the intervals of predict, trace and compare): absent,
  // data/predictors/error_bands.json; empty: not written.
  std::optional<std::string> error_bands;
  std::vector<std::string> predictors;  // empty: evaluated_predictors()
  int max_evaluations = 1500;           // simulator refit budget for (b)
  int repeats = 5;                      // noisy simulator repeats per simulated label
  TrainSettings train;
};
struct EvalSummary {
  std::string report_written, error_bands_written;
  double seconds = 0;
  std::vector<std::string> warnings;
};
// Trains every predictor and scores it on the two test sets (docs/predictor-accuracy.md): (a) the paper's protocol on
// simulated labels, (b) a public measurement campaign held out of training and of the simulator's calibration.
EvalSummary evaluate(const EvalOptions& options);

}  // namespace llmco2::research
