// Every kernel formula against values worked out by hand (see docs/kernels.md).
#include <gtest/gtest.h>

#include "core/error.h"
#include "graph/layer_kernels.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

// batch 2, prompt 8: 16 token rows in one step, 2-byte elements, one GPU.
PhaseShape prefill_shape() {
  PhaseShape s;
  s.phase = Phase::prefill;
  s.batch = 2;
  s.tokens = 16;
  s.steps = 1;
  return s;
}

TEST(LayerKernels, Linear) {
  const KernelCost c = linear_cost(prefill_shape(), 64, 32, false, false);
  EXPECT_DOUBLE_EQ(c.ops, 65536);            // 2 x 16 x 64 x 32
  EXPECT_DOUBLE_EQ(c.weight_bytes, 4096);    // 64 x 32 x 2
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 2048);  // 16 x 64 x 2
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 1024);
  EXPECT_DOUBLE_EQ(c.kv_store_bytes, 0);
}

TEST(LayerKernels, LinearWithBiasAndKvStore) {
  const KernelCost c = linear_cost(prefill_shape(), 64, 32, true, true);
  EXPECT_DOUBLE_EQ(c.ops, 65536 + 512);         // + 16 x 32 bias additions
  EXPECT_DOUBLE_EQ(c.weight_bytes, 4096 + 64);  // + 32 bias elements
  EXPECT_DOUBLE_EQ(c.kv_store_bytes, 1024);     // K/V projections write the cache...
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 0);       // ...not an activation (the paper has this reversed)
}

TEST(LayerKernels, DecodeRereadsWeightsEveryStep) {
  PhaseShape s = prefill_shape();
  s.phase = Phase::decode;
  s.steps = 3;
  s.tokens = 6;  // batch 2 x 3 steps
  const KernelCost c = linear_cost(s, 64, 32, false, false);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 3 * 4096);
  EXPECT_DOUBLE_EQ(c.ops, 2.0 * 6 * 64 * 32);
}

TEST(LayerKernels, NormAddActivationRope) {
  const PhaseShape s = prefill_shape();
  const KernelCost norm = norm_cost(s, 64, false);
  EXPECT_DOUBLE_EQ(norm.ops, 7168);  // 7 x 16 x 64
  EXPECT_DOUBLE_EQ(norm.weight_bytes, 128);
  EXPECT_DOUBLE_EQ(norm.mem_bytes(), 128 + 2048 + 2048);
  EXPECT_DOUBLE_EQ(norm_cost(s, 64, true).weight_bytes, 256);  // LayerNorm gain + bias
  const KernelCost add = add_cost(s, 64, 2);
  EXPECT_DOUBLE_EQ(add.ops, 1024);
  EXPECT_DOUBLE_EQ(add.act_load_bytes, 4096);  // both operands
  EXPECT_DOUBLE_EQ(add.act_store_bytes, 2048);
  const KernelCost act = activation_cost(s, 128, Activation::silu, true);
  EXPECT_DOUBLE_EQ(act.ops, 6.0 * 16 * 128);  // silu 5 + the gating multiply
  EXPECT_DOUBLE_EQ(act.act_load_bytes, 8192);
  EXPECT_DOUBLE_EQ(act.act_store_bytes, 4096);
  const KernelCost rope = rope_cost(s, 64, 32);
  EXPECT_DOUBLE_EQ(rope.ops, 3.0 * 16 * 96);
  EXPECT_DOUBLE_EQ(rope.act_load_bytes, 16 * 96 * 2);
}

TEST(LayerKernels, RingAllReduce) {
  PhaseShape s = prefill_shape();
  s.gpus = 4;
  const KernelCost c = allreduce_cost(s, 64);  // 1024 elements, 2048 bytes
  EXPECT_DOUBLE_EQ(c.net_bytes, 3072);         // 2 (N-1)/N x 2048
  EXPECT_DOUBLE_EQ(c.ops, 768);                // (N-1)/N x 1024 additions
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 3072 + 1536);
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 3072);
  s.gpus = 1;
  EXPECT_DOUBLE_EQ(allreduce_cost(s, 64).mem_bytes(), 0);
}

