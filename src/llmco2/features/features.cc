// features/features.cc - Roofline features per node and phase.
#include "features/features.h"

namespace llmco2::features {
namespace {

bool is_matrix_kernel(KernelType type) {
  return type == KernelType::linear || type == KernelType::router || type == KernelType::lm_head;
}
bool is_attention_matrix_kernel(KernelType type) {
  return type == KernelType::matmul_qk || type == KernelType::matmul_sv || type == KernelType::fused_attention;
}

NodeFeatures node_features(const KernelNode& node, const Roofs& roofs) {
  const auto point = [&](const KernelCost& c) { return roofline(c.ops, c.mem_bytes(), c.net_bytes, roofs); };
  return {point(node.prefill), point(node.decode)};
}

}  // namespace

Roofs kernel_roofs(KernelType type, const GraphFeatures& f, const Gpu& gpu) {
  Roofs roofs;
  roofs.peak_ops_per_s = is_matrix_kernel(type)             ? f.matrix_peak.ops_per_s
                         : is_attention_matrix_kernel(type) ? f.attention_peak.ops_per_s
                                                            : f.vector_peak_ops_per_s;
  roofs.memory_bytes_per_s = gpu.memory_bandwidth_bytes_per_s;
  roofs.network_bytes_per_s = f.network ? f.network->bandwidth_bytes_per_s : 0.0;
  return roofs;
}

GraphFeatures device_features(const Gpu& gpu, const Request& request) {
  GraphFeatures f;
  f.matrix_peak = gpu.matrix_peak(request.precision.compute_dtype());
  f.block_scaled_gemms =
      request.precision.block_scaled && !f.matrix_peak.cuda_cores && dtype_bytes(f.matrix_peak.dtype) == 1.0;
  // A derived 16-bit type (bf16 for a w8a8 checkpoint) is the GPU's own 16-bit type, as engines run it.
  DType attention = request.precision.attention_dtype();
  if (attention == DType::bf16 && !is_wide(request.precision.activations)) attention = gpu.sixteen_bit();
  f.attention_peak = gpu.matrix_peak(attention);
  f.vector_peak_ops_per_s = gpu.vector_peak_ops_per_s();
  if (request.gpus > 1) f.network = gpu.network_link(request.gpus);
  for (const auto& note : {f.matrix_peak.note, f.attention_peak.note})
    if (!note.empty() && (f.notes.empty() || f.notes.back() != note)) f.notes.push_back(note);
  return f;
}

void price_nodes(const KernelGraph& graph, const Gpu& gpu, GraphFeatures& f) {
  f.nodes.clear();
  f.step_nodes.clear();
  for (const auto& node : graph.nodes) f.nodes.push_back(node_features(node, kernel_roofs(node.type, f, gpu)));
  for (const auto& node : graph.step_nodes)
    f.step_nodes.push_back(node_features(node, kernel_roofs(node.type, f, gpu)));
}

GraphFeatures compute_features(const KernelGraph& graph, const Gpu& gpu, const Request& request) {
  GraphFeatures f = device_features(gpu, request);
  price_nodes(graph, gpu, f);
  return f;
}

}  // namespace llmco2::features
