// predictor/encoding.h - a configuration as the GNN sees it: node features of the kernel graph, its edges, the global
// features, and the simulator's physics estimate (the offset of the sim-ratio target scaling).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "features/features.h"
#include "graph/kernel_graph.h"
#include "predictor/input.h"
#include "predictor/module.h"

namespace llmco2::predictor {

// Which features a GNN gets (paper Table 6):
//   merged:      one feature set per node, prefill + decode summed, no hardware features (NNLQP, "no phase split")
//   phases:      separate prefill and decode feature sets, no hardware features ("+prefill/decode")
//   llmco2:      phases + each node's Roofline performance and the GPU's roofs and power ("+Roofline")
enum class FeatureSet { merged, phases, llmco2 };
std::string_view feature_set_name(FeatureSet set);
FeatureSet parse_feature_set(std::string_view name);  // throws Error

// The four regression outputs, in this order, in log space.
enum Output { energy_prefill = 0, energy_decode = 1, latency_prefill = 2, latency_decode = 3 };
inline constexpr int kOutputs = 4;

struct EncodedGraph {
  int nodes = 0;
  std::vector<float> x;                        // nodes x node_width, row-major, before normalisation
  std::vector<std::pair<int, int>> edges;      // source -> destination
  std::vector<float> globals;                  // global_width, before normalisation
  std::array<double, kOutputs> physics_log{};  // log of the calibrated simulator's estimate (0 where it is 0)
  bool has_decode = false;                     // gen > 1: there is a decode phase
};

// log(1 + x) of a non-negative magnitude (negatives clamp to 0): how every count, size and rate enters a model.
float log_feature(double value);

int node_width(FeatureSet set);
int global_width(FeatureSet set);
// Names of the node and global feature columns, for the model file and docs.
std::vector<std::string> node_feature_names(FeatureSet set);
std::vector<std::string> global_feature_names(FeatureSet set);

// Encodes a configuration (its request, scenario and batch scale); `params` give the physics estimate.
EncodedGraph encode_graph(const PredictorInput& config, FeatureSet set, const SimParams& params);
// The same from the request's kernel graph, its priced nodes and the simulator's result, computed by the caller
// (encode_graph describes the workload itself): into `g`, its storage reused. `setup_columns_kept`: `g` holds an
// encoding of a request of the same setup, whose first kSetupNodeColumns of each node are kept, not recomputed.
void encode_described(const PredictorInput& config, FeatureSet set, const KernelGraph& graph, const GraphFeatures& roof,
                      const SimResult& physics, EncodedGraph& g, bool setup_columns_kept = false);

// encode_graph for the requests of one setup (same_setup), prepared once: the setup's SetupSimulator re-costs its
// kernel-graph template and simulates each request as arithmetic, the nodes are priced on the setup's device
// features, and the encoded graph's storage is reused. One thread at a time.
class SetupEncoder {
 public:
  // Throws Error when the setup is invalid for the model.
  SetupEncoder(const PredictorInput& setup, FeatureSet set, const SimParams& params);
  // encode_graph(config, set, params), bit for bit, for a configuration of the setup; null when the request takes
  // the simulator's plain path (waves, steady state, no KV cache). Throws Error for counts the model rejects. Valid
  // until the next call.
  const EncodedGraph* encode(const PredictorInput& config);

 private:
  std::shared_ptr<const ModelSpec> model_;  // kept alive for simulator_
  std::shared_ptr<const Gpu> gpu_;
  FeatureSet set_;
  SetupSimulator simulator_;
  GraphFeatures roof_;
  EncodedGraph graph_;
  bool encoded_ = false;  // graph_ holds a request of the setup: its setup columns are kept
};

// The first node columns (kernel type, widths, step, repeats, expert kind): the same for every request of a setup
// (model, GPU, GPU count, precision, engine, scenario) in every feature set; the columns after them follow the counts.
inline constexpr int kSetupNodeColumns = kKernelTypeCount + 6;

}  // namespace llmco2::predictor