TEST(LayerKernels, FusedAttentionReadsTheCacheOnce) {
  const AttentionShape a{4, 2, 16, AttentionSpan{36, 8}};
  const KernelCost c = fused_attention_cost(prefill_shape(), a);
  EXPECT_DOUBLE_EQ(c.ops, 2.0 * 4 * 36 * (4 * 16 + 5));         // QK and SV 2 d each + softmax 5, per pair
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 16 * 4 * 16 * 2);          // Q
  EXPECT_DOUBLE_EQ(c.kv_load_bytes, 2.0 * 2 * 8 * 2 * 16 * 2);  // K and V: batch x keys x kv heads x d x 2 B
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 16 * 4 * 16 * 2);
}

TEST(LayerKernels, EagerAttentionMaterialisesScores) {
  const PhaseShape s = prefill_shape();
  const AttentionShape a{4, 2, 16, AttentionSpan{64, 8}};
  const double scores = 2.0 * 4 * 64;
  EXPECT_DOUBLE_EQ(matmul_qk_cost(s, a).ops, 2 * 16 * scores);
  EXPECT_DOUBLE_EQ(matmul_qk_cost(s, a).act_store_bytes, scores * 2);
  EXPECT_DOUBLE_EQ(matmul_qk_cost(s, a).kv_load_bytes, 2.0 * 8 * 2 * 16 * 2);
  EXPECT_DOUBLE_EQ(softmax_cost(s, a).ops, 5 * scores);
  EXPECT_DOUBLE_EQ(softmax_cost(s, a).mem_bytes(), 2 * scores * 2);
  EXPECT_DOUBLE_EQ(matmul_sv_cost(s, a).act_load_bytes, scores * 2);
  EXPECT_DOUBLE_EQ(matmul_sv_cost(s, a).act_store_bytes, 16 * 4 * 16 * 2);
}

// MLA with 2 heads: expanded head widths qk 6 (nope 4 + rope 2), v 4; latent 8 (+ rope 2) cached per token.
MlaShape small_mla() { return MlaShape{2, 6, 4, 8, 2, AttentionSpan{36, 8}}; }

TEST(LayerKernels, MlaPrefillIsExpandedMultiHeadAttention) {
  const KernelCost c = mla_attention_cost(prefill_shape(), small_mla());
  // 2 sequences x 2 heads x 36 pairs = 144 pairs of QK^T (2 x 6), SV (2 x 4) and softmax (5).
  EXPECT_DOUBLE_EQ(c.ops, 144.0 * (12 + 8 + 5));
  // Q: 16 rows x 2 heads x 6 x 2 B = 384; expanded K and V: 2 x 8 rows x 2 heads x (6 + 4) x 2 B = 640.
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 384 + 640);
  EXPECT_DOUBLE_EQ(c.kv_load_bytes, 0);  // the cache holds latents; prefill attends to expanded activations
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 16.0 * 2 * 4 * 2);
}

TEST(LayerKernels, MlaDecodeIsAbsorbedMqaOverTheLatentCache) {
  PhaseShape s = prefill_shape();
  s.phase = Phase::decode;
  const KernelCost c = mla_attention_cost(s, small_mla());
  // Each head's query is latent + rope = 10 wide; the value is the latent (8): 144 pairs x (20 + 16 + 5), the 2
  // heads computed as a tile of 64 (kMlaHeadTile): 32 x that.
  EXPECT_DOUBLE_EQ(c.ops, 144.0 * 32 * (20 + 16 + 5));
  EXPECT_DOUBLE_EQ(c.score_pairs, 144.0);                 // the span counts the real heads
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 16.0 * 2 * 10 * 2);  // Q
  EXPECT_DOUBLE_EQ(c.kv_load_bytes, 2.0 * 8 * 10 * 2);    // one 10-wide row per key, shared by both heads
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 16.0 * 2 * 8 * 2);  // O in latent space
}

