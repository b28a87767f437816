// graph/graph_builder.h - what the layer builders share: node appending, the layer's context, norms, residuals.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/layer_kernels.h"

namespace llmco2 {

using CostFn = std::function<KernelCost(const PhaseShape&)>;

// Appends nodes with both phases' costs and the edges from their inputs; nodes join the current residual block.
class GraphBuilder {
 public:
  explicit GraphBuilder(const Request& r)
      : prefill_(phase_shape(Phase::prefill, r)), decode_(phase_shape(Phase::decode, r)) {}

  int add(std::string kernel, KernelType type, std::vector<int> inputs, const CostFn& cost, long d_in = 0,
          long d_out = 0, std::string expert = "");
  void begin_block(std::string block) { block_ = std::move(block); }
  KernelNode& node(int index) { return graph_.nodes[index]; }
  const PhaseShape& shape(Phase phase) const { return phase == Phase::prefill ? prefill_ : decode_; }
  KernelGraph take() { return std::move(graph_); }

 private:
  PhaseShape prefill_, decode_;
  KernelGraph graph_;
  std::string block_;
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
int add_residual(GraphBuilder& b, const LayerContext& c, const std::string& name, std::vector<int> inputs,
                 int residual, int summed_inputs);

// The mixers other than standard attention, each returning the node whose output the residual add takes.
int add_mla_attention(GraphBuilder& b, const LayerContext& c, int norm);  // graph/mla_layer.cc
int add_mamba_mixer(GraphBuilder& b, const LayerContext& c, int norm);    // graph/mamba_layer.cc

}  // namespace llmco2
