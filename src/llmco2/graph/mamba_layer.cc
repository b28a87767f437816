// graph/mamba_layer.cc - the Mamba-2 mixer: in_proj, causal conv1d, the SSD scan, gated norm, out_proj.
#include "graph/graph_builder.h"

namespace llmco2::graph {
namespace {

// The mixer's heads and groups on one GPU: heads split; groups split too, or one group per GPU when GPUs
// outnumber them (replicated, as vLLM's MambaMixer2 does).
MambaSpec per_gpu(const MambaSpec& m, int gpus) {
  MambaSpec local = m;
  local.heads = m.heads / gpus;
  local.groups = m.groups >= gpus ? m.groups / gpus : 1;
  return local;
}

}  // namespace

// in_proj (column-parallel: z, x, B, C, dt) -> conv1d (x, B, C) -> SSD scan -> gated norm (with z) -> out_proj
// (row-parallel). Returns the out_proj node.
int add_mamba_mixer(GraphBuilder& b, const LayerContext& c, int norm) {
  const MambaSpec m = per_gpu(*c.m.mamba, c.n());
  const long h = c.m.hidden, width = m.in_proj_width(), inner = m.inner(), channels = m.conv_channels();
  const bool bias = m.proj_bias;
  const int in_proj = b.add(
      "in_proj", KernelType::linear, {norm}, [=](const PhaseShape& s) { return linear_cost(s, h, width, bias, false); },
      h, width);
  const int conv = b.add(
      "conv1d", KernelType::activation, {in_proj}, [=](const PhaseShape& s) { return mamba_conv_cost(s, m); }, channels,
      channels);
  const int scan = b.add(
      "ssd_scan", KernelType::fused_attention, {conv}, [=](const PhaseShape& s) { return ssd_scan_cost(s, m); },
      channels, inner);
  const int gated = b.add(
      "gated_norm", KernelType::norm, {scan, in_proj}, [=](const PhaseShape& s) { return gated_norm_cost(s, inner); },
      inner, inner);
  return b.add(
      "out_proj", KernelType::linear, {gated},
      [=](const PhaseShape& s) { return linear_cost(s, inner, h, bias, false); }, inner, h);
}

}  // namespace llmco2::graph