TEST(LayerKernels, MlaKvBProjExpandsInPrefillAndAbsorbsInDecode) {
  // kv_b_proj: latent 8 -> 2 heads x (nope 4 + v 4) = 16, 128 weights.
  const KernelCost prefill = mla_kv_b_cost(prefill_shape(), small_mla(), 4);
  EXPECT_DOUBLE_EQ(prefill.ops, 2.0 * 16 * 8 * 16);
  EXPECT_DOUBLE_EQ(prefill.act_store_bytes, 16.0 * 16 * 2);  // k_nope and v of every prompt token
  PhaseShape s = prefill_shape();
  s.phase = Phase::decode;
  s.weight_bytes = 1, s.head_weight_bytes = 2;  // fp8 checkpoint: the absorbed copies are 16-bit
  const KernelCost decode = mla_kv_b_cost(s, small_mla(), 4);
  EXPECT_DOUBLE_EQ(decode.ops, 2.0 * 16 * 128);                      // same multiply-adds per token
  EXPECT_DOUBLE_EQ(decode.weight_bytes, 128.0 * 2);                  // W_UK and W_UV at 16 bits
  EXPECT_DOUBLE_EQ(decode.act_load_bytes, 16.0 * 2 * (4 + 8) * 2);   // q_nope, attention output (latent)
  EXPECT_DOUBLE_EQ(decode.act_store_bytes, 16.0 * 2 * (8 + 4) * 2);  // q in latent space, v
}

// A small Mamba-2 mixer: 2 heads of 4 channels, state 8, one group, conv width 4: inner 8, conv channels
// 8 + 2 x 8 = 24, state 2 x 4 x 8 = 64 elements per sequence.
MambaSpec small_mamba() {
  MambaSpec m;
  m.heads = 2, m.head_dim = 4, m.state_dim = 8, m.groups = 1, m.conv_kernel = 4;
  return m;
}

// batch 2, 3 decode steps: 6 token rows.
PhaseShape decode_shape() {
  PhaseShape s = prefill_shape();
  s.phase = Phase::decode;
  s.tokens = 6;
  s.steps = 3;
  return s;
}

TEST(LayerKernels, MambaConvCarriesItsWindowAsState) {
  const KernelCost prefill = mamba_conv_cost(prefill_shape(), small_mamba());
  EXPECT_DOUBLE_EQ(prefill.ops, 16.0 * 24 * (2 * 4 + 1 + 5));  // 4 multiply-adds, bias, SiLU per element
  EXPECT_DOUBLE_EQ(prefill.weight_bytes, 24.0 * (4 + 1) * 2);
  EXPECT_DOUBLE_EQ(prefill.act_load_bytes, 16.0 * 24 * 2);
  EXPECT_DOUBLE_EQ(prefill.kv_store_bytes, 2.0 * 3 * 24 * 2);  // each sequence's last 3 inputs
  const KernelCost decode = mamba_conv_cost(decode_shape(), small_mamba());
  EXPECT_DOUBLE_EQ(decode.kv_load_bytes, 6.0 * 3 * 24 * 2);  // read and written at every step
  EXPECT_DOUBLE_EQ(decode.kv_store_bytes, 6.0 * 3 * 24 * 2);
  EXPECT_DOUBLE_EQ(decode.weight_bytes, 3.0 * 24 * 5 * 2);
}

