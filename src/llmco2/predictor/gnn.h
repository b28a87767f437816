// predictor/gnn.h - the LLMCO2 GraphSAGE network's weights and its forward pass in plain Eigen (no libtorch at
// prediction time): 2 SAGE convolutions (mean aggregation over in-neighbours), mean pooling, concatenation with the
// global features, 2 linear layers; 4 outputs in log space (prefill/decode energy and latency).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "predictor/encoding.h"
#include "predictor/model_file.h"
#include "predictor/module.h"

namespace llmco2::predictor {

// log:       the network predicts log(value)
// sim_ratio: the network predicts log(value / calibrated simulator's estimate)
enum class TargetScaling { log, sim_ratio };
std::string_view target_scaling_name(TargetScaling scaling);
TargetScaling parse_target_scaling(std::string_view name);  // throws Error

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Standardiser {
  std::vector<float> mean, scale;  // (x - mean) / scale, per column
};

struct GnnWeights {
  FeatureSet features = FeatureSet::llmco2;
  TargetScaling scaling = TargetScaling::log;
  bool phase_outputs = true;  // false: trained on totals only (NNLQP); only the total is meaningful
  int hidden = 64;
  Standardiser node_norm, global_norm;
  // Linear layers in torch's layout: weight [out, in], bias [out].
  RowMatrix sage1_self, sage1_neigh, sage2_self, sage2_neigh, head1, head2;
  Eigen::VectorXf sage1_bias, sage2_bias, head1_bias, head2_bias;
  Json info;  // training facts: data, seed, epochs, validation error
};

// The network's 4 outputs for one graph, in log space, offsets included.
std::array<double, kOutputs> gnn_forward(const GnnWeights& weights, const EncodedGraph& graph);
// What follows the SAGE layers: the mean over the nodes of `h2` (nodes x hidden, row-major), the global features,
// the two linear layers and the offsets.
std::array<double, kOutputs> gnn_readout(const GnnWeights& weights, const float* h2, int nodes,
                                         const EncodedGraph& graph);

ModelFile gnn_to_file(const GnnWeights& weights);
// Checks kind, feature widths and every tensor shape; throws Error naming `source`.
GnnWeights gnn_from_file(const ModelFile& file, const std::string& source);

}  // namespace llmco2::predictor
