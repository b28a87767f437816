// Pipeline parallelism (Request::pipeline_parallel): a step worked out by hand through two stages, the stage link of
// the node catalog, the largest stage's memory, and the invariants a pipeline keeps on real models.
#include <gtest/gtest.h>

#include "support/all_modules.h"
#include "support/catalogs.h"
#include "support/error_of.h"
#include "support/hand_sim_params.h"

#include "core/error.h"
#include "features/memory_fit.h"
#include "hardware/gpu_catalog.h"
#include "hardware/node.h"
#include "model/model_catalog.h"
#include "sim/simulator.h"

namespace llmco2 {
namespace {

using testing_support::error_of;
using testing_support::hand_sim_params;

// `steps` decode steps of one GEMM (1e12 operations, 1e9 bytes, launched twice, 1e15 op/s peak), `tokens` tokens per
// step, on a 700 W board idling at 100 W with 2 TB/s, through `stages` stages with `microbatches` in flight.
SimWorkload two_gemms(int stages, double microbatches, double tokens = 100) {
  SimWorkload w;
  SimSegment s;
  s.steps = 10, s.step_tokens = tokens, s.microbatches = microbatches;
  s.kernels.push_back({{KernelClass::matrix, 1e12, 1e9, 0, 1e9, 1e15}, 2});
  w.decode.push_back(s);
  w.roofs.memory_bytes_per_s = 2e12;
  w.tdp_w = 700, w.idle_w = 100;
  w.engine = "vllm";
  w.steady_state = true;
  w.pipeline = {stages, 1000, 1e9, 5e-5};  // 1 kB per token per GPU over 1 GB/s, 50 us a send
  w.gpus_total = stages;
  return w;
}

// One pass of a micro-batch (test OneSegmentByHand of simulator_test.cc): kernels 2 x 2.01e-3 = 4.02e-3 s busy, host
// 1e-3 s, 5.02e-3 s. Through two stages it also sends hidden state and residual once: two sends of 50 us and 100 tokens
// x 1 kB at 1 GB/s (1e-4 s), 2e-4 s. One micro-batch: the chain, 5.22e-3 s a step; each GPU runs half the pass.
TEST(Pipeline, OneMicroBatchRunsTheChainWithHalfThePassOnEachGpu) {
  const SimResult r = run_workload(two_gemms(2, 1), hand_sim_params());
  EXPECT_NEAR(r.latency_s.decode, 10 * 5.22e-3, 1e-12);
  // Per GPU and step: 100 W x 5.22e-3 s + 600 W x (0.2 x 2.01e-3 + 0.5 x 1e-3 + 0.4 x 0.5e-3) s, two GPUs.
  const double per_gpu_j = 100 * 5.22e-3 + 600 * (0.2 * 2.01e-3 + 0.5 * 1e-3 + 0.4 * 0.5e-3);
  EXPECT_NEAR(r.energy_j.decode, 10 * 2 * per_gpu_j, 1e-9);
  EXPECT_EQ(r.gpus, 2);
}

// Two micro-batches in a steady pipeline: a stage's turn (2.01e-3 s) and the host's (1e-3 s) fit twice in the chain
// (5.22e-3 s), so a step still takes the chain while each GPU runs the whole pass's work: twice the tokens of one
// micro-batch in the same time, on twice the GPUs.
TEST(Pipeline, MicroBatchesFillTheBubbleOfTheChain) {
  const SimResult r = run_workload(two_gemms(2, 2), hand_sim_params());
  EXPECT_NEAR(r.latency_s.decode, 10 * 5.22e-3, 1e-12);
  const double per_gpu_j = 100 * 5.22e-3 + 600 * (0.2 * 4.02e-3 + 0.5 * 2e-3 + 0.4 * 1e-3);
  EXPECT_NEAR(r.energy_j.decode, 10 * 2 * per_gpu_j, 1e-9);
}

// Four stages and four micro-batches: a stage's turn is 1.005e-3 s, the host's 1e-3 s; four of either fit in the
// chain, 4.02e-3 + 1e-3 + 3 x 2e-4 = 5.62e-3 s. With a 3 ms host step the host's four turns (1.2e-2 s) exceed the
// chain (4.02e-3 + 3e-3 + 6e-4 s): the pipeline waits for the host, which serves one micro-batch at a time.
TEST(Pipeline, AHostSlowerThanTheStagesSetsThePace) {
  SimWorkload w = two_gemms(4, 4);
  EXPECT_NEAR(run_workload(w, hand_sim_params()).latency_s.decode, 10 * 5.62e-3, 1e-12);
  SimParams slow = hand_sim_params();
  EngineProfile engine = slow.engines.get("default");
  engine.step_host_s = 3e-3;
  SimParams p = slow;
  p.engines = {};
  p.engines.add(engine);
  EXPECT_NEAR(run_workload(w, p).latency_s.decode, 10 * 4 * 3e-3, 1e-12);
}

// A prefill runs once: the pipeline fills, the chain of the first micro-batch and a turn for each one behind it.
TEST(Pipeline, APrefillFillsThePipelineOnce) {
  SimWorkload w = two_gemms(2, 2);
  w.steady_state = false;
  w.prefill = w.decode;
  w.prefill[0].steps = 1;
  w.decode.clear();
  EXPECT_NEAR(run_workload(w, hand_sim_params()).latency_s.prefill, 5.22e-3 + 2.01e-3, 1e-12);
}

Request setup(const ModelSpec& m, int gpus, int stages, long batch) {
  Request r;
  r.gpus = gpus, r.pipeline_parallel = stages, r.batch = batch;
  r.prompt_tokens = 512, r.gen_tokens = 64;
  r.precision = m.precision_for("");
  return r;
}

// Llama-3.1-405B (126 layers) in bf16 does not fit 8 H100s; over 2 stages of 8 each GPU holds 63 layers and one end
// of the model. By parameters: 405,853,388,800 in all, 2 x 2,101,346,304 in the embedding table and the LM head
// (128,256 x 16,384 each, untied); each GPU: (63/126 x (405,853,388,800 - 4,202,692,608) + 2,101,346,304) / 8
// parameters at 2 bytes.
TEST(Pipeline, EachGpuHoldsItsStagesLayersAndOneEnd) {
  const ModelSpec m = testing_support::model("llama-3.1-405b");
  const Gpu h100 = testing_support::gpu("h100-sxm");
  EXPECT_FALSE(plan_memory(m, setup(m, 8, 1, 1), h100).weights_fit);
  const MemoryPlan two = plan_memory(m, setup(m, 8, 2, 1), h100);
  ASSERT_TRUE(two.runs()) << two.note;
  const double total = m.total_params(), end = m.embedding_params();
  ASSERT_DOUBLE_EQ(end, 128256.0 * 16384);
  EXPECT_NEAR(two.weight_bytes_per_gpu, 2 * (0.5 * (total - 2 * end) + end) / 8, 1e-6 * two.weight_bytes_per_gpu);
  // Refused on one group of 8, the message names both ways out: a tensor-parallel group of 16 (128 heads and 8 KV
  // heads allow it), or 2 stages of the 8.
  EXPECT_NE(error_of([&] {
              check_memory_fit(m, setup(m, 8, 1, 1), h100);
            }).find("it needs --gpus 16 or more (or --pp 2 stages of --gpus 8)"),
            std::string::npos);
  // The KV cache of a sequence: its 63 layers only, half of one stage-less GPU's.
  EXPECT_DOUBLE_EQ(two.kv_bytes_per_sequence_per_gpu,
                   0.5 * plan_memory(m, setup(m, 8, 1, 1), h100).kv_bytes_per_sequence_per_gpu);
}

// Stages within one 8-GPU node talk over NVLink (3 us a send); over nodes through the node's scale-out network, a
// 400 Gb/s ConnectX-7 per GPU in a DGX H100 (32 us a send). Each GPU sends its 1/tp slice of hidden state and
// residual: Llama-3.1-70B (hidden 8,192) at TP 4: 2 x 8,192 x 2 B / 4 = 8,192 B per token.
TEST(Pipeline, StagesTalkOverNvlinkInANodeAndTheScaleOutNetworkBetweenNodes) {
  const ModelSpec m = testing_support::model("llama-3.1-70b");
  const Gpu h100 = testing_support::gpu("h100-sxm");
  const SimPipeline inside = pipeline_of(m, h100, setup(m, 4, 2, 1));
  EXPECT_EQ(inside.stages, 2);
  EXPECT_DOUBLE_EQ(inside.boundary_bytes_per_token, 8192);
  EXPECT_DOUBLE_EQ(inside.link_bytes_per_s, 450e9);  // NVLink 4: 900 GB/s both ways
  EXPECT_DOUBLE_EQ(inside.latency_s, 3e-6);
  const SimPipeline across = pipeline_of(m, h100, setup(m, 8, 2, 1));
  EXPECT_DOUBLE_EQ(across.boundary_bytes_per_token, 4096);
  EXPECT_DOUBLE_EQ(across.link_bytes_per_s, 400e9 / 8);
  EXPECT_DOUBLE_EQ(across.latency_s, 32e-6);
  EXPECT_DOUBLE_EQ(hardware::NodeCatalog::bundled_default_for("a100-80gb-sxm")->scale_out_bytes_per_s_per_gpu,
                   200e9 / 8);  // DGX A100: a 200 Gb/s HDR card per GPU
  // An L4's node names no network between nodes.
  const ModelSpec small = testing_support::model("llama-3.1-8b");
  EXPECT_NE(error_of([&] {
              pipeline_of(small, testing_support::gpu("l4"), setup(small, 8, 2, 1));
            }).find("names no network between nodes"),
            std::string::npos);
}

// Batch 1 over two stages: the same kernels one after another, and a send at the boundary per step. Llama-3.1-70B,
// TP 8 x 2 stages over two DGX H100 against TP 8 on one: the prefill's 16 tokens cross once (2 x 32 us + 16 x
// 4,096 B at 50 GB/s), each of the 63 decode steps one token (2 x 32 us + 4,096 B at 50 GB/s). (A short prompt
// keeps the prefill below the power limit, where the stage-less GPUs would slow their clocks.)
TEST(Pipeline, BatchOneOverTwoNodesAddsTheTransfersAndNothingElse) {
  const ModelSpec m = testing_support::model("llama-3.1-70b");
  const Gpu h100 = testing_support::gpu("h100-sxm");
  const SimParams params = default_sim_params();
  Request r1 = setup(m, 8, 1, 1), r2 = setup(m, 8, 2, 1);
  r1.prompt_tokens = r2.prompt_tokens = 16;
  const SimResult one = simulate(m, h100, r1, {}, params);
  const SimResult two = simulate(m, h100, r2, {}, params);
  EXPECT_NEAR(two.latency_s.prefill - one.latency_s.prefill, 64e-6 + 16 * 4096 / 50e9, 1e-12);
  EXPECT_NEAR(two.latency_s.decode - one.latency_s.decode, 63 * (64e-6 + 4096 / 50e9), 1e-10);
  EXPECT_EQ(two.gpus, 16);
  // Twice the GPUs for the same work: the second node's idle power over the whole run, and more.
  EXPECT_GT(two.energy_j.total() - one.energy_j.total(), 8 * h100.idle_w * one.latency_s.total());
}

// A steady state on 2 stages runs two micro-batches of half the batch: with the stages' kernels the larger share of a
// step, it serves the batch at about the pace one stage-less group serves half of it.
TEST(Pipeline, TwoStagesServeTwiceTheBatchAtAboutTheStepOfHalfOfIt) {
  const ModelSpec m = testing_support::model("llama-3.1-70b");
  const Gpu h100 = testing_support::gpu("h100-sxm");
  const SimParams params = default_sim_params();
  SimScenario steady;
  steady.measures = Measures::steady_state;
  Request half = setup(m, 4, 1, 64), both = setup(m, 4, 2, 128);
  half.engine = both.engine = "vllm";
  const SimResult one = simulate(m, h100, half, steady, params);
  const SimResult two = simulate(m, h100, both, steady, params);
  const double ratio = two.latency_s.decode / one.latency_s.decode;
  EXPECT_GE(ratio, 1.0);   // never faster than the stage-less group
  EXPECT_LT(ratio, 1.05);  // the sends and a host turn at most
}

TEST(Pipeline, StagesAreCheckedAgainstTheModel) {
  const ModelSpec m = testing_support::model("llama-3.1-8b");  // 32 layers
  Request r = setup(m, 1, 33, 1);
  EXPECT_NE(error_of([&] { validate_request(r, m); }).find("exceed llama-3.1-8b's 32 layers"), std::string::npos);
  r = setup(m, 8, 16, 1);
  EXPECT_NE(error_of([&] { validate_request(r, m); }).find("--gpus 8 x --pp 16 = 128 GPUs"), std::string::npos);
  r = setup(m, 1, 2, 5);
  EXPECT_EQ(r.microbatches(), 2);
  EXPECT_EQ(r.microbatch(), 3);
  r.batch = 1;
  EXPECT_EQ(r.microbatches(), 1);
  EXPECT_DOUBLE_EQ(setup(m, 1, 3, 1).stage_layer_share(32), 11.0 / 32);
}

// The batch over the stages: 5 sequences in 4 stages run as micro-batches of at most 2, and the work counted is the 5
// sequences' (5 / 2 = 2.5 micro-batches of 2), not 4 x 2: the step's energy above idle is 2.5 / 4 of the largest
// micro-batch's pass.
TEST(Pipeline, UnevenMicroBatchesCountTheBatchsWorkNotWholeMicroBatches) {
  const ModelSpec m = testing_support::model("llama-3.1-70b");
  const Gpu h100 = testing_support::gpu("h100-sxm");
  Request five = setup(m, 2, 4, 5);
  const Workload w = describe_workload(m, h100, five, {});
  ASSERT_FALSE(w.sim.decode.empty());
  EXPECT_DOUBLE_EQ(w.sim.decode[0].microbatches, 2.5);
  EXPECT_DOUBLE_EQ(w.sim.decode[0].sequences, 2);
}

}  // namespace
}  // namespace llmco2