TEST(LayerKernels, SsdScanIsLinearInTokens) {
  // Prefill, prompt 8 (chunk q = min(256, 8) = 8): per token 2 heads x (2 x 8 x 4 + 4 x 8 x 4 + 8 + 2 x 4) = 416
  // and 1 group x 2 x 8 x 8 = 128: 16 x 544.
  const KernelCost prefill = ssd_scan_cost(prefill_shape(), small_mamba());
  EXPECT_DOUBLE_EQ(prefill.ops, 16.0 * 544);
  EXPECT_DOUBLE_EQ(prefill.act_load_bytes, 16.0 * (8 + 16 + 2) * 2);  // x, B, C, dt
  EXPECT_DOUBLE_EQ(prefill.act_store_bytes, 16.0 * 8 * 2);            // y
  EXPECT_DOUBLE_EQ(prefill.kv_store_bytes, 2.0 * 64 * 4);             // each sequence's final state, in fp32
  // Decode: per token 2 heads x (5 x 4 x 8 + 2 x 4) = 336 ops; the 64-element fp32 state read and written.
  const KernelCost decode = ssd_scan_cost(decode_shape(), small_mamba());
  EXPECT_DOUBLE_EQ(decode.ops, 6.0 * 336);
  EXPECT_DOUBLE_EQ(decode.kv_load_bytes, 6.0 * 64 * 4);
  EXPECT_DOUBLE_EQ(decode.kv_store_bytes, 6.0 * 64 * 4);
  // A config asking for a 16-bit SSM cache (mamba_ssm_cache_dtype) halves those bytes.
  MambaSpec half = small_mamba();
  half.ssm_state_dtype = DType::bf16;
  EXPECT_DOUBLE_EQ(ssd_scan_cost(decode_shape(), half).kv_load_bytes, 6.0 * 64 * 2);
}

TEST(LayerKernels, GatedNormReadsYAndZ) {
  const KernelCost c = gated_norm_cost(prefill_shape(), 8);
  EXPECT_DOUBLE_EQ(c.ops, 13.0 * 16 * 8);  // SiLU(z) 5, x y 1, RMSNorm 7
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 2.0 * 16 * 8 * 2);
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 16.0 * 8 * 2);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 8.0 * 2);
}

TEST(LayerKernels, ExpectedDistinctExperts) {
  EXPECT_DOUBLE_EQ(expected_distinct_experts(8, 2, 1), 2);
  EXPECT_DOUBLE_EQ(expected_distinct_experts(4, 1, 2), 1.75);  // 4 (1 - (3/4)^2)
  EXPECT_NEAR(expected_distinct_experts(8, 2, 1024), 8, 1e-12);
}

// Expert parallelism: 8 experts, top-2, one token, 2 GPUs of 4 whole experts each. Each expert is hit with
// p = 1 - (6/8)^1 = 1/4; one GPU's count is Binomial(4, 1/4): P(0..3) = 0.31640625, 0.421875, 0.2109375, 0.046875,
// so F = 0.31640625, 0.73828125, 0.94921875, 0.99609375, and the busier GPU's expected count is
// sum (1 - F^2) = 0.899887085 + 0.454940796 + 0.098983765 + 0.007797241 = 1.461608887, against 1 on average.
TEST(LayerKernels, ExpectedBusiestGpuExperts) {
  EXPECT_NEAR(expected_busiest_gpu_experts(8, 2, 1, 2), 1.461608887, 1e-9);
  EXPECT_DOUBLE_EQ(expected_busiest_gpu_experts(8, 2, 1, 1), expected_distinct_experts(8, 2, 1));  // one GPU: all
  EXPECT_NEAR(expected_busiest_gpu_experts(128, 8, 1e4, 8), 16, 1e-9);  // every expert hit: each GPU loads its 16
  // p close to 1 with many experts per GPU, where (1 - p)^192 underflows a direct product: 384 experts, top-8, 200
  // tokens (p = 0.98516), 2 GPUs of 192: 190.075 by an exact sum of the binomial terms (Python, integer C(n, i)).
  EXPECT_NEAR(expected_busiest_gpu_experts(384, 8, 200, 2), 190.07538368, 1e-6);
  // The busiest GPU loads at least the mean and at most all it holds.
  for (double tokens : {1.0, 4.0, 16.0, 64.0}) {
    const double busiest = expected_busiest_gpu_experts(256, 8, tokens, 8);
    EXPECT_GE(busiest, expected_distinct_experts(256, 8, tokens) / 8) << tokens;
    EXPECT_LE(busiest, 32) << tokens;
  }
}

