// Every kernel formula against values worked out by hand (see docs/kernels.md).
#include <gtest/gtest.h>

#include "graph/layer_kernels.h"

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
  EXPECT_DOUBLE_EQ(c.ops, 65536 + 512);        // + 16 x 32 bias additions
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
  EXPECT_DOUBLE_EQ(c.ops, 2.0 * 4 * 36 * (4 * 16 + 5));  // QK and SV 2 d each + softmax 5, per pair
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 16 * 4 * 16 * 2);  // Q
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

TEST(LayerKernels, ExpectedDistinctExperts) {
  EXPECT_DOUBLE_EQ(expected_distinct_experts(8, 2, 1), 2);
  EXPECT_DOUBLE_EQ(expected_distinct_experts(4, 1, 2), 1.75);  // 4 (1 - (3/4)^2)
  EXPECT_NEAR(expected_distinct_experts(8, 2, 1024), 8, 1e-12);
}

TEST(LayerKernels, RoutedExperts) {
  const KernelCost c = expert_linear_cost(prefill_shape(), 64, 32, false, 3, 32);
  EXPECT_DOUBLE_EQ(c.ops, 2.0 * 32 * 64 * 32);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 3.0 * 64 * 32 * 2);
  EXPECT_DOUBLE_EQ(c.act_load_bytes, 32.0 * 64 * 2);
}

}  // namespace
}  // namespace llmco2
