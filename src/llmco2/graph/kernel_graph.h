// graph/kernel_graph.h - the kernels of one transformer layer and the tensors between them, with prefill and decode
// costs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/module.h"
#include "graph/request.h"
#include "model/model_spec.h"

namespace llmco2::graph {

// Kernel types, one-hot encoded as node features. Order is part of the feature layout: append only.
enum class KernelType {
  embedding,
  norm,
  linear,
  rope,
  matmul_qk,
  softmax,
  matmul_sv,
  fused_attention,
  add,
  activation,
  router,
  allreduce,
  lm_head
};
inline constexpr int kKernelTypeCount = 13;
std::string_view kernel_type_name(KernelType type);

// What one kernel costs on one GPU over a whole phase (all its steps). Bytes are kept by tensor class.
struct KernelCost {
  double ops = 0;
  double weight_bytes = 0;     // weights (and bias/norm vectors) loaded
  double act_load_bytes = 0;   // activations read
  double act_store_bytes = 0;  // activations written
  double kv_load_bytes = 0;    // KV cache read
  double kv_store_bytes = 0;   // KV cache written
  double net_bytes = 0;        // sent over the GPU network by this GPU
  double tokens = 0;           // token rows the kernel processes in the phase (all steps)
  double dequant_ops = 0;      // of `ops`: dequantising weight-only quantised weights (CUDA cores, not tensor cores)
  // Fused attention: query-key pairs scored and query rows (token x head) over the phase; their quotient is the mean
  // span a query row attends to (KernelWork::keys_per_query). Both add up over layer kinds (a mean layer of sliding
  // and global layers gets the pair-weighted mean span). 0 for every other kernel.
  double score_pairs = 0, query_rows = 0;

  double mem_bytes() const { return weight_bytes + act_load_bytes + act_store_bytes + kv_load_bytes + kv_store_bytes; }
  double keys_per_query() const { return query_rows > 0 ? score_pairs / query_rows : 0.0; }
  KernelCost& operator+=(const KernelCost& o) {
    ops += o.ops, weight_bytes += o.weight_bytes, act_load_bytes += o.act_load_bytes;
    act_store_bytes += o.act_store_bytes, kv_load_bytes += o.kv_load_bytes, kv_store_bytes += o.kv_store_bytes;
    net_bytes += o.net_bytes, tokens += o.tokens, dequant_ops += o.dequant_ops;
    score_pairs += o.score_pairs, query_rows += o.query_rows;
    return *this;
  }
  KernelCost scaled(double f) const {
    return {ops * f,           weight_bytes * f,   act_load_bytes * f, act_store_bytes * f,
            kv_load_bytes * f, kv_store_bytes * f, net_bytes * f,      tokens * f,
            dequant_ops * f,   score_pairs * f,    query_rows * f};
  }
};

struct KernelNode {
  std::string kernel;  // q_proj, fused_attention, allreduce, ...
  KernelType type = KernelType::linear;
  std::string expert;                 // "" for dense kernels, "routed" or "shared" for MoE experts
  std::string block;                  // the residual block it belongs to: "attn", "mlp", "mamba" or "parallel"
  long d_in = 0;                      // per GPU: input width, weight rows
  long d_out = 0;                     // per GPU: output width, weight columns
  double experts_loaded_prefill = 0;  // routed experts: distinct experts whose weights a prefill loads
  double experts_loaded_decode = 0;   // routed experts: distinct experts loaded per decode step (mean)
  double layer_share = 1;             // share of the model's layers that run this kernel (DeepSeek's MoE nodes: 58/61)
  KernelCost prefill;
  KernelCost decode;

  const KernelCost& cost(Phase phase) const { return phase == Phase::prefill ? prefill : decode; }
  const double& experts_loaded(Phase phase) const {
    return phase == Phase::prefill ? experts_loaded_prefill : experts_loaded_decode;
  }
};

struct PhaseTotals {
  double ops = 0, mem_bytes = 0, net_bytes = 0;
};

// The graph of one layer. Node values are per GPU for one layer (the mean over the model's layers, so that
// layers x node values gives the exact sum when layers differ, e.g. Gemma2's local and global layers). When layer
// kinds differ in their kernels (dense and MoE FFNs, Mamba and attention mixers), the graph is the union of their
// kernels: a kernel absent from some layers counts zero there, and its layer_share says how many layers run it.
struct KernelGraph {
  int layers = 0;
  int gpus = 1;
  std::vector<KernelNode> nodes;
  std::vector<std::pair<int, int>> edges;  // data dependencies, source -> destination node index
  std::vector<KernelNode> step_nodes;      // once per step, outside the layers: embedding, final_norm, lm_head

  // Over all layers, the step kernels and all GPUs, for the whole phase.
  PhaseTotals totals(Phase phase) const;
};

// Builds the graph of `model` serving `request`. Validates the request first (throws Error).
KernelGraph build_kernel_graph(const ModelSpec& model, const Request& request);
// The same, the mean layer always built as the union of the layer kinds, even of one kind: the reference that
// build_kernel_graph's direct path for single-kind models is tested against.
KernelGraph build_kernel_graph_by_union(const ModelSpec& model, const Request& request);

}  // namespace llmco2::graph
