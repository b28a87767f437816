// graph/graph_template.h - a setup's kernel graph built once and re-costed for each (batch, prompt, gen).
#pragma once

#include <vector>

#include "graph/kernel_graph.h"
#include "graph/layer_kernels.h"
#include "graph/module.h"

namespace llmco2::graph {

// One setup's graph (model, GPU count, precision, attention kernel, expert parallelism) built once, its costs
// re-evaluated for each request's batch, prompt and gen without rebuilding nodes, edges or names: evaluate(request)
// equals build_kernel_graph(model, request) bit for bit (tests/graph/kernel_graph_test.cc). The model must outlive it.
class KernelGraphTemplate {
 public:
  // Validates the setup (throws Error).
  KernelGraphTemplate(const ModelSpec& model, const Request& setup);
  ~KernelGraphTemplate();
  KernelGraphTemplate(KernelGraphTemplate&&) noexcept;

  // The graph of `request`: the setup's with other counts (the caller validates them, validate_request). Valid
  // until the next call.
  const KernelGraph& evaluate(const Request& request);
  // The phase shapes of the last evaluated request (of the setup until then).
  const PhaseShape& shape(Phase phase) const { return phase == Phase::prefill ? prefill_ : decode_; }

 private:
  struct Kind;
  // A node of the union being summed: LayerUnion's arithmetic without the node's names.
  struct UnionNode {
    KernelCost prefill, decode;
    double experts_loaded_prefill = 0, experts_loaded_decode = 0;
    bool seen = false;  // a kind has set its experts loaded (the first kind that has the node, as LayerUnion keeps)
  };
  void refresh_union();

  const ModelSpec& model_;
  PhaseShape prefill_, decode_;
  KernelGraph graph_;
  std::vector<Kind> kinds_;
  std::vector<int> order_;        // union node placed at i <- node order_[i] before ordering (one kind: empty)
  std::vector<UnionNode> union_;  // scratch: the union's nodes before ordering
};

}  // namespace llmco2::graph
