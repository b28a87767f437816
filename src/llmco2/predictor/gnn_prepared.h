// predictor/gnn_prepared.h - the GNN's forward pass prepared for the graphs of one setup: gnn_forward's arithmetic in
// its order, bit for bit, without its allocations and without redoing the sums over the columns the setup fixes.
#pragma once

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "predictor/gnn.h"
#include "predictor/module.h"

namespace llmco2::predictor {

// The SAGE layers' weights by input: row k holds input k's weight into each hidden unit (the transposes of
// GnnWeights' [out, in] matrices), the order the prepared pass reads them in.
struct SageWeightsByInput {
  int hidden = 0;
  std::vector<float> self1, neigh1, self2, neigh2;
};

// The weights by input, or nullopt where the prepared pass could not reproduce gnn_forward bit for bit: Eigen built
// for FMA or AVX (other GEMM panels, fused rounding), a hidden width other than 32, 64 or 128, weights that are not
// all finite. gnn_forward's products are then Eigen's SSE panels of 8 rows: each entry a sum over the inputs in
// order, a product then a sum, from +0.
std::optional<SageWeightsByInput> sage_weights_by_input(const GnnWeights& weights);

// gnn_forward for the graphs of one shape: the same nodes, edges and first `fixed_columns` node columns (a setup's
// requests: kSetupNodeColumns). Holds the standardised fixed columns, layer 1's sums over them and its buffers;
// one thread at a time. `by_input` must be sage_weights_by_input(weights) and outlive the pass.
class PreparedGnnPass {
 public:
  // `first`: a graph of the shape (at least 2 nodes); `avx`: use 8-wide vectors where the CPU has them (the same
  // results: every sum keeps its order).
  PreparedGnnPass(const GnnWeights& weights, const SageWeightsByInput& by_input, const EncodedGraph& first,
                  int fixed_columns, bool avx = true);
  // Whether `graph` has the pass's shape (nodes, edges, fixed columns).
  bool fits(const EncodedGraph& graph) const;
  // gnn_forward(weights, graph), bit for bit, for a graph that fits.
  std::array<double, kOutputs> forward(const GnnWeights& weights, const EncodedGraph& graph);

  // out[j] += a[k] * w[k * hidden + j] for k in [k0, k1) in order and every j < hidden (zero inputs skipped: they add
  // +-0 to sums that are never -0); w row-major [inputs, hidden].
  using AddProducts = void (*)(const float* a, int k0, int k1, const float* w, float* out);

 private:
  void index_in_neighbours();
  void find_copies(const EncodedGraph& graph);
  void standardise(const EncodedGraph& graph, int c0);
  void neighbour_mean(const std::vector<float>& h, int width, int c0, std::vector<float>& out) const;
  void add_products_of(const std::vector<float>& a, int k0, int width, const std::vector<float>& w,
                       std::vector<float>& sums);
  void add_layer(const std::vector<float>& a, const std::vector<float>& a_mean, int k0, int width,
                 const std::vector<float>& self_w, const std::vector<float>& neigh_w);
  // rows[i] = relu(self[i] + neigh[i] + bias) over the hidden units.
  void combine(const Eigen::VectorXf& bias);

  const SageWeightsByInput& by_input_;
  AddProducts add_;
  int nodes_, width_, fixed_, hidden_;
  std::vector<float> fixed_x_;  // nodes x fixed_: the first graph's fixed columns, raw (fits() compares them)
  std::vector<std::pair<int, int>> edges_;
  std::vector<float> degree_;
  std::vector<int> in_start_,
      in_from_;  // node i's in-neighbours: in_from_[in_start_[i] .. in_start_[i + 1]), in edge order
  std::vector<int> twin_, copy_of_;  // see index_in_neighbours, find_copies
  const Standardiser& norm_;
  std::vector<float> x_, x_mean_;                  // nodes x width_: standardised inputs and their in-neighbour means
  std::vector<float> self_prefix_, neigh_prefix_;  // nodes x hidden: layer 1's sums over the fixed columns
  std::vector<float> self_, neigh_, h1_, h1_mean_, h2_;  // nodes x hidden
};

}  // namespace llmco2::predictor
