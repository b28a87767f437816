// model/model_spec.cc - parameter counts of an architecture.
#include "model/model_spec.h"

#include <algorithm>

namespace llmco2 {
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
  for (const auto& a : layer_attention) best = std::max(best, a.kv_heads);
  return best;
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

double ModelSpec::dense_mlp_params() const { return mlp_params(*this, intermediate); }

double ModelSpec::expert_params() const { return moe ? mlp_params(*this, moe->expert_intermediate) : 0.0; }

double ModelSpec::shared_expert_params() const {
  if (!moe || moe->shared_intermediate == 0) return 0.0;
  return mlp_params(*this, moe->shared_intermediate) + static_cast<double>(hidden);  // + sigmoid gate h -> 1
}

double ModelSpec::router_params() const {
  if (!moe) return 0.0;
  return static_cast<double>(hidden) * moe->experts + (moe->router_bias ? moe->experts : 0);
}

double ModelSpec::norm_params() const {
  return norms_per_layer * static_cast<double>(hidden) * (norm == NormKind::layer_norm ? 2.0 : 1.0);
}

double ModelSpec::layer_params(int layer) const {
  const double ffn = moe ? moe->experts * expert_params() + shared_expert_params() + router_params()
                         : dense_mlp_params();
  return attention_params(layer_attention.at(layer)) + ffn + norm_params();
}

double ModelSpec::embedding_params() const { return static_cast<double>(vocab) * static_cast<double>(hidden); }

double ModelSpec::lm_head_params() const { return static_cast<double>(vocab) * static_cast<double>(hidden); }

double ModelSpec::total_params() const {
  double total = embedding_params() + (tied_embeddings ? 0.0 : lm_head_params());
  total += static_cast<double>(hidden) * (norm == NormKind::layer_norm ? 2.0 : 1.0);  // final norm
  for (int i = 0; i < layers; ++i) total += layer_params(i);
  return total;
}

double ModelSpec::head_params() const {
  return embedding_params() + (tied_embeddings ? 0.0 : lm_head_params());
}

double ModelSpec::routed_expert_params() const { return moe ? layers * moe->experts * expert_params() : 0.0; }

double ModelSpec::weight_bytes(const Precision& p) const {
  const double head = head_params(), experts = routed_expert_params();
  const double rest = total_params() - head - experts;
  return head * dtype_bytes(p.unquantised_dtype()) + experts * p.expert_bytes_per_element() +
         rest * p.weight_bytes_per_element();
}

Precision ModelSpec::precision_for(std::string_view spec) const {
  return precision_or_default(spec, default_precision, default_dtype);
}

}  // namespace llmco2
