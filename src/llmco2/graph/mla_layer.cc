// graph/mla_layer.cc - multi-head latent attention (DeepSeek-V2/V3): prefill expanded, decode absorbed (vLLM's MLA).
#include "graph/graph_builder.h"

namespace llmco2::graph {
namespace {

// A linear kernel node: d_in -> d_out, optionally writing the KV cache.
CostFn linear(long d_in, long d_out, bool stores_kv = false) {
  return [=](const PhaseShape& s) { return linear_cost(s, d_in, d_out, false, stores_kv); };
}

// q_a_proj -> q_a_norm -> q_b_proj (q_lora_rank), or q_proj. q_a_proj is replicated over the GPUs (vLLM's
// fused_qkv_a_proj runs unsplit); q_b_proj is column-parallel. Returns the node producing q.
int add_mla_query(GraphBuilder& b, const LayerContext& c, int norm) {
  const MlaSpec& mla = *c.m.mla;
  const long h = c.m.hidden, q_width = static_cast<long>(c.m.heads / c.n()) * mla.qk_head_dim();
  if (mla.q_lora_rank == 0) return b.add("q_proj", KernelType::linear, {norm}, linear(h, q_width), h, q_width);
  const long rank = mla.q_lora_rank;
  const int q_a = b.add("q_a_proj", KernelType::linear, {norm}, linear(h, rank), h, rank);
  const int q_norm = add_norm(b, c, "q_a_norm", q_a, rank);
  return b.add("q_b_proj", KernelType::linear, {q_norm}, linear(rank, q_width), rank, q_width);
}

}  // namespace

// q path; kv_a_proj_with_mqa (replicated: the latent and k_pe of each token, written to the cache) -> kv_a_norm ->
// kv_b_proj; rope on q_pe and k_pe; attention; o_proj (row-parallel). Returns the o_proj node.
int add_mla_attention(GraphBuilder& b, const LayerContext& c, int norm) {
  const MlaSpec mla = *c.m.mla;
  const LayerAttention layer_attention = c.attention();
  const int heads = c.m.heads / c.n();
  const long h = c.m.hidden, cached = mla.cached_elements(), rope = mla.qk_rope_head_dim;
  const long v_width = heads * mla.v_head_dim, kv_b_out = heads * (mla.qk_nope_head_dim + mla.v_head_dim);
  const int q = add_mla_query(b, c, norm);
  const int kv_a = b.add("kv_a_proj", KernelType::linear, {norm}, linear(h, cached, true), h, cached);
  const int kv_norm = add_norm(b, c, "kv_a_norm", kv_a, mla.kv_lora_rank);
  auto shape_for = [=](const PhaseShape& s) {
    return MlaShape{
        heads,          mla.qk_head_dim(),
        mla.v_head_dim, mla.kv_lora_rank,
        rope,           attention_span(s.phase, s.prompt_tokens, s.gen_tokens, s.flash_attention, layer_attention)};
  };
  const int kv_b = b.add(
      "kv_b_proj", KernelType::linear, {kv_norm},
      [=](const PhaseShape& s) { return mla_kv_b_cost(s, shape_for(s), mla.qk_nope_head_dim); }, mla.kv_lora_rank,
      kv_b_out);
  const int rope_node = b.add(
      "rope", KernelType::rope, {q, kv_a}, [=](const PhaseShape& s) { return rope_cost(s, heads * rope, rope); },
      heads * rope + rope, heads * rope + rope);
  const int attention = b.add(
      "fused_attention", KernelType::fused_attention, {rope_node, kv_b},
      [=](const PhaseShape& s) { return mla_attention_cost(s, shape_for(s)); }, v_width, v_width);
  return b.add("o_proj", KernelType::linear, {attention}, linear(v_width, h), v_width, h);
}

}  // namespace llmco2::graph
