// graph/layer_kernels.h - the cost formulas of each kernel kind (docs/kernels.md gives them with their derivation).
#pragma once

#include "graph/context.h"
#include "graph/kernel_graph.h"
#include "graph/module.h"

namespace llmco2::graph {

// Sizes shared by every kernel of one phase on one GPU.
struct PhaseShape {
  Phase phase = Phase::prefill;
  double batch = 1;
  double tokens = 0;  // token rows processed over the phase: batch x prompt, or batch x (gen - 1)
  double steps = 0;   // forward passes: 1, or gen - 1 (weights are re-read every step)
  int gpus = 1;
  double weight_bytes = 2, act_bytes = 2, kv_bytes = 2;  // bytes per element of each tensor class (scales included)
  // Bytes per element of a GEMM's input: act_bytes, or, for w8a8 (narrower GEMM inputs than act_bytes), the
  // quantisation pass (read act_bytes, write the narrow type) plus the GEMM's read of the narrow input
  // (gemm_read_bytes). A GEMM whose input another GEMM quantised already (vLLM's fused QKV and gate/up) reads only.
  double gemm_input_bytes = 2, gemm_read_bytes = 2;
  double expert_weight_bytes = 2;  // routed experts' stored bytes per weight (gpt-oss MXFP4: 4.25 bits)
  double head_weight_bytes = 2;    // embedding table and LM head (kept 16-bit by quantised checkpoints)
  double state_bytes = 2;          // Mamba-2 conv state and conv weights: the 16-bit type (SSM state: MambaSpec)
  double dequant_ops_per_weight = 0, expert_dequant_ops_per_weight = 0;  // weight-only paths (dequant_ops_per_weight)
  long prompt_tokens = 0, gen_tokens = 0;  // the request's counts per sequence (attention spans)
  bool flash_attention = true;
};
PhaseShape phase_shape(Phase phase, const Request& request);
// Sets the shape's counts (batch, tokens, steps, prompt, gen) for `request`, its byte sizes kept: a setup's shape
// reused for another request of the same GPUs and precision.
void set_phase_counts(PhaseShape& shape, const Request& request);

// Rows of one tile of a weight-only GEMM (Marlin's 64-row blocks): each tile dequantises the weights it uses again.
inline constexpr double kDequantRowTile = 64;
// Operations of a softmax per score (max, subtract, exp, sum, divide).
inline constexpr double kSoftmaxOpsPerElement = 5;

// Operations to dequantise one weight element of `weights` for a matmul running at `compute`: 0 when the matrix
// units take the weights as stored; 3 for 4-bit formats (unpack, convert, scale), 2 for 8-bit ones (convert, scale).
double dequant_ops_per_weight(DType weights, DType compute);
// Dequantisation ops of a d_in x d_out weight used by `rows_per_step` token rows in each of `steps` steps:
// ops per weight x weights x ceil(rows / kDequantRowTile) per step.
double dequant_ops(double ops_per_weight, double weights, double rows_per_step, double steps);

// y = x W (+ b) over all tokens: 2 tokens d_in d_out ops (+ dequantisation on weight-only paths); W read once per step.
// How a GEMM gets its input (PhaseShape::gemm_input_bytes): it quantises it (w8a8) or reads it as it is; it reads
// the narrow copy another GEMM of the same input made (k and v after q, up after gate: vLLM fuses them); or it runs
// in 16 bits whatever the checkpoint (router, LM head, Qwen-MoE's shared-expert gate).
// Routed experts also quantise before routing: the hidden rows once, each routed row then reading its narrow copy.
enum class GemmInput { quantised_here, already_quantised, sixteen_bit, quantised_before_routing };
KernelCost linear_cost(const PhaseShape& s, long d_in, long d_out, bool bias, bool stores_kv,
                       GemmInput input = GemmInput::quantised_here);
// RMSNorm/LayerNorm over `width` on every token (replicated across GPUs).
KernelCost norm_cost(const PhaseShape& s, long width, bool layer_norm);
// Element-wise residual add of `inputs` tensors of `width`.
KernelCost add_cost(const PhaseShape& s, long width, int inputs);
// Activation of `width` (per GPU); gated: act(gate) * up.
KernelCost activation_cost(const PhaseShape& s, long width, Activation activation, bool gated);
// Rotary embedding applied in place to the turned dims of q and k (`q_width`, `kv_width`: rotary dims x heads).
KernelCost rope_cost(const PhaseShape& s, long q_width, long kv_width);
// Ring all-reduce of a tokens x width tensor across s.gpus GPUs (zero cost on one GPU).
KernelCost allreduce_cost(const PhaseShape& s, long width);

// Attention of one layer on one GPU with `heads` query heads and `kv_heads` KV heads of `head_dim`.
struct AttentionShape {
  int heads = 0, kv_heads = 0, head_dim = 0;
  AttentionSpan span;  // per-sequence key counts
};
KernelCost fused_attention_cost(const PhaseShape& s, const AttentionShape& a);
KernelCost matmul_qk_cost(const PhaseShape& s, const AttentionShape& a);
KernelCost softmax_cost(const PhaseShape& s, const AttentionShape& a);
KernelCost matmul_sv_cost(const PhaseShape& s, const AttentionShape& a);

// Multi-head latent attention of one layer on one GPU (DeepSeek-V2/V3, as vLLM runs it). Prefill runs the expanded
// form: MHA of `heads` heads with query/key width qk_dim and value width v_dim, K and V expanded from the latent as
// activations. Decode runs the absorbed form: every head's query (latent + rope wide) meets the one cached latent per
// token, whose first `latent_dim` elements also serve as the value (MQA over the cache).
struct MlaShape {
  int heads = 0;
  long qk_dim = 0, v_dim = 0;         // expanded head widths (qk_nope + qk_rope, v_head_dim)
  long latent_dim = 0, rope_dim = 0;  // kv_lora_rank, qk_rope_head_dim: the cache holds latent + rope per token
  AttentionSpan span;
};
// Decode computes whole tiles of kMlaHeadTile heads: MLA decode kernels pack a sequence's query heads as the rows of
// 64-row MMA tiles (FlashMLA's kernel "targets h_q x s_q >= 64", deepseek-ai/FlashMLA README, 2025-04-22), so 16 heads
// (DeepSeek-V3 at TP 8) compute as many operations as 64. AIConfigurator's decode tables cannot confirm it: at <= 64
// heads the latent cache's read binds (64 heads take a median 1.09-1.13x the time of 16 on H100 and H200), and 128
// heads, where the math binds, up to 1.9x.
KernelCost mla_attention_cost(const PhaseShape& s, const MlaShape& a);
inline constexpr int kMlaHeadTile = 64;
// kv_b_proj (latent -> per-head k_nope and v). Prefill: a linear over the prompt's latents. Decode (absorbed): W_UK
// turns each head's q_nope into the latent space before attention and W_UV each head's latent output into v after it,
// both 16-bit batched matmuls (vLLM keeps 16-bit copies of W_UK and W_UV): the same weights and multiply-adds.
KernelCost mla_kv_b_cost(const PhaseShape& s, const MlaShape& a, long nope_dim);

// The Mamba-2 mixer's kernels on one GPU; `m` holds the heads and groups of this GPU. The recurrent state counts as
// cache traffic (kv_*_bytes): engines keep it in their KV-cache pool.
// Causal depthwise conv1d over x, B and C (conv_channels): conv_kernel multiply-adds, bias and SiLU per element; the
// last conv_kernel - 1 inputs of each sequence are its conv state, written by prefill, read and written every decode
// step.
KernelCost mamba_conv_cost(const PhaseShape& s, const MambaSpec& m);
// The SSD scan. Prefill: the chunked algorithm (Mamba-2, Dao & Gu 2024), per token and head 2 q head_dim for the
// intra-chunk block (x by the masked C B^T), 4 state_dim head_dim for chunk states in and out, q for the decay mask
// and 2 head_dim for the D skip, plus 2 q state_dim per group for C B^T, with chunk q = min(chunk_tokens, prompt);
// the final state written. Decode: the recurrent update per token and head, 5 head_dim state_dim (decay, dt B x,
// C h) + 2 head_dim, reading and writing the state.
KernelCost ssd_scan_cost(const PhaseShape& s, const MambaSpec& m);
// y x SiLU(z) then RMSNorm over `width` (Mamba-2's gated norm): 13 ops per element, y and z read, one tensor written.
KernelCost gated_norm_cost(const PhaseShape& s, long width);

// The token sampler of a step: one row of `vocab` fp32 logits per sequence (the whole vocabulary, gathered on the GPU
// that samples), counted as one softmax pass (read and write, 8 bytes per logit); the engine's profile scales it to
// the passes its sampler really makes (EngineProfile::sampler_bytes_per_logit).
inline constexpr std::string_view kSamplerKernel = "sampler";
inline constexpr double kSamplerPassBytesPerLogit = 8;
KernelCost sampler_cost(const PhaseShape& s, long vocab);

// Routed experts: `routed_tokens` = tokens x top-k rows; weights of `experts_loaded` experts read over the phase.
// `input`: quantised_before_routing for the first GEMM of the routed tokens (the hidden rows, s.tokens, are quantised
// once, as vLLM's fused MoE does), quantised_here for down_proj (its routed rows), already_quantised for up after gate.
KernelCost expert_linear_cost(const PhaseShape& s, long d_in, long d_out, bool bias, double experts_loaded_total,
                              double routed_tokens, GemmInput input = GemmInput::quantised_here);

// Expected distinct experts hit when `tokens` tokens each pick top-k of E experts: E (1 - (1 - k/E)^tokens).
double expected_distinct_experts(int experts, int top_k, double tokens);
// Expected experts the busiest of `gpus` GPUs loads under expert parallelism (each GPU holds experts / gpus whole
// experts): each expert is hit with p = 1 - (1 - k/E)^tokens, taken as independent of the others (exact for the mean,
// close for the maximum when E / gpus >= 8), so one GPU's count is Binomial(E / gpus, p) and the busiest one's is the
// expected maximum of `gpus` such counts, sum over m < E / gpus of 1 - F(m)^gpus. Routing as uniform as that is the
// physical floor: a router that favours some experts loads the busiest GPU more.
double expected_busiest_gpu_experts(int experts, int top_k, double tokens, int gpus);

}  // namespace llmco2::graph