TEST(LayerKernels, RoutedExperts) {
  const KernelCost c = expert_linear_cost(prefill_shape(), 64, 32, false, 3, 32);
  EXPECT_DOUBLE_EQ(c.ops, 2.0 * 32 * 64 * 32);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 3.0 * 64 * 32 * 2);
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 32.0 * 64 * 2);
}

TEST(LayerKernels, DequantisationOpsPerWeight) {
  EXPECT_EQ(dequant_ops_per_weight(DType::int4, DType::bf16), 3);  // unpack, convert, scale
  EXPECT_EQ(dequant_ops_per_weight(DType::mxfp4, DType::bf16), 3);
  EXPECT_EQ(dequant_ops_per_weight(DType::int8, DType::fp16), 2);  // convert, scale
  EXPECT_EQ(dequant_ops_per_weight(DType::fp8, DType::bf16), 2);   // Marlin fp8 on an A100
  EXPECT_EQ(dequant_ops_per_weight(DType::fp8, DType::fp8), 0);    // fp8 tensor cores take them as stored
  EXPECT_EQ(dequant_ops_per_weight(DType::nvfp4, DType::nvfp4), 0);
  EXPECT_EQ(dequant_ops_per_weight(DType::bf16, DType::bf16), 0);
}

TEST(LayerKernels, WeightOnlyLinearStreamsPackedWeightsAndDequantisesThemEveryStep) {
  PhaseShape s = prefill_shape();  // decode: batch 2, 3 steps
  s.phase = Phase::decode;
  s.steps = 3;
  s.tokens = 6;
  s.weight_bytes = 0.515625;  // w4a16: 0.5 + a 2-byte scale per 128
  s.dequant_ops_per_weight = 3;
  const KernelCost c = linear_cost(s, 64, 32, false, false);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 3 * 2048 * 0.515625);
  EXPECT_DOUBLE_EQ(c.ops, 2.0 * 6 * 64 * 32 + 3.0 * 2048 * 3);  // + 3 ops x 2048 weights x 3 steps (one 64-row tile)
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 6 * 64 * 2);               // activations stay 16-bit
  // Prefill of 130 rows: 3 tiles of 64 rows, each dequantising the weights again.
  PhaseShape p = prefill_shape();
  p.tokens = 130;
  p.dequant_ops_per_weight = 3;
  EXPECT_DOUBLE_EQ(linear_cost(p, 64, 32, false, false).ops, 2.0 * 130 * 64 * 32 + 3.0 * 2048 * 3);
  EXPECT_DOUBLE_EQ(dequant_ops(3, 2048, 64, 1), 3.0 * 2048);
  EXPECT_DOUBLE_EQ(dequant_ops(0, 2048, 64, 1), 0);
}

TEST(LayerKernels, RoutedExpertsUseTheExpertFormat) {
  PhaseShape s = prefill_shape();
  s.expert_weight_bytes = 0.53125;  // MXFP4
  s.expert_dequant_ops_per_weight = 3;
  const KernelCost c = expert_linear_cost(s, 64, 32, false, 3, 32);  // 32 routed rows over 3 experts: 1 tile each
  EXPECT_DOUBLE_EQ(c.weight_bytes, 3.0 * 64 * 32 * 0.53125);
  EXPECT_DOUBLE_EQ(c.ops, 2.0 * 32 * 64 * 32 + 3.0 * 2048 * 3);
}

Request llama_request(const std::string& dtype) {
  Request r;
  r.precision = ModelCatalog::bundled().resolve("llama-3.1-8b").precision_for(dtype);
  return r;
}

