// model/model_spec.cc - parameter counts of an architecture.
#include "model/model_spec.h"

#include <algorithm>

namespace llmco2::model {
namespace {

double mlp_params(const ModelSpec& m, long width) {
  const double h = static_cast<double>(m.hidden), w = static_cast<double>(width);
  const double matrices = (m.mlp == MlpKind::gated ? 3.0 : 2.0) * h * w;
  const double biases = m.mlp_bias ? (m.mlp == MlpKind::gated ? 2.0 : 1.0) * w + h : 0.0;
  return matrices + biases;
}

}  // namespace

long ModelSpec::max_kv_heads() const {
  int best = 0;
  for (const auto& layer : layer_specs)
    if (layer.mixer == MixerKind::attention || layer.mixer == MixerKind::mla)
      best = std::max(best, layer.attention.kv_heads);
  return best;
}

int ModelSpec::layers_with(FfnKind ffn) const {
  return static_cast<int>(
      std::count_if(layer_specs.begin(), layer_specs.end(), [&](const LayerSpec& l) { return l.ffn == ffn; }));
}

int ModelSpec::layers_with(MixerKind mixer) const {
  return static_cast<int>(
      std::count_if(layer_specs.begin(), layer_specs.end(), [&](const LayerSpec& l) { return l.mixer == mixer; }));
}

double ModelSpec::attention_params(const LayerAttention& attention) const {
  const double h = static_cast<double>(hidden);
  const double q_width = static_cast<double>(heads) * head_dim;
  const double kv_width = static_cast<double>(attention.kv_heads) * head_dim;
  double params = h * q_width + 2.0 * h * kv_width + q_width * h;
  if (qkv_bias) params += q_width + 2.0 * kv_width;
  if (o_bias) params += h;
  return params;
}

double ModelSpec::mla_params() const {
  if (!mla) return 0.0;
  const double h = static_cast<double>(hidden), n = heads, q_rank = static_cast<double>(mla->q_lora_rank);
  const double kv_rank = static_cast<double>(mla->kv_lora_rank);
  const double q_width = n * static_cast<double>(mla->qk_head_dim());
  const double q = q_rank > 0 ? h * q_rank + q_rank + q_rank * q_width : h * q_width;  // q_a, its norm, q_b
  const double kv_a = h * static_cast<double>(mla->cached_elements()) + kv_rank;       // kv_a_proj_with_mqa, norm
  const double kv_b = kv_rank * n * static_cast<double>(mla->qk_nope_head_dim + mla->v_head_dim);
  return q + kv_a + kv_b + n * static_cast<double>(mla->v_head_dim) * h;  // + o_proj
}

double ModelSpec::mamba_params() const {
  if (!mamba) return 0.0;
  const double h = static_cast<double>(hidden), inner = static_cast<double>(mamba->inner());
  const double channels = static_cast<double>(mamba->conv_channels());
  const double width = static_cast<double>(mamba->in_proj_width());
  const double in_proj = h * width + (mamba->proj_bias ? width : 0.0);
  const double conv = channels * mamba->conv_kernel + (mamba->conv_bias ? channels : 0.0);
  const double per_head = 3.0 * mamba->heads;  // dt_bias, A_log, D
  const double out_proj = inner * h + (mamba->proj_bias ? h : 0.0);
  return in_proj + conv + per_head + inner + out_proj;  // + the gated RMSNorm's gain over inner
}

double ModelSpec::mixer_params(const LayerSpec& layer) const {
  switch (layer.mixer) {
    case MixerKind::attention:
      return attention_params(layer.attention);
    case MixerKind::mla:
      return mla_params();
    case MixerKind::mamba:
      return mamba_params();
    case MixerKind::none:
      return 0.0;
  }
  return 0.0;
}

double ModelSpec::dense_mlp_params() const { return mlp_params(*this, intermediate); }

double ModelSpec::expert_params() const { return moe ? mlp_params(*this, moe->expert_intermediate) : 0.0; }

double ModelSpec::shared_expert_params() const {
  if (!moe || moe->shared_intermediate == 0) return 0.0;
  return mlp_params(*this, moe->shared_intermediate) + (moe->shared_gate ? static_cast<double>(hidden) : 0.0);
}

double ModelSpec::router_params() const {
  if (!moe) return 0.0;
  return static_cast<double>(hidden) * moe->experts + (moe->router_bias ? moe->experts : 0);
}

double ModelSpec::norm_params() const {
  return norms_per_layer * static_cast<double>(hidden) * (norm == NormKind::layer_norm ? 2.0 : 1.0);
}

double ModelSpec::layer_params(int layer) const {
  const LayerSpec& spec = layer_specs.at(layer);
  double ffn = 0.0;
  if (spec.ffn == FfnKind::dense) ffn = dense_mlp_params();
  if (spec.ffn == FfnKind::moe) ffn = moe->experts * expert_params() + shared_expert_params() + router_params();
  const bool both_blocks = spec.mixer != MixerKind::none && spec.ffn != FfnKind::none;
  return mixer_params(spec) + ffn + norm_params() * (both_blocks ? 1.0 : 0.5);  // a one-block layer: its half
}

double ModelSpec::embedding_params() const { return static_cast<double>(vocab) * static_cast<double>(hidden); }

double ModelSpec::lm_head_params() const {
  const double v = static_cast<double>(vocab);
  return v * static_cast<double>(hidden) + (lm_head_bias ? v : 0.0);
}

double ModelSpec::total_params() const {
  double total = embedding_params() + (tied_embeddings ? 0.0 : lm_head_params());
  total += static_cast<double>(hidden) * (norm == NormKind::layer_norm ? 2.0 : 1.0);  // final norm
  for (int i = 0; i < layers; ++i) total += layer_params(i);
  return total;
}

double ModelSpec::head_params() const { return embedding_params() + (tied_embeddings ? 0.0 : lm_head_params()); }

double ModelSpec::routed_expert_params() const {
  return moe ? layers_with(FfnKind::moe) * moe->experts * expert_params() : 0.0;
}

double ModelSpec::active_params() const {
  if (!moe) return total_params();
  return total_params() - (moe->experts - moe->experts_per_token) * expert_params() * layers_with(FfnKind::moe);
}

double ModelSpec::weight_bytes(const Precision& p) const {
  const double head = head_params(), experts = routed_expert_params();
  const double rest = total_params() - head - experts;
  return head * dtype_bytes(p.unquantised_dtype()) + experts * p.expert_bytes_per_element() +
         rest * p.weight_bytes_per_element();
}

Precision ModelSpec::precision_for(std::string_view spec) const {
  return precision_or_default(spec, default_precision, default_dtype);
}

}  // namespace llmco2::model
