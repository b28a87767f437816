// evaluation/node_validation.h - MLPerf Inference runs of whole nodes (NVIDIA's power runs at the wall under
// TensorRT-LLM, AMD's performance runs under vLLM on ROCm; Offline: every query at once; Server and Interactive:
// Poisson arrivals at the submitted rate) replayed through the serving simulation at node scope, and the simulated
// energy per output token, throughput and time per output token scored against the measured ones.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/accuracy.h"
#include "dataset/record.h"
#include "evaluation/module.h"
#include "evaluation/serving_validation.h"
#include "serving/serve_sim.h"

namespace llmco2::evaluation {

struct NodeValidationRow {
  size_t row = 0;  // index into the rows given
  std::string node, gpu, model, benchmark, scenario;
  int tensor_parallel = 1, replicas = 1;
  double power_cap_w = 0;                                                    // 0: the board's TDP
  double measured_energy_per_token_j = 0, simulated_energy_per_token_j = 0;  // whole node at the wall
  double measured_tokens_per_s = 0, simulated_tokens_per_s = 0;              // whole node
  double measured_node_w = 0, simulated_node_w = 0;
  double measured_tpot_s = 0, simulated_tpot_s = 0;  // Server and Interactive runs that report a mean TPOT
};

struct NodeValidation {
  std::vector<NodeValidationRow> rows;
  std::vector<std::pair<size_t, std::string>> skipped;  // row index and why it was not replayed
};

// Replays every row of `rows` that carries the throughput_row caveat (a whole node's run) and that `chosen` accepts.
NodeValidation validate_node_rows(const std::vector<DatasetRow>& rows,
                                  const std::function<bool(const DatasetRow&)>& chosen, const SimParams& params,
                                  bool progress);

// Runs with a measured energy only (the AMD results measured none).
Accuracy node_energy_accuracy(const std::vector<NodeValidationRow>& rows);
// Runs that report a mean time per output token (MLPerf Server and Interactive).
Accuracy node_tpot_accuracy(const std::vector<NodeValidationRow>& rows);
// Offline rows only: a Server run's throughput is the rate it was offered.
Accuracy node_throughput_accuracy(const std::vector<NodeValidationRow>& rows);

// A markdown table with one line per run (`how`: which parameters replayed them), then MAPE and bias per GPU and
// benchmark and over all runs.
std::string node_validation_markdown(const NodeValidation& v, const std::string& source, const std::string& how);

}  // namespace llmco2::evaluation