TEST(LayerKernels, PhaseShapeFromThePrecision) {
  const PhaseShape w4 = phase_shape(Phase::decode, llama_request("w4a16"));
  EXPECT_DOUBLE_EQ(w4.weight_bytes, 0.515625);
  EXPECT_DOUBLE_EQ(w4.act_bytes, 2);
  EXPECT_DOUBLE_EQ(w4.head_weight_bytes, 2);  // embeddings and LM head stay 16-bit
  EXPECT_DOUBLE_EQ(w4.dequant_ops_per_weight, 3);
  const PhaseShape fp8 = phase_shape(Phase::decode, llama_request("fp8"));
  EXPECT_DOUBLE_EQ(fp8.weight_bytes, 1);
  EXPECT_DOUBLE_EQ(fp8.dequant_ops_per_weight, 0);
  const PhaseShape a100_fp8 = phase_shape(Phase::decode, llama_request("wfp8abf16kvbf16"));  // the A100 fallback
  EXPECT_DOUBLE_EQ(a100_fp8.weight_bytes, 1);
  EXPECT_DOUBLE_EQ(a100_fp8.dequant_ops_per_weight, 2);
  Request oss;
  oss.precision = ModelCatalog::bundled().resolve("gpt-oss-20b").default_precision;
  const PhaseShape mx = phase_shape(Phase::decode, oss);
  EXPECT_DOUBLE_EQ(mx.weight_bytes, 2);
  EXPECT_DOUBLE_EQ(mx.expert_weight_bytes, 0.53125);
  EXPECT_DOUBLE_EQ(mx.expert_dequant_ops_per_weight, 3);
}

// A w8a8 checkpoint (fp8 weights and GEMM inputs, bf16 KV cache): activations stay bf16 between kernels (2 B); each
// GEMM input is quantised just before it (read 2 B, write 1 B) and read by the GEMM in fp8 (1 B): 4 B per element.
TEST(LayerKernels, W8a8QuantisesEachGemmInputFrom16Bit) {
  PhaseShape s = phase_shape(Phase::prefill, llama_request("wfp8afp8kvbf16"));
  EXPECT_DOUBLE_EQ(s.act_bytes, 2);
  EXPECT_DOUBLE_EQ(s.gemm_input_bytes, 4);
  EXPECT_DOUBLE_EQ(s.weight_bytes, 1);
  s.batch = 2, s.tokens = 16, s.steps = 1;
  const KernelCost c = linear_cost(s, 64, 32, false, false);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 2048);                          // 64 x 32 x 1
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 4096);                        // 16 x 64 x (2 + 1 + 1)
  EXPECT_DOUBLE_EQ(c.act_store_bytes, 1024);                       // 16 x 32 x 2: the output is dequantised to bf16
  EXPECT_DOUBLE_EQ(norm_cost(s, 64, false).act_load_bytes, 2048);  // 16 x 64 x 2, as in bf16
  // k and v read the fp8 copy q_proj made (fused QKV): 16 x 64 x 1; the router and LM head run in bf16: 16 x 64 x 2.
  EXPECT_DOUBLE_EQ(linear_cost(s, 64, 32, false, true, GemmInput::already_quantised).act_load_bytes, 1024);
  EXPECT_DOUBLE_EQ(linear_cost(s, 64, 32, false, false, GemmInput::sixteen_bit).act_load_bytes, 2048);
  // Routed experts: the 16 hidden rows are quantised once before routing (16 x 64 x 3), then each of 32 routed rows
  // reads its fp8 copy (32 x 64 x 1); down_proj quantises each routed row (32 x 64 x 4).
  EXPECT_DOUBLE_EQ(expert_linear_cost(s, 64, 32, false, 2, 32, GemmInput::quantised_before_routing).act_load_bytes,
                   16 * 64 * 3 + 32 * 64 * 1);
  EXPECT_DOUBLE_EQ(expert_linear_cost(s, 64, 32, false, 2, 32).act_load_bytes, 32 * 64 * 4);
  // 16-bit activations: the GEMM reads its input once.
  EXPECT_DOUBLE_EQ(phase_shape(Phase::prefill, llama_request("w4a16")).gemm_input_bytes, 2);
}

