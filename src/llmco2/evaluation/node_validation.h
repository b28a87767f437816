// evaluation/node_validation.h - MLPerf Inference power runs (8-GPU nodes at the wall, TensorRT-LLM, Offline: every
// query at once; Server: Poisson arrivals at the submitted rate) replayed through the serving simulation at node
// scope, and the simulated energy per output token and throughput scored against the measured ones.
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
};

struct NodeValidation {
  std::vector<NodeValidationRow> rows;
  std::vector<std::pair<size_t, std::string>> skipped;  // row index and why it was not replayed
};

// Replays every row of `rows` that carries the node_wall_power caveat and that `chosen` accepts.
NodeValidation validate_node_rows(const std::vector<DatasetRow>& rows,
                                  const std::function<bool(const DatasetRow&)>& chosen, const SimParams& params,
                                  bool progress);

Accuracy node_energy_accuracy(const std::vector<NodeValidationRow>& rows);
// Offline rows only: a Server run's throughput is the rate it was offered.
Accuracy node_throughput_accuracy(const std::vector<NodeValidationRow>& rows);

// A markdown table with one line per run (`how`: which parameters replayed them), then MAPE and bias per GPU and
// benchmark and over all runs.
std::string node_validation_markdown(const NodeValidation& v, const std::string& source, const std::string& how);

}  // namespace llmco2::evaluation
