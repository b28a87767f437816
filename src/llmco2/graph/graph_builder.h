// graph/graph_builder.h - what the layer builders share: node appending, the layer's context, norms, residuals.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/layer_kernels.h"
#include "graph/module.h"

namespace llmco2::graph {

// A node's cost over a phase of the given shape. Builders capture only values (never the builder's locals by
// reference): a recorded layer re-evaluates them for other requests (graph/kernel_graph.h, KernelGraphTemplate).
using CostFn = std::function<KernelCost(const PhaseShape&)>;
// Distinct routed experts a node loads per step in a phase of the given shape.
using LoadFn = std::function<double(const PhaseShape&)>;

// What a layer's nodes compute from the phase shapes, parallel to its nodes: the graph of another request with the
// same GPUs and precision is the same nodes with these re-evaluated (refresh_layer).
struct LayerRecipe {
  std::vector<CostFn> costs;
  std::vector<std::pair<int, LoadFn>> loads;  // node index, experts loaded per step
};
// Sets the costs (and experts loaded) of `layer`'s nodes for the phase shapes, as the builder did.
void refresh_layer(KernelGraph& layer, const LayerRecipe& recipe, const PhaseShape& prefill, const PhaseShape& decode);

// Appends nodes with both phases' costs and the edges from their inputs; nodes join the current residual block.
// When recording, it keeps each node's cost function for refresh_layer.
class GraphBuilder {
 public:
  explicit GraphBuilder(const Request& r, bool record = false)
      : prefill_(phase_shape(Phase::prefill, r)), decode_(phase_shape(Phase::decode, r)), record_(record) {}

  // `cost` is any callable KernelCost(const PhaseShape&); it becomes a CostFn only when recording (a std::function
  // of a large capture allocates, which graphs built once need not pay).
  template <typename Cost>
  int add(std::string kernel, KernelType type, const std::vector<int>& inputs, Cost&& cost, long d_in = 0,
          long d_out = 0, std::string expert = "") {
    graph_.nodes.push_back(
        {std::move(kernel), type, std::move(expert), block_, d_in, d_out, 0, 0, 1, cost(prefill_), cost(decode_)});
    if (record_) recipe_.costs.emplace_back(std::forward<Cost>(cost));
    return link_last(inputs);
  }
  // Sets the node's experts loaded per step in each phase (routed experts).
  void set_experts_loaded(int index, const LoadFn& per_step);
  void begin_block(std::string block) { block_ = std::move(block); }
  const PhaseShape& shape(Phase phase) const { return phase == Phase::prefill ? prefill_ : decode_; }
  KernelGraph take() { return std::move(graph_); }
  LayerRecipe take_recipe() { return std::move(recipe_); }

 private:
  int link_last(const std::vector<int>& inputs);  // adds the edges from `inputs` to the last node; returns its index

  PhaseShape prefill_, decode_;
  KernelGraph graph_;
  std::string block_;
  bool record_ = false;
  LayerRecipe recipe_;
};

// One layer being built: the model, the request and the layer's kind.
struct LayerContext {
  const ModelSpec& m;
  const Request& r;
  const LayerSpec& layer;
  int n() const { return r.gpus; }
  const LayerAttention& attention() const { return layer.attention; }
  long q_width() const { return static_cast<long>(m.heads / n()) * m.head_dim; }
  long kv_width() const { return static_cast<long>(kv_heads_per_gpu(attention().kv_heads, n())) * m.head_dim; }
  bool layer_norm() const { return m.norm == NormKind::layer_norm; }
};

// A replicated norm over `width` (the hidden size unless given). Returns the node.
int add_norm(GraphBuilder& b, const LayerContext& c, const std::string& name, int input, long width = 0);

// Ends a residual block: [allreduce] -> add. `inputs` are the block's outputs; `residual` the skip connection.
int add_residual(GraphBuilder& b, const LayerContext& c, const std::string& name, std::vector<int> inputs, int residual,
                 int summed_inputs);

// The mixers other than standard attention, each returning the node whose output the residual add takes.
int add_mla_attention(GraphBuilder& b, const LayerContext& c, int norm);  // graph/mla_layer.cc
int add_mamba_mixer(GraphBuilder& b, const LayerContext& c, int norm);    // graph/mamba_layer.cc

}  // namespace llmco2::graph
