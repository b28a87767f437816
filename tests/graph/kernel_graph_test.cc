// The acceptance checks on real models, plus structure, tensor parallelism, MoE and layer averaging.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>

#include "core/error.h"
#include "core/json_io.h"
#include "graph/graph_template.h"
#include "graph/kernel_graph.h"
#include "graph/layer_kernels.h"
#include "model/hf_config.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"
#include "support/catalogs.h"

namespace llmco2 {
namespace {

using testing_support::model;

Request request(long batch, long prompt, long gen, int gpus = 1) {
  Request r;
  r.batch = batch;
  r.prompt_tokens = prompt;
  r.gen_tokens = gen;
  r.gpus = gpus;
  return r;
}

std::vector<const KernelNode*> nodes_of(const KernelGraph& g, KernelType type) {
  std::vector<const KernelNode*> out;
  for (const auto& n : g.nodes)
    if (n.type == type) out.push_back(&n);
  return out;
}

const KernelNode& node(const KernelGraph& g, const std::string& kernel, const std::string& expert = "") {
  for (const auto& n : g.nodes)
    if (n.kernel == kernel && n.expert == expert) return n;
  throw std::runtime_error("no node " + kernel);
}

// Llama-3.1-8B layer by hand: q 4096x4096, k and v 4096x1024, o 4096x4096, gate/up/down 4096x14336.
constexpr double kLlamaLinearWeights = 4096.0 * 4096 * 2 + 4096.0 * 1024 * 2 + 3 * 4096.0 * 14336;  // 218103808
constexpr double kLlamaNormWeights = 2 * 4096.0;

TEST(KernelGraph, LlamaPrefillLinearOpsAre2BLTimesTheLayersWeights) {
  const KernelGraph g = build_kernel_graph(model("llama-3.1-8b"), request(1, 1024, 128));
  double ops = 0;
  for (const auto* n : nodes_of(g, KernelType::linear)) ops += n->prefill.ops;
  EXPECT_EQ(ops, 2.0 * 1 * 1024 * kLlamaLinearWeights);
}

TEST(KernelGraph, LlamaDecodeReadsTheLayersWeightsOncePerStep) {
  const KernelGraph g = build_kernel_graph(model("llama-3.1-8b"), request(1, 1024, 128));
  double weight_bytes = 0;
  for (const auto& n : g.nodes) weight_bytes += n.decode.weight_bytes;
  EXPECT_EQ(weight_bytes, 127.0 * (kLlamaLinearWeights + kLlamaNormWeights) * 2);  // bf16
}

TEST(KernelGraph, TwoGpusHalveLinearOpsAndAddTwoRingAllReduces) {
  const KernelGraph one = build_kernel_graph(model("llama-3.1-8b"), request(1, 1024, 128, 1));
  const KernelGraph two = build_kernel_graph(model("llama-3.1-8b"), request(1, 1024, 128, 2));
  for (const char* kernel : {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}) {
    EXPECT_EQ(node(two, kernel).prefill.ops, node(one, kernel).prefill.ops / 2) << kernel;
    EXPECT_EQ(node(two, kernel).decode.ops, node(one, kernel).decode.ops / 2) << kernel;
  }
  EXPECT_TRUE(nodes_of(one, KernelType::allreduce).empty());
  const auto reduces = nodes_of(two, KernelType::allreduce);
  ASSERT_EQ(reduces.size(), 2u);
  for (const auto* r : reduces) {
    EXPECT_EQ(r->kernel, "allreduce");
    EXPECT_EQ(r->prefill.net_bytes, 2.0 * (2 - 1) / 2 * 1024 * 4096 * 2);  // ring: 2(N-1)/N of the tensor
    EXPECT_EQ(r->decode.net_bytes, 2.0 * (2 - 1) / 2 * 127 * 4096 * 2);
  }
}

TEST(KernelGraph, MixtralLoadsTwoExpertsPerDecodeStepAndAllInPrefill) {
  const KernelGraph g = build_kernel_graph(model("mixtral-8x7b"), request(1, 1024, 128));
  const KernelNode& gate = node(g, "gate_proj", "routed");
  EXPECT_DOUBLE_EQ(gate.experts_loaded_decode, 2.0);
  EXPECT_NEAR(gate.experts_loaded_prefill, 8.0, 1e-9);
  EXPECT_DOUBLE_EQ(gate.decode.weight_bytes, 127.0 * 2 * 4096 * 14336 * 2);
  EXPECT_NEAR(gate.prefill.weight_bytes, 8.0 * 4096 * 14336 * 2, 1e-3);
  EXPECT_DOUBLE_EQ(gate.prefill.ops, 2.0 * 1024 * 2 * 4096 * 14336);  // every token through its 2 experts
  EXPECT_EQ(node(g, "router").d_out, 8);
}

TEST(KernelGraph, MoeDecodeIsBatchAware) {
  const KernelGraph g = build_kernel_graph(model("mixtral-8x7b"), request(4, 128, 16));
  EXPECT_DOUBLE_EQ(node(g, "up_proj", "routed").experts_loaded_decode, 8.0 * (1 - 0.75 * 0.75 * 0.75 * 0.75));
}

// Mixtral (8 experts, top-2, width 14336) at batch 1 on 2 GPUs. Split experts: every GPU reads half of each of the 2
// experts hit, 2 x 4096 x 7168 x 2 B per decode step, and takes both token rows. Whole experts (expert parallelism):
// each GPU holds 4; the busier one reads expected_busiest_gpu_experts(8, 2, 1, 2) = 1.4616 whole experts
// (layer_kernels_test), 1.4616 x 4096 x 14336 x 2 B, 1.46x as much, and the rows routed to them.
TEST(KernelGraph, ExpertParallelismReadsWholeExpertsAndWaitsForTheBusiestGpu) {
  Request split = request(1, 128, 2, 2);
  Request whole = split;
  whole.expert_parallel = true;
  const KernelGraph tp = build_kernel_graph(model("mixtral-8x7b"), split);
  const KernelGraph ep = build_kernel_graph(model("mixtral-8x7b"), whole);
  const KernelNode& tp_gate = node(tp, "gate_proj", "routed");
  const KernelNode& ep_gate = node(ep, "gate_proj", "routed");
  EXPECT_DOUBLE_EQ(tp_gate.decode.weight_bytes, 2.0 * 4096 * 7168 * 2);
  EXPECT_NEAR(ep_gate.decode.weight_bytes, 1.461608887 * 4096 * 14336 * 2, 1e3);
  EXPECT_DOUBLE_EQ(tp_gate.decode.tokens, 2.0);
  EXPECT_NEAR(ep_gate.decode.tokens, 2.0 * 1.461608887 / 2.0, 1e-9);  // its share of the 2 routed rows
  // The attention is the same; a model without experts refuses the flag.
  EXPECT_DOUBLE_EQ(node(ep, "q_proj").decode.weight_bytes, node(tp, "q_proj").decode.weight_bytes);
  Request dense = request(1, 128, 2, 2);
  dense.expert_parallel = true;
  EXPECT_THROW(validate_request(dense, model("llama-3.1-8b")), Error);
}

TEST(KernelGraph, QwenMoeHasASharedExpert) {
  const KernelGraph g = build_kernel_graph(model("qwen2-57b-a14b"), request(1, 256, 16));
  EXPECT_EQ(node(g, "down_proj", "shared").d_in, 20480);
  EXPECT_EQ(node(g, "shared_expert_gate", "shared").d_out, 1);
}

TEST(KernelGraph, GemmaHeadDim256) {
  const KernelGraph g = build_kernel_graph(model("gemma-2b"), request(1, 512, 32));
  EXPECT_EQ(node(g, "q_proj").d_out, 8 * 256);  // 2048 = hidden, by coincidence
  EXPECT_EQ(node(g, "k_proj").d_out, 256);      // one KV head of 256
  const KernelGraph g7 = build_kernel_graph(model("gemma-7b"), request(1, 512, 32));
  EXPECT_EQ(node(g7, "q_proj").d_out, 16 * 256);  // 4096 != hidden 3072
  EXPECT_EQ(node(g7, "o_proj").d_in, 4096);
}

TEST(KernelGraph, Gemma2MeanLayerGivesTheExactSumOverLocalAndGlobalLayers) {
  const ModelSpec m = model("gemma-2-9b");
  const Request r = request(1, 8000, 100);
  const KernelGraph g = build_kernel_graph(m, r);
  const PhaseShape s = phase_shape(Phase::decode, r);
  double expected = 0;
  for (const auto& layer : m.layer_specs)
    expected += fused_attention_cost(s, {16, 8, 256, attention_span(Phase::decode, r, layer.attention)}).ops;
  EXPECT_NEAR(node(g, "fused_attention").decode.ops * m.layers, expected, expected * 1e-12);
  EXPECT_NE(node(g, "post_norm_attn").kernel, "");  // Gemma2's extra norms
}

// Qwen2-57B-A14B with its first two layers dense (mlp_only_layers): one graph, the union of both layer kinds.
ModelSpec qwen_moe_two_dense() {
  for (const auto& entry : ModelCatalog::bundled().entries())
    if (entry.id == "qwen2-57b-a14b") {
      Json config = read_json_file(ModelCatalog::bundled().config_path(entry));
      config["mlp_only_layers"] = Json::array({0, 1});
      return model_from_hf_config(config, "qwen2-57b-two-dense");
    }
  throw std::runtime_error("no qwen2-57b-a14b");
}

TEST(KernelGraph, MixedDenseAndMoeLayersMeanOverTheUnionOfTheirKernels) {
  const Request r = request(1, 256, 16);
  const KernelGraph g = build_kernel_graph(qwen_moe_two_dense(), r);
  // The dense MLP runs in 2 of 28 layers: layers x node = 2 x (2 x 256 x 3584 x 18944) prefill ops.
  const KernelNode& dense = node(g, "gate_proj");
  EXPECT_DOUBLE_EQ(dense.layer_share, 2.0 / 28);
  EXPECT_DOUBLE_EQ(dense.prefill.ops * 28, 2 * (2.0 * 256 * 3584 * 18944));
  // The router and experts run in the other 26, the norms and residual adds in all 28.
  EXPECT_DOUBLE_EQ(node(g, "router").layer_share, 26.0 / 28);
  EXPECT_DOUBLE_EQ(node(g, "router").prefill.ops * 28, 26 * (2.0 * 256 * 3584 * 64));
  EXPECT_EQ(node(g, "norm_mlp").layer_share, 1.0);
  // Nodes stay in a topological order, and norm_mlp feeds both FFN kinds.
  for (const auto& [from, to] : g.edges) EXPECT_LT(from, to);
  auto feeds = [&](const std::string& from, const std::string& to, const std::string& expert) {
    const auto index = [&](const std::string& kernel, const std::string& e) {
      for (size_t i = 0; i < g.nodes.size(); ++i)
        if (g.nodes[i].kernel == kernel && g.nodes[i].expert == e) return static_cast<int>(i);
      return -1;
    };
    return std::count(g.edges.begin(), g.edges.end(), std::pair{index(from, ""), index(to, expert)}) == 1;
  };
  EXPECT_TRUE(feeds("norm_mlp", "gate_proj", ""));
  EXPECT_TRUE(feeds("norm_mlp", "router", ""));
}

TEST(KernelGraph, TotalsCoverAllLayersStepKernelsAndGpus) {
  const KernelGraph g = build_kernel_graph(model("llama-3.1-8b"), request(2, 512, 64, 2));
  double layer_ops = 0, step_ops = 0;
  for (const auto& n : g.nodes) layer_ops += n.prefill.ops;
  for (const auto& n : g.step_nodes) step_ops += n.prefill.ops;
  EXPECT_DOUBLE_EQ(g.totals(Phase::prefill).ops, 2 * (32 * layer_ops + step_ops));
  // The LM head runs on the last position of each sequence only: 2 x batch x hidden x vocab / GPUs.
  EXPECT_DOUBLE_EQ(g.step_nodes[2].prefill.ops, 2.0 * 2 * 4096 * 128256 / 2);
}

TEST(KernelGraph, EagerAttentionHasThreeKernels) {
  Request r = request(1, 64, 8);
  r.flash_attention = false;
  const KernelGraph g = build_kernel_graph(model("llama-3.1-8b"), r);
  EXPECT_EQ(nodes_of(g, KernelType::fused_attention).size(), 0u);
  EXPECT_EQ(nodes_of(g, KernelType::matmul_qk).size(), 1u);
  EXPECT_EQ(nodes_of(g, KernelType::softmax).size(), 1u);
  EXPECT_EQ(nodes_of(g, KernelType::matmul_sv).size(), 1u);
}

TEST(KernelGraph, EdgesFormADagInNodeOrder) {
  for (const char* id : {"llama-3.1-8b", "mixtral-8x7b", "gemma-2-9b", "falcon-7b", "falcon-40b", "gpt-j-6b",
                         "dolly-v2-12b", "redpajama-incite-7b-chat", "qwen2-57b-a14b", "bloom-7b1", "deepseek-v3.1",
                         "llama-4-maverick-17b-128e-instruct", "nemotron-nano-9b-v2"}) {
    const KernelGraph g = build_kernel_graph(model(id), request(1, 128, 8));
    for (const auto& [from, to] : g.edges) {
      EXPECT_LT(from, to) << id;
      EXPECT_LT(to, static_cast<int>(g.nodes.size())) << id;
    }
    for (int i = 1; i < static_cast<int>(g.nodes.size()); ++i)  // only norms read the layer's input
      EXPECT_TRUE(g.nodes[i].type == KernelType::norm ||
                  std::any_of(g.edges.begin(), g.edges.end(), [&](auto e) { return e.second == i; }))
          << id << i;
  }
}

TEST(KernelGraph, FalconParallelBlockHasOneResidualAdd) {
  const KernelGraph g = build_kernel_graph(model("falcon-7b"), request(1, 128, 8));
  const auto adds = nodes_of(g, KernelType::add);
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_DOUBLE_EQ(adds[0]->prefill.ops, 2.0 * 128 * 4544);  // x + attention + MLP
}

TEST(KernelGraph, Falcon40bHasTwoNormsOneAllReduceAndOneAdd) {
  const KernelGraph g = build_kernel_graph(model("falcon-40b"), request(1, 128, 8, 8));
  // ln_attn and ln_mlp both read the layer's input (no inputs inside the layer graph).
  for (const char* norm : {"norm_attn", "norm_mlp"}) {
    const KernelNode& n = node(g, norm);
    EXPECT_DOUBLE_EQ(n.prefill.ops, 7.0 * 128 * 8192) << norm;
  }
  EXPECT_EQ(nodes_of(g, KernelType::allreduce).size(), 1u);  // attention + MLP outputs reduced together
  const auto adds = nodes_of(g, KernelType::add);
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_DOUBLE_EQ(adds[0]->prefill.ops, 2.0 * 128 * 8192);  // x + attention + MLP
  EXPECT_EQ(node(g, "k_proj").d_out, 64);                    // 8 KV groups of 64 over 8 GPUs
}

// GPT-J-6B, batch 1, prompt 128, gen 8 (7 decode steps), bf16 (no torch_dtype): 16 heads of 256, rotary_dim 64.
TEST(KernelGraph, GptJRopeTurnsOnlyItsRotaryDimsAndOneNormFeedsBothBranches) {
  const KernelGraph g = build_kernel_graph(model("gpt-j-6b"), request(1, 128, 8));
  const KernelNode& rope = node(g, "rope");
  EXPECT_EQ(rope.d_in, 2 * 16 * 64);                                // q and k, 64 of each head's 256 dims
  EXPECT_DOUBLE_EQ(rope.prefill.ops, 3.0 * 128 * 2048);             // 786,432
  EXPECT_DOUBLE_EQ(rope.prefill.act_load_bytes, 128.0 * 2048 * 2);  // 524,288
  ASSERT_EQ(nodes_of(g, KernelType::norm).size(), 1u);              // ln_1 only
  const auto adds = nodes_of(g, KernelType::add);
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_DOUBLE_EQ(adds[0]->prefill.ops, 2.0 * 128 * 4096);  // x + attention + MLP
  // Decode reads the layer's 201,355,264 weights, biases and LayerNorm in bf16 once per step.
  double weight_bytes = 0;
  for (const auto& n : g.nodes) weight_bytes += n.decode.weight_bytes;
  EXPECT_DOUBLE_EQ(weight_bytes, 7.0 * 201355264 * 2);
  EXPECT_DOUBLE_EQ(node(g, "q_proj").decode.weight_bytes, 7.0 * 4096 * 4096 * 2);  // no bias
}

TEST(KernelGraph, GptJLmHeadAddsItsBias) {
  const KernelGraph g = build_kernel_graph(model("gpt-j-6b"), request(1, 128, 8));
  const auto lm_head =
      std::find_if(g.step_nodes.begin(), g.step_nodes.end(), [](const KernelNode& n) { return n.kernel == "lm_head"; });
  ASSERT_NE(lm_head, g.step_nodes.end());
  EXPECT_DOUBLE_EQ(lm_head->decode.ops, 2.0 * 7 * 4096 * 50400 + 7.0 * 50400);
  EXPECT_DOUBLE_EQ(lm_head->decode.weight_bytes, 7.0 * (4096.0 * 50400 + 50400) * 2);
}

TEST(KernelGraph, GptNeoXParallelResidualHasTwoNormsOfTheInputAndOneAdd) {
  const KernelGraph g = build_kernel_graph(model("dolly-v2-12b"), request(1, 128, 8));  // 40 heads of 128
  for (const char* norm : {"norm_attn", "norm_mlp"}) {
    const int index = static_cast<int>(&node(g, norm) - g.nodes.data());
    EXPECT_TRUE(std::none_of(g.edges.begin(), g.edges.end(), [&](auto e) { return e.second == index; })) << norm;
  }
  EXPECT_EQ(nodes_of(g, KernelType::add).size(), 1u);
  EXPECT_DOUBLE_EQ(node(g, "rope").prefill.ops, 3.0 * 128 * (40 * 32 + 40 * 32));  // rotary_pct 0.25: 32 of 128
  EXPECT_DOUBLE_EQ(node(g, "q_proj").prefill.ops, 2.0 * 128 * 5120 * 5120 + 128.0 * 5120);  // fused QKV's bias
}

TEST(KernelGraph, GptNeoXSequentialResidualAddsTwiceAndTurnsWholeHeads) {
  const KernelGraph g = build_kernel_graph(model("redpajama-incite-7b-chat"), request(1, 128, 8));
  EXPECT_EQ(nodes_of(g, KernelType::add).size(), 2u);                        // use_parallel_residual false
  EXPECT_DOUBLE_EQ(node(g, "rope").prefill.ops, 3.0 * 128 * (4096 + 4096));  // rotary_pct 1.0
}

// DeepSeek-V3.1 on 8 GPUs: 16 heads each; batch 1, prompt 1024, gen 128 (127 decode steps, contexts 1025..1151,
// 138,176 keys in all). bf16 KV cache (torch_dtype), fp8 weights and activations (quantization_config).
TEST(KernelGraph, DeepSeekMlaCountsBothPaths) {
  const ModelSpec m = model("deepseek-v3.1");
  Request r = request(1, 1024, 128, 8);
  r.precision = m.default_precision;  // wfp8-afp8-kvbf16
  const KernelGraph g = build_kernel_graph(m, r);
  const KernelNode& attention = node(g, "fused_attention");
  // Prefill, expanded: 16 heads x 1024 x 1025 / 2 pairs x (2 x 192 + 2 x 128 + 5) = 5,415,936,000.
  EXPECT_DOUBLE_EQ(attention.prefill.ops, 16.0 * 524800 * 645);
  // Decode, absorbed: 16 x 138,176 pairs x (2 x 576 + 2 x 512 + 5), the 16 heads computed as a 64-row tile: 4 x
  // 4,821,789,696; one 576-element bf16 latent row per key: 138,176 x 1152 B = 159,178,752 B of cache.
  EXPECT_DOUBLE_EQ(attention.decode.ops, 64.0 * 138176 * 2181);
  EXPECT_DOUBLE_EQ(attention.decode.kv_load_bytes, 138176.0 * 576 * 2);
  // kv_a_proj (replicated, 7168 -> 576) writes the latent + k_pe of each token: 1024 x 576 x 2 B.
  EXPECT_EQ(node(g, "kv_a_proj").d_out, 576);
  EXPECT_DOUBLE_EQ(node(g, "kv_a_proj").prefill.kv_store_bytes, 1024.0 * 576 * 2);
  EXPECT_DOUBLE_EQ(node(g, "q_a_proj").prefill.ops, 2.0 * 1024 * 7168 * 1536);  // replicated: not split
  EXPECT_EQ(node(g, "q_b_proj").d_out, 16 * 192);
  // kv_b_proj, 512 -> 16 x (128 + 128): fp8 in prefill, 16-bit absorbed copies in decode (127 x 512 x 4096 x 2 B).
  EXPECT_DOUBLE_EQ(node(g, "kv_b_proj").prefill.weight_bytes, 512.0 * 4096);
  EXPECT_DOUBLE_EQ(node(g, "kv_b_proj").decode.weight_bytes, 127.0 * 512 * 4096 * 2);
  EXPECT_DOUBLE_EQ(node(g, "kv_b_proj").decode.ops, 2.0 * 127 * 512 * 4096);
  EXPECT_EQ(node(g, "o_proj").d_in, 16 * 128);
}

TEST(KernelGraph, DeepSeekMoeHasThreeDenseLayersAndAnUngatedSharedExpert) {
  const KernelGraph g = build_kernel_graph(model("deepseek-v3.1"), request(1, 1024, 128, 8));
  EXPECT_DOUBLE_EQ(node(g, "gate_proj").layer_share, 3.0 / 61);  // first_k_dense_replace 3: 18432 wide
  EXPECT_EQ(node(g, "gate_proj").d_out, 18432 / 8);
  EXPECT_DOUBLE_EQ(node(g, "router").layer_share, 58.0 / 61);
  EXPECT_EQ(node(g, "router").d_out, 256);
  // Sigmoid router with the score-correction bias: 2 x 7168 x 256 + 256 ops per token (58 of 61 layers).
  EXPECT_DOUBLE_EQ(node(g, "router").prefill.ops * 61, 58 * (1024.0 * (2 * 7168 * 256 + 256)));
  EXPECT_EQ(node(g, "down_proj", "shared").d_in, 2048 / 8);  // n_shared_experts 1 x moe_intermediate_size
  EXPECT_FALSE(std::any_of(g.nodes.begin(), g.nodes.end(), [](const KernelNode& n) {
    return n.kernel == "shared_expert_gate";  // Qwen2-MoE's gate; DeepSeek adds its shared expert ungated
  }));
  EXPECT_DOUBLE_EQ(node(g, "up_proj", "routed").experts_loaded_decode, 8.0);  // top-8 of 256 at batch 1
}

TEST(KernelGraph, Llama4ChunkedAndNopeLayers) {
  // Scout on 4 GPUs (10 heads, 2 KV heads each), prompt 16384: 36 RoPE layers attend within chunks of 8192
  // (2 x 8192 x 8193 / 2 = 67,117,056 pairs per head), 12 NoPE layers to the whole prompt (16384 x 16385 / 2 =
  // 134,225,920). Each pair costs 4 x 128 + 5 ops.
  const KernelGraph g = build_kernel_graph(model("llama-4-scout-17b-16e-instruct"), request(1, 16384, 100, 4));
  EXPECT_DOUBLE_EQ(node(g, "fused_attention").prefill.ops * 48, 10.0 * 517 * (36 * 67117056.0 + 12 * 134225920.0));
  EXPECT_DOUBLE_EQ(node(g, "rope").layer_share, 36.0 / 48);  // NoPE layers skip the rotation
  EXPECT_EQ(node(g, "fused_attention").layer_share, 1.0);
  EXPECT_EQ(node(g, "down_proj", "shared").d_in, 8192 / 4);
  EXPECT_DOUBLE_EQ(node(g, "up_proj", "routed").experts_loaded_decode, 1.0);  // top-1
}

TEST(KernelGraph, NemotronHybridMeansOverMambaAttentionAndMlpLayers) {
  // Nemotron-Nano-9B-v2, batch 8, prompt 2000, gen 500 (499 decode steps, 3992 decode tokens), one GPU.
  const KernelGraph g = build_kernel_graph(model("nemotron-nano-9b-v2"), request(8, 2000, 500));
  EXPECT_DOUBLE_EQ(node(g, "in_proj").layer_share, 27.0 / 56);
  EXPECT_DOUBLE_EQ(node(g, "fused_attention").layer_share, 4.0 / 56);
  EXPECT_DOUBLE_EQ(node(g, "up_proj").layer_share, 25.0 / 56);
  EXPECT_EQ(node(g, "in_proj").d_out, 22656);  // z 10240 + x 10240 + B, C 2 x 8 x 128 + dt 128
  EXPECT_FALSE(std::any_of(g.nodes.begin(), g.nodes.end(), [](const KernelNode& n) { return n.kernel == "rope"; }));
  // Decode scan: per token 128 heads x (5 x 80 x 128 + 2 x 80) ops; the 1,310,720-element fp32 state read and written.
  const KernelNode& scan = node(g, "ssd_scan");
  EXPECT_DOUBLE_EQ(scan.decode.ops * 56, 27 * 3992.0 * 128 * (5 * 80 * 128 + 160));
  EXPECT_DOUBLE_EQ(scan.decode.kv_load_bytes * 56, 27 * 3992.0 * 1310720 * 4);
  // Prefill scan, chunk 256: per token 128 x (2 x 256 x 80 + 4 x 128 x 80 + 256 + 160) + 8 x 2 x 256 x 128.
  EXPECT_DOUBLE_EQ(scan.prefill.ops * 56, 27 * 16000.0 * (128 * (40960 + 40960 + 416) + 524288));
  // Squared ReLU, not gated: 2 ops per element of the 15680-wide MLP.
  EXPECT_DOUBLE_EQ(node(g, "act_mlp").prefill.ops * 56, 25 * 2.0 * 16000 * 15680);
}

void expect_error(const std::string& id, const Request& r, const std::string& fragment) {
  try {
    build_kernel_graph(model(id), r);
    FAIL() << "expected an error containing " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(KernelGraph, AbsurdRequestsAreClearErrors) {
  expect_error("llama-3.1-8b", request(0, 128, 8), "--batch must be at least 1");
  expect_error("llama-3.1-8b", request(1, -5, 8), "--prompt must be at least 1");
  expect_error("llama-3.1-8b", request(1, 128, 0), "--gen must be at least 1");
  expect_error("llama-3.1-8b", request(1000000, 128, 8), "--batch 1000000 is absurd");
  expect_error("llama-3.1-8b", request(1, 128, 8, 3), "32 attention heads, which 3 GPUs cannot split");
  expect_error("llama-2-7b", request(1, 4000, 200), "exceeds llama-2-7b's context window of 4096");
  Request r = request(1, 128, 8);
  r.engine = "foo";
  expect_error("llama-3.1-8b", r, "--engine 'foo' is unknown");
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

void expect_same_cost(const KernelCost& a, const KernelCost& b, const std::string& where) {
  EXPECT_EQ(a.ops, b.ops) << where;
  EXPECT_EQ(a.weight_bytes, b.weight_bytes) << where;
  EXPECT_EQ(a.act_load_bytes, b.act_load_bytes) << where;
  EXPECT_EQ(a.act_store_bytes, b.act_store_bytes) << where;
  EXPECT_EQ(a.kv_load_bytes, b.kv_load_bytes) << where;
  EXPECT_EQ(a.kv_store_bytes, b.kv_store_bytes) << where;
  EXPECT_EQ(a.net_bytes, b.net_bytes) << where;
  EXPECT_EQ(a.tokens, b.tokens) << where;
  EXPECT_EQ(a.dequant_ops, b.dequant_ops) << where;
}

// Every bundled model, prefill and decode on 1 and 2 GPUs: the direct path for a single layer kind gives exactly the
// graph of the union of layer kinds (same nodes in the same order, same costs to the bit, same edges, shares of 1).
TEST(KernelGraph, SingleKindModelsBuildTheSameGraphAsTheUnion) {
  int single_kind = 0;
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const ModelSpec model = ModelCatalog::bundled().resolve(entry.id);
    for (int gpus : {1, 2}) {
      Request r;
      r.batch = 3, r.prompt_tokens = 700, r.gen_tokens = 90, r.gpus = gpus;
      if (model.heads % gpus != 0) continue;
      KernelGraph direct, by_union;
      try {
        direct = build_kernel_graph(model, r);
        by_union = build_kernel_graph_by_union(model, r);
      } catch (const Error&) {
        continue;  // a request this model cannot run on this many GPUs
      }
      single_kind += gpus == 1 && std::all_of(model.layer_specs.begin(), model.layer_specs.end(),
                                              [&](const LayerSpec& l) { return l == model.layer_specs.front(); });
      ASSERT_EQ(direct.nodes.size(), by_union.nodes.size()) << entry.id;
      EXPECT_EQ(direct.edges, by_union.edges) << entry.id;
      for (size_t i = 0; i < direct.nodes.size(); ++i) {
        const KernelNode &a = direct.nodes[i], &b = by_union.nodes[i];
        const std::string where = entry.id + " " + a.kernel;
        EXPECT_EQ(a.kernel, b.kernel) << where;
        EXPECT_EQ(a.expert, b.expert) << where;
        EXPECT_EQ(a.block, b.block) << where;
        EXPECT_EQ(a.layer_share, b.layer_share) << where;
        EXPECT_EQ(a.experts_loaded_decode, b.experts_loaded_decode) << where;
        expect_same_cost(a.prefill, b.prefill, where + " prefill");
        expect_same_cost(a.decode, b.decode, where + " decode");
      }
    }
  }
  EXPECT_GE(single_kind, 50);  // most bundled models have one layer kind: the direct path is what they run
}

// Every bundled model on 1 and 2 GPUs, flash and eager attention: one template per setup, evaluated for requests of
// other batches, prompts and gens in turn (some shorter, some longer than the setup's), gives build_kernel_graph's
// graph for each to the bit: same nodes, edges, shares, experts loaded and costs.
TEST(KernelGraphTemplate, EvaluatesEveryRequestOfASetupAsBuildKernelGraphDoes) {
  const std::vector<std::array<long, 3>> counts = {
      {1, 1, 1}, {3, 700, 90}, {64, 128, 2}, {8, 4000, 300}, {1, 129, 1000}};
  int setups = 0;
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const ModelSpec model = ModelCatalog::bundled().resolve(entry.id);
    for (int gpus : {1, 2})
      for (bool flash : {true, false}) {
        Request setup = request(1, 16, 4, gpus);
        setup.flash_attention = flash;
        std::optional<KernelGraphTemplate> graphs;
        try {
          graphs.emplace(model, setup);
        } catch (const Error&) {
          continue;  // this model cannot run on this many GPUs
        }
        ++setups;
        for (const auto& [batch, prompt, gen] : counts) {
          Request r = setup;
          r.batch = batch, r.prompt_tokens = prompt, r.gen_tokens = gen;
          if (model.max_positions && prompt + gen > *model.max_positions) continue;
          const KernelGraph& fast = graphs->evaluate(r);
          const KernelGraph reference = build_kernel_graph(model, r);
          const std::string where =
              fmt::format("{} gpus {} flash {} batch {} prompt {} gen {}", entry.id, gpus, flash, batch, prompt, gen);
          ASSERT_EQ(fast.nodes.size(), reference.nodes.size()) << where;
          ASSERT_EQ(fast.step_nodes.size(), reference.step_nodes.size()) << where;
          EXPECT_EQ(fast.edges, reference.edges) << where;
          EXPECT_EQ(fast.layers, reference.layers) << where;
          for (size_t i = 0; i < fast.nodes.size() + fast.step_nodes.size(); ++i) {
            const bool step = i >= fast.nodes.size();
            const size_t j = step ? i - fast.nodes.size() : i;
            const KernelNode& a = step ? fast.step_nodes[j] : fast.nodes[j];
            const KernelNode& b = step ? reference.step_nodes[j] : reference.nodes[j];
            EXPECT_EQ(a.kernel, b.kernel) << where;
            EXPECT_EQ(a.layer_share, b.layer_share) << where << " " << a.kernel;
            EXPECT_EQ(a.experts_loaded_prefill, b.experts_loaded_prefill) << where << " " << a.kernel;
            EXPECT_EQ(a.experts_loaded_decode, b.experts_loaded_decode) << where << " " << a.kernel;
            expect_same_cost(a.prefill, b.prefill, where + " " + a.kernel + " prefill");
            expect_same_cost(a.decode, b.decode, where + " " + a.kernel + " decode");
          }
        }
      }
  }
  EXPECT_GE(setups, 200);  // 76 models, most on 1 and 2 GPUs, both attention kernels
}

}  // namespace
}  // namespace llmco2