const KernelNode& graph_node(const KernelGraph& g, const std::string& kernel, const std::string& expert = "") {
  for (const auto& n : g.nodes)
    if (n.kernel == kernel && n.expert == expert) return n;
  for (const auto& n : g.step_nodes)
    if (n.kernel == kernel) return n;
  throw std::runtime_error("no node " + kernel);
}

TEST(LayerKernels, Kv8HalvesTheCacheBytesOnly) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const KernelGraph bf16 = build_kernel_graph(m, llama_request(""));
  const KernelGraph kv8 = build_kernel_graph(m, llama_request("w16a16kv8"));
  for (const Phase phase : {Phase::prefill, Phase::decode}) {
    EXPECT_DOUBLE_EQ(graph_node(kv8, "k_proj").cost(phase).kv_store_bytes,
                     graph_node(bf16, "k_proj").cost(phase).kv_store_bytes / 2);
    EXPECT_DOUBLE_EQ(graph_node(kv8, "fused_attention").cost(phase).kv_load_bytes,
                     graph_node(bf16, "fused_attention").cost(phase).kv_load_bytes / 2);
    EXPECT_DOUBLE_EQ(graph_node(kv8, "fused_attention").cost(phase).act_load_bytes,
                     graph_node(bf16, "fused_attention").cost(phase).act_load_bytes);
    EXPECT_DOUBLE_EQ(graph_node(kv8, "q_proj").cost(phase).weight_bytes,
                     graph_node(bf16, "q_proj").cost(phase).weight_bytes);
  }
}

TEST(LayerKernels, W4a16QuartersLayerWeightsButNotTheLmHead) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const KernelGraph bf16 = build_kernel_graph(m, llama_request(""));
  const KernelGraph w4 = build_kernel_graph(m, llama_request("w4a16"));
  EXPECT_DOUBLE_EQ(graph_node(w4, "down_proj").decode.weight_bytes,
                   graph_node(bf16, "down_proj").decode.weight_bytes * 0.515625 / 2);
  EXPECT_GT(graph_node(w4, "down_proj").decode.ops, graph_node(bf16, "down_proj").decode.ops);
  EXPECT_DOUBLE_EQ(graph_node(w4, "lm_head").decode.weight_bytes, graph_node(bf16, "lm_head").decode.weight_bytes);
  EXPECT_DOUBLE_EQ(graph_node(w4, "lm_head").decode.ops, graph_node(bf16, "lm_head").decode.ops);
  EXPECT_DOUBLE_EQ(graph_node(w4, "embedding").decode.weight_bytes, graph_node(bf16, "embedding").decode.weight_bytes);
}

TEST(LayerKernels, ExpertPrecisionNeedsExperts) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.1-8b");
  EXPECT_THROW(build_kernel_graph(m, llama_request("wbf16-moemxfp4-abf16")), Error);
}

TEST(LayerKernels, GptOssStreamsMxfp4ExpertsAndBf16Attention) {
  const ModelSpec m = ModelCatalog::bundled().resolve("gpt-oss-20b");
  Request mx, bf16;
  mx.precision = m.default_precision;
  bf16.precision = m.precision_for("bf16");
  const KernelGraph a = build_kernel_graph(m, mx), b = build_kernel_graph(m, bf16);
  // Expert weight bytes at 4.25 bits instead of 16 (the 2880 biases per expert stay 16-bit).
  const KernelCost& expert = graph_node(a, "down_proj", "routed").decode;
  const KernelCost& expert16 = graph_node(b, "down_proj", "routed").decode;
  const double loaded = expert16.weight_bytes / ((2880.0 * 2880 + 2880) * 2);
  EXPECT_NEAR(expert.weight_bytes, loaded * (2880.0 * 2880 * 0.53125 + 2880 * 2), 1e-3 * expert.weight_bytes);
  EXPECT_DOUBLE_EQ(graph_node(a, "q_proj").decode.weight_bytes, graph_node(b, "q_proj").decode.weight_bytes);
}

}  // namespace
}  // namespace llmco2
