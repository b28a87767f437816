// graph/layer_kernels.cc - operation and byte counts of each kernel kind, per GPU, over a whole phase.
#include "graph/layer_kernels.h"

#include <algorithm>
#include <cmath>

namespace llmco2::graph {
namespace {

constexpr double kNormOpsPerElement = 7;  // square, sum, mean, rsqrt, scale, gain (+ LayerNorm's centring)

double activation_ops(Activation activation) {
  switch (activation) {
    case Activation::relu:
      return 1;  // max(x, 0)
    case Activation::relu2:
      return 2;  // max(x, 0)^2
    case Activation::silu:
      return 5;  // x / (1 + exp(-x)): negate, exp, add, divide, multiply
    case Activation::gelu:
      return 8;  // erf form
    case Activation::gelu_tanh:
      return 9;  // 0.5 x (1 + tanh(c (x + 0.044715 x^3)))
  }
  return 1;
}

}  // namespace

PhaseShape phase_shape(Phase phase, const Request& r) {
  PhaseShape s;
  s.phase = phase;
  set_phase_counts(s, r);
  s.gpus = r.gpus;
  const Precision& p = r.precision;
  s.weight_bytes = p.weight_bytes_per_element();
  s.act_bytes = dtype_bytes(p.stored_activation_dtype());
  const double narrow_bytes = dtype_bytes(p.activations);
  s.gemm_read_bytes = std::min(narrow_bytes, s.act_bytes);
  s.gemm_input_bytes = narrow_bytes < s.act_bytes ? s.act_bytes + 2.0 * narrow_bytes : s.act_bytes;
  s.kv_bytes = dtype_bytes(p.kv_cache);
  s.expert_weight_bytes = p.expert_bytes_per_element();
  s.head_weight_bytes = dtype_bytes(p.unquantised_dtype());
  s.state_bytes = s.head_weight_bytes;
  s.dequant_ops_per_weight = dequant_ops_per_weight(p.weights, p.compute_dtype());
  s.expert_dequant_ops_per_weight = dequant_ops_per_weight(p.expert_dtype(), p.compute_dtype());
  return s;
}

void set_phase_counts(PhaseShape& s, const Request& r) {
  s.batch = static_cast<double>(r.batch);
  s.steps = s.phase == Phase::prefill ? 1.0 : static_cast<double>(r.gen_tokens - 1);
  s.tokens = s.phase == Phase::prefill ? s.batch * static_cast<double>(r.prompt_tokens) : s.batch * s.steps;
  s.prompt_tokens = r.prompt_tokens;
  s.gen_tokens = r.gen_tokens;
  s.flash_attention = r.flash_attention;
}

double dequant_ops_per_weight(DType weights, DType compute) {
  if (is_wide(weights) || tensor_dtype(weights) == tensor_dtype(compute)) return 0;
  return dtype_bytes(weights) < 1.0 ? 3.0 : 2.0;
}

double dequant_ops(double ops_per_weight, double weights, double rows_per_step, double steps) {
  if (ops_per_weight == 0 || steps <= 0 || rows_per_step <= 0) return 0;
  return ops_per_weight * weights * std::ceil(rows_per_step / kDequantRowTile) * steps;
}

namespace {

// Bytes per element a GEMM of `tokens` rows pays for its input (with no routing, quantising before it is the same).
double input_bytes(const PhaseShape& s, GemmInput input) {
  switch (input) {
    case GemmInput::quantised_here:
    case GemmInput::quantised_before_routing:
      return s.gemm_input_bytes;
    case GemmInput::already_quantised:
      return s.gemm_read_bytes;
    case GemmInput::sixteen_bit:
      return s.act_bytes;
  }
  return s.act_bytes;
}

}  // namespace

KernelCost linear_cost(const PhaseShape& s, long d_in, long d_out, bool bias, bool stores_kv, GemmInput input) {
  const double in = static_cast<double>(d_in), out = static_cast<double>(d_out);
  KernelCost c;
  c.tokens = s.tokens;
  c.dequant_ops = dequant_ops(s.dequant_ops_per_weight, in * out, s.steps > 0 ? s.tokens / s.steps : 0.0, s.steps);
  c.ops = 2.0 * s.tokens * in * out + (bias ? s.tokens * out : 0.0) + c.dequant_ops;
  c.weight_bytes = s.steps * (in * out * s.weight_bytes + (bias ? out * s.act_bytes : 0.0));
  c.act_load_bytes = s.tokens * in * input_bytes(s, input);
  (stores_kv ? c.kv_store_bytes : c.act_store_bytes) = s.tokens * out * (stores_kv ? s.kv_bytes : s.act_bytes);
  return c;
}

KernelCost norm_cost(const PhaseShape& s, long width, bool layer_norm) {
  const double w = static_cast<double>(width);
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = kNormOpsPerElement * s.tokens * w;
  c.weight_bytes = s.steps * w * s.act_bytes * (layer_norm ? 2.0 : 1.0);  // gain (and bias) vectors
  c.act_load_bytes = s.tokens * w * s.act_bytes;
  c.act_store_bytes = s.tokens * w * s.act_bytes;
  return c;
}

KernelCost add_cost(const PhaseShape& s, long width, int inputs) {
  const double w = static_cast<double>(width);
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = (inputs - 1) * s.tokens * w;
  c.act_load_bytes = inputs * s.tokens * w * s.act_bytes;
  c.act_store_bytes = s.tokens * w * s.act_bytes;
  return c;
}

KernelCost activation_cost(const PhaseShape& s, long width, Activation activation, bool gated) {
  const double w = static_cast<double>(width);
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = (activation_ops(activation) + (gated ? 1.0 : 0.0)) * s.tokens * w;
  c.act_load_bytes = (gated ? 2.0 : 1.0) * s.tokens * w * s.act_bytes;
  c.act_store_bytes = s.tokens * w * s.act_bytes;
  return c;
}

KernelCost rope_cost(const PhaseShape& s, long q_width, long kv_width) {
  const double elements = s.tokens * static_cast<double>(q_width + kv_width);
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = 3.0 * elements;  // x cos + rotate(x) sin
  c.act_load_bytes = elements * s.act_bytes;
  c.act_store_bytes = elements * s.act_bytes;
  return c;
}

KernelCost allreduce_cost(const PhaseShape& s, long width) {
  KernelCost c;
  if (s.gpus <= 1) return c;
  const double n = s.gpus, elements = s.tokens * static_cast<double>(width);
  const double tensor_bytes = elements * s.act_bytes;
  c.tokens = s.tokens;
  c.ops = (n - 1) / n * elements;                               // reduce-scatter additions
  c.net_bytes = 2.0 * (n - 1) / n * tensor_bytes;               // ring: reduce-scatter + all-gather
  c.act_load_bytes = c.net_bytes + (n - 1) / n * tensor_bytes;  // chunks sent + local operands of the additions
  c.act_store_bytes = c.net_bytes;                              // chunks received
  return c;
}

namespace {

// Query-key pairs of the phase over all heads of this GPU.
double score_pairs(const PhaseShape& s, const AttentionShape& a) { return s.batch * a.heads * a.span.computed_keys; }
// Bytes of Q (read) or O (written): one head_dim vector per token and query head.
double query_bytes(const PhaseShape& s, const AttentionShape& a) {
  return s.tokens * a.heads * a.head_dim * s.act_bytes;
}
// Bytes of K (or of V) read from the cache.
double cache_bytes(const PhaseShape& s, const AttentionShape& a) {
  return s.batch * a.span.loaded_keys * a.kv_heads * a.head_dim * s.kv_bytes;
}

}  // namespace

KernelCost fused_attention_cost(const PhaseShape& s, const AttentionShape& a) {
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = score_pairs(s, a) * (4.0 * a.head_dim + kSoftmaxOpsPerElement);  // QK^T and SV (2 d each) + softmax
  c.act_load_bytes = query_bytes(s, a);                                    // Q
  c.kv_load_bytes = 2.0 * cache_bytes(s, a);                               // K and V, once
  c.act_store_bytes = query_bytes(s, a);                                   // O
  c.score_pairs = score_pairs(s, a);
  c.query_rows = s.tokens * a.heads;
  return c;
}

KernelCost mla_attention_cost(const PhaseShape& s, const MlaShape& a) {
  const bool absorbed = s.phase == Phase::decode;
  const double qk = static_cast<double>(absorbed ? a.latent_dim + a.rope_dim : a.qk_dim);
  const double v = static_cast<double>(absorbed ? a.latent_dim : a.v_dim);
  const double pairs = s.batch * a.heads * a.span.computed_keys;
  // Absorbed decode packs one sequence's heads as the query rows of kMlaHeadTile-row MMA tiles: fewer heads still
  // compute whole tiles.
  const double computed_heads =
      absorbed ? std::ceil(a.heads / static_cast<double>(kMlaHeadTile)) * kMlaHeadTile : a.heads;
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = pairs * computed_heads / a.heads * (2.0 * qk + 2.0 * v + kSoftmaxOpsPerElement);  // QK^T, SV, softmax
  c.act_load_bytes = s.tokens * a.heads * qk * s.act_bytes;                                 // Q
  const double rows = s.batch * a.span.loaded_keys;
  if (absorbed) c.kv_load_bytes = rows * qk * s.kv_bytes;  // one latent + rope row per key, shared by all heads
  else c.act_load_bytes += rows * a.heads * (qk + v) * s.act_bytes;  // expanded K and V of every head
  c.act_store_bytes = s.tokens * a.heads * v * s.act_bytes;          // O
  c.score_pairs = pairs;
  c.query_rows = s.tokens * a.heads;
  return c;
}

KernelCost mla_kv_b_cost(const PhaseShape& s, const MlaShape& a, long nope_dim) {
  const long latent = a.latent_dim, heads_out = static_cast<long>(a.heads) * (nope_dim + a.v_dim);
  if (s.phase == Phase::prefill) return linear_cost(s, latent, heads_out, false, false);
  const double weights = static_cast<double>(latent) * static_cast<double>(heads_out);
  const double per_head_in = static_cast<double>(nope_dim + latent),
               per_head_out = static_cast<double>(latent + a.v_dim);
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = 2.0 * s.tokens * weights;                                     // q_nope x W_UK and o_latent x W_UV, per head
  c.weight_bytes = s.steps * weights * s.head_weight_bytes;             // 16-bit copies, read every step
  c.act_load_bytes = s.tokens * a.heads * per_head_in * s.act_bytes;    // q_nope, then the attention's latent output
  c.act_store_bytes = s.tokens * a.heads * per_head_out * s.act_bytes;  // q in latent space, then v
  return c;
}

KernelCost mamba_conv_cost(const PhaseShape& s, const MambaSpec& m) {
  constexpr double kSiluOps = 5;
  const double channels = static_cast<double>(m.conv_channels()), taps = m.conv_kernel;
  const double state = channels * (taps - 1) * s.state_bytes;  // per sequence
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = s.tokens * channels * (2.0 * taps + (m.conv_bias ? 1.0 : 0.0) + kSiluOps);
  c.weight_bytes = s.steps * channels * (taps + (m.conv_bias ? 1.0 : 0.0)) * s.state_bytes;
  c.act_load_bytes = s.tokens * channels * s.act_bytes;
  c.act_store_bytes = s.tokens * channels * s.act_bytes;
  const bool decode = s.phase == Phase::decode;
  c.kv_load_bytes = decode ? s.tokens * state : 0.0;               // each decode token's sequence: read the window...
  c.kv_store_bytes = decode ? s.tokens * state : s.batch * state;  // ...and write it; prefill writes it once
  return c;
}

KernelCost ssd_scan_cost(const PhaseShape& s, const MambaSpec& m) {
  const double heads = m.heads, p = m.head_dim, n = m.state_dim, groups = m.groups;
  const double state = heads * p * n * dtype_bytes(m.ssm_state_dtype);  // per sequence
  KernelCost c;
  c.tokens = s.tokens;
  c.act_load_bytes = s.tokens * (heads * p + 2.0 * groups * n + heads) * s.act_bytes;  // x, B, C, dt
  c.act_store_bytes = s.tokens * heads * p * s.act_bytes;                              // y
  if (s.phase == Phase::decode) {
    c.ops = s.tokens * heads * (5.0 * p * n + 2.0 * p);
    c.kv_load_bytes = s.tokens * state;
    c.kv_store_bytes = s.tokens * state;
    return c;
  }
  const double q = std::min(static_cast<double>(m.chunk_tokens), s.tokens / s.batch);
  c.ops = s.tokens * (heads * (2.0 * q * p + 4.0 * n * p + q + 2.0 * p) + groups * 2.0 * q * n);
  c.kv_store_bytes = s.batch * state;  // the final state of each sequence
  return c;
}

KernelCost gated_norm_cost(const PhaseShape& s, long width) {
  constexpr double kGateOps = 6;  // SiLU(z) 5, times y 1
  KernelCost c = norm_cost(s, width, false);
  c.ops += kGateOps * s.tokens * static_cast<double>(width);
  c.act_load_bytes *= 2;  // y and z
  return c;
}

KernelCost matmul_qk_cost(const PhaseShape& s, const AttentionShape& a) {
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = 2.0 * a.head_dim * score_pairs(s, a);
  c.act_load_bytes = query_bytes(s, a);                 // Q
  c.kv_load_bytes = cache_bytes(s, a);                  // K
  c.act_store_bytes = score_pairs(s, a) * s.act_bytes;  // the score matrix
  return c;
}

KernelCost softmax_cost(const PhaseShape& s, const AttentionShape& a) {
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = kSoftmaxOpsPerElement * score_pairs(s, a);
  c.act_load_bytes = score_pairs(s, a) * s.act_bytes;
  c.act_store_bytes = score_pairs(s, a) * s.act_bytes;
  return c;
}

KernelCost sampler_cost(const PhaseShape& s, long vocab) {
  KernelCost c;
  c.tokens = s.batch * s.steps;
  const double logits = c.tokens * static_cast<double>(vocab);
  c.ops = kSoftmaxOpsPerElement * logits;
  c.act_load_bytes = logits * kSamplerPassBytesPerLogit / 2;
  c.act_store_bytes = logits * kSamplerPassBytesPerLogit / 2;
  return c;
}

KernelCost matmul_sv_cost(const PhaseShape& s, const AttentionShape& a) {
  KernelCost c;
  c.tokens = s.tokens;
  c.ops = 2.0 * a.head_dim * score_pairs(s, a);
  c.act_load_bytes = score_pairs(s, a) * s.act_bytes;  // the score matrix
  c.kv_load_bytes = cache_bytes(s, a);                 // V
  c.act_store_bytes = query_bytes(s, a);               // O
  return c;
}

KernelCost expert_linear_cost(const PhaseShape& s, long d_in, long d_out, bool bias, double experts_loaded_total,
                              double routed_tokens, GemmInput input) {
  const double in = static_cast<double>(d_in), out = static_cast<double>(d_out);
  KernelCost c;
  c.tokens = routed_tokens;
  const double rows_per_expert = experts_loaded_total > 0 ? routed_tokens / experts_loaded_total : 0.0;
  c.dequant_ops = dequant_ops(s.expert_dequant_ops_per_weight, in * out, rows_per_expert, experts_loaded_total);
  c.ops = 2.0 * routed_tokens * in * out + (bias ? routed_tokens * out : 0.0) + c.dequant_ops;
  c.weight_bytes = experts_loaded_total * (in * out * s.expert_weight_bytes + (bias ? out * s.act_bytes : 0.0));
  // The hidden rows are quantised once before routing; each routed row then reads its narrow copy.
  c.act_load_bytes =
      input == GemmInput::quantised_before_routing
          ? s.tokens * in * (s.gemm_input_bytes - s.gemm_read_bytes) + routed_tokens * in * s.gemm_read_bytes
          : routed_tokens * in * input_bytes(s, input);
  c.act_store_bytes = routed_tokens * out * s.act_bytes;
  return c;
}

double expected_distinct_experts(int experts, int top_k, double tokens) {
  const double e = experts, miss = 1.0 - static_cast<double>(top_k) / e;
  return e * (1.0 - std::pow(miss, tokens));
}

double expected_busiest_gpu_experts(int experts, int top_k, double tokens, int gpus) {
  const double p = expected_distinct_experts(experts, top_k, tokens) / experts;
  if (gpus <= 1) return experts * p;
  const int hosted = experts / gpus;
  if (p <= 0) return 0.0;
  if (p >= 1) return hosted;
  // E[max] = sum over m < hosted of P(max > m) = 1 - F(m)^gpus, with F(m) = P(count <= m) and the counts
  // Binomial(hosted, p). Each P(count = i) = exp(log C(hosted, i) + i log p + (hosted - i) log(1 - p)), so that
  // (1 - p)^hosted cannot underflow to 0 when p is close to 1.
  const double n = hosted, log_p = std::log(p), log_q = std::log1p(-p), log_n_factorial = std::lgamma(n + 1);
  double cdf = 0, expected_max = 0;
  for (int m = 0; m < hosted; ++m) {
    const double i = m;
    cdf += std::exp(log_n_factorial - std::lgamma(i + 1) - std::lgamma(n - i + 1) + i * log_p + (n - i) * log_q);
    expected_max += 1.0 - std::pow(std::min(cdf, 1.0), gpus);
  }
  return expected_max;
}

}  // namespace llmco2::graph
