// training/training_set.h - dataset rows (simulated or measured) turned into the predictors' examples: the row's
// configuration, its encoded graph and its targets in log space.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "dataset/dataset_csv.h"
#include "predictor/encoding.h"
#include "training/module.h"

namespace llmco2::training {

struct Targets {
  std::array<float, kOutputs> log_phase{};  // log energy/latency per phase, where known
  std::array<bool, kOutputs> phase_known{};
  float log_energy_total = 0, log_latency_total = 0;
  bool energy_total_known = false, latency_total_known = false;
};

struct Example {
  PredictorInput config;  // what a predictor takes of the row
  EncodedGraph graph;
  Targets targets;
  const DatasetRow* row = nullptr;  // owned by the caller's row vector
};

struct ExampleSet {
  FeatureSet features = FeatureSet::llmco2;
  std::vector<Example> examples;
  std::vector<RowReject> skipped;  // rows without a catalog model or GPU, an energy, or a GPU-work label
};

// Rows with a known model and GPU, a positive energy and totals that label GPU work (DatasetRow::why_not_a_label)
// become examples; the others are listed in `skipped`.
// `rows` must outlive the set.
ExampleSet make_examples(const std::vector<DatasetRow>& rows, FeatureSet features, const SimParams& params,
                         bool progress);

// Reads and concatenates dataset CSVs, throwing Error on a file that cannot be read; rejected rows are reported on
// stderr and skipped.
std::vector<DatasetRow> read_datasets(const std::vector<std::string>& paths);

}  // namespace llmco2::training
