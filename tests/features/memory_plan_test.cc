// Memory as engines manage it: weights at their stored dtype, the engine's reserve, KV-cache waves, values by hand.
#include <gtest/gtest.h>

#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "features/memory_fit.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"
#include "support/catalogs.h"

namespace llmco2 {
namespace {

using testing_support::gpu;
using testing_support::model;

Request request(const ModelSpec& m, long batch, long prompt, long gen, int gpus, const std::string& dtype = "") {
  Request r;
  r.batch = batch;
  r.prompt_tokens = prompt;
  r.gen_tokens = gen;
  r.gpus = gpus;
  r.precision = m.precision_for(dtype);
  return r;
}

TEST(MemoryPlan, Llama31_8bWeightsAtEachPrecision) {
  const ModelSpec m = model("llama-3.1-8b");
  EXPECT_DOUBLE_EQ(plan_memory(m, request(m, 1, 1024, 128, 1), gpu("h100-sxm")).weight_bytes_per_gpu,
                   16060522496.0);  // 8,030,261,248 x 2 bytes
  // w4a16: 6,979,588,096 layer weights x (0.5 + 2/128 scales) + 1,050,673,152 embedding/LM-head weights x 2
  EXPECT_DOUBLE_EQ(plan_memory(m, request(m, 1, 1024, 128, 1, "w4a16"), gpu("h100-sxm")).weight_bytes_per_gpu,
                   6979588096.0 * 0.515625 + 1050673152.0 * 2);
  // Tensor parallelism splits every weight, embeddings included.
  EXPECT_DOUBLE_EQ(plan_memory(m, request(m, 1, 1024, 128, 2), gpu("h100-sxm")).weight_bytes_per_gpu,
                   16060522496.0 / 2);
}

// TensorRT-LLM gives the KV cache 0.9 of the memory the weights and activations leave free; vLLM gives weights + KV
// 0.9 of the whole GPU. llama-3.1-70b at TP 4 on 40 GB A100s: 35.3 GB of bf16 weights per GPU leave too little for
// vLLM's 4 GB reserve plus activations, while TensorRT-LLM runs it with 0.9 of the rest as its cache.
TEST(MemoryPlan, TensorRtLlmSizesTheKvCacheFromTheMemoryLeftFree) {
  const ModelSpec m = model("llama-3.1-70b");
  const Gpu a100 = gpu("a100-40gb-sxm");
  Request r = request(m, 1, 1024, 128, 4);
  EXPECT_FALSE(plan_memory(m, r, a100).weights_fit);
  r.engine = "trt-llm";
  const MemoryPlan trt = plan_memory(m, r, a100);
  ASSERT_TRUE(trt.runs()) << trt.note;
  const double free_bytes = a100.memory_bytes - trt.weight_bytes_per_gpu - activation_peak_bytes_per_gpu(m, r);
  EXPECT_NEAR(trt.kv_capacity_bytes_per_gpu, 0.9 * free_bytes, 1e-6 * free_bytes);
  EXPECT_NO_THROW(check_memory_fit(m, r, a100));
}

TEST(MemoryPlan, KvPerSequenceUsesGqaHeadsPerGpuAndTheKvDtype) {
  const ModelSpec m = model("llama-3.1-8b");  // 32 layers, 8 KV heads of 128
  // Per token and layer: 2 (K, V) x 8 heads x 128 x 2 bytes = 4096 bytes.
  const MemoryPlan bf16 = plan_memory(m, request(m, 1, 1024, 128, 1), gpu("h100-sxm"));
  EXPECT_DOUBLE_EQ(bf16.kv_bytes_per_sequence_per_gpu, 4096.0 * 32 * 1152);
  EXPECT_DOUBLE_EQ(
      plan_memory(m, request(m, 1, 1024, 128, 1, "w16a16kv8"), gpu("h100-sxm")).kv_bytes_per_sequence_per_gpu,
      2048.0 * 32 * 1152);  // kv8 halves it
  EXPECT_DOUBLE_EQ(plan_memory(m, request(m, 1, 1024, 128, 4), gpu("h100-sxm")).kv_bytes_per_sequence_per_gpu,
                   1024.0 * 32 * 1152);  // 2 KV heads per GPU
  // gpt-oss: 18 full layers hold the context, 18 sliding layers at most 128 tokens; 8 KV heads of 64.
  const ModelSpec oss = model("gpt-oss-120b");
  EXPECT_DOUBLE_EQ(plan_memory(oss, request(oss, 1, 1024, 128, 1), gpu("h100-sxm")).kv_bytes_per_sequence_per_gpu,
                   18 * 2048.0 * 1152 + 18 * 2048.0 * 128);
}

TEST(MemoryPlan, MlaCachesOneLatentPerTokenOnEveryGpu) {
  // DeepSeek-V3.1: 61 layers x (512 latent + 64 rope) x 2 bytes per token, whole on each GPU (the latent is one
  // shared head, not split by tensor parallelism). At 1152 tokens: 80,953,344 B per sequence, against 128 heads x
  // (192 + 128) x 2 B = 81,920 B per token and layer for a plain-MHA cache of the same heads (71x more).
  const ModelSpec m = model("deepseek-v3.1");
  EXPECT_DOUBLE_EQ(kv_bytes_per_sequence_per_gpu(m, request(m, 1, 1024, 128, 8)), 61.0 * 1152 * 576 * 2);
  EXPECT_DOUBLE_EQ(state_bytes_per_sequence_per_gpu(m, request(m, 1, 1024, 128, 8)), 0);
}

TEST(MemoryPlan, ChunkedLocalLayersHoldOnlyTheirChunk) {
  // Scout on 4 GPUs (2 KV heads of 128 each), 16,484 tokens: 36 chunked layers hold 8192 tokens (vLLM frees
  // finished chunks), 12 NoPE layers all 16,484; 2 (K, V) x 2 x 128 x 2 B = 1024 B per token and layer.
  const ModelSpec m = model("llama-4-scout-17b-16e-instruct");
  EXPECT_DOUBLE_EQ(kv_bytes_per_sequence_per_gpu(m, request(m, 1, 16384, 100, 4)), (36 * 8192.0 + 12 * 16484.0) * 1024);
}

TEST(MemoryPlan, GemmaSlidingLayersHoldOnlyTheirWindow) {
  // Gemma-3-12B, 8,192 tokens: 40 sliding layers hold 1024, 8 global layers all 8192; 2 x 8 KV heads x 256 x 2 B
  // = 8192 B per token and layer.
  const ModelSpec m = model("gemma-3-12b-it");
  EXPECT_DOUBLE_EQ(kv_bytes_per_sequence_per_gpu(m, request(m, 1, 8000, 192, 1)), (40 * 1024.0 + 8 * 8192.0) * 8192);
}

TEST(MemoryPlan, MambaStateDoesNotGrowWithTheContext) {
  // Nemotron-Nano-9B-v2: 27 Mamba layers x (conv window 3 x 12288 x 2 B + fp32 SSM state 128 x 80 x 128 x 4 B) =
  // 143,548,416 B per sequence at any length; 4 attention layers x 2 x 8 KV heads x 128 x 2 B = 16,384 B per token.
  const ModelSpec m = model("nemotron-nano-9b-v2");
  const double state = 27 * (3 * 12288.0 * 2 + 1310720 * 4);
  EXPECT_DOUBLE_EQ(state, 143548416.0);
  EXPECT_DOUBLE_EQ(state_bytes_per_sequence_per_gpu(m, request(m, 1, 100, 10, 1)), state);
  EXPECT_DOUBLE_EQ(state_bytes_per_sequence_per_gpu(m, request(m, 1, 10000, 10, 1)), state);
  EXPECT_DOUBLE_EQ(kv_bytes_per_sequence_per_gpu(m, request(m, 1, 1000, 24, 1)), state + 1024 * 16384.0);
  EXPECT_DOUBLE_EQ(state_bytes_per_sequence_per_gpu(m, request(m, 1, 100, 10, 2)), state / 2);  // heads split
}

TEST(MemoryPlan, EngineReserveIsTheUnusedShareAndTheActivationPeak) {
  const ModelSpec m = model("llama-2-70b");
  const Request r = request(m, 1, 1024, 128, 4);
  // 8192 rows x (2 x 8192 + 3 x 28672/4) x 2 bytes + 256 x 32000 fp32 logits
  EXPECT_DOUBLE_EQ(activation_peak_bytes_per_gpu(m, r), 8192.0 * 37888 * 2 + 256.0 * 32000 * 4);
  EXPECT_DOUBLE_EQ(plan_memory(m, r, gpu("a100-80gb-sxm")).reserve_bytes_per_gpu,
                   0.1 * 80e9 + 8192.0 * 37888 * 2 + 256.0 * 32000 * 4);
}

TEST(MemoryPlan, GptOssInMxfp4FitsOneH100) {
  const ModelSpec m = model("gpt-oss-120b");
  const MemoryPlan plan = plan_memory(m, request(m, 1, 1024, 128, 1), gpu("h100-sxm"));
  EXPECT_TRUE(plan.runs());
  EXPECT_NEAR(plan.weight_bytes_per_gpu, 65.19e9, 0.01e9);  // 60.7 GiB, as the published checkpoint
  EXPECT_EQ(plan.waves, 1);
  EXPECT_NO_THROW(check_memory_fit(m, request(m, 1, 1024, 128, 1), gpu("h100-sxm")));
  // In bf16 (233.7 GB) it needs 4 GPUs (64 heads, 8 KV heads: 1, 2, 4, 8 split evenly).
  try {
    check_memory_fit(m, request(m, 1, 1024, 128, 1, "bf16"), gpu("h100-sxm"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs --gpus 4 or more"), std::string::npos) << e.what();
  }
}

TEST(MemoryPlan, Llama2_70bBatch256RunsInWavesOnFourA100s) {
  const ModelSpec m = model("llama-2-70b");
  const Request r = request(m, 256, 1024, 1024, 4);
  const MemoryPlan plan = plan_memory(m, r, gpu("a100-80gb-sxm"));
  // weights 68,976,648,192 x 2 / 4 = 34.49 GB; reserve 8 GB + 0.65 GB; 36.86 GB left for the cache.
  EXPECT_DOUBLE_EQ(plan.weight_bytes_per_gpu, 68976648192.0 * 2 / 4);
  EXPECT_NEAR(plan.kv_capacity_bytes_per_gpu, 36858150912.0, 1.0);
  // One sequence: 2 x 80 layers x 2 KV heads x 128 x 2 bytes x 2048 tokens = 167,772,160 bytes: 219 fit.
  EXPECT_DOUBLE_EQ(plan.kv_bytes_per_sequence_per_gpu, 167772160.0);
  EXPECT_EQ(plan.sequences_per_wave, 219);
  EXPECT_EQ(plan.waves, 2);
  EXPECT_EQ(plan.last_wave_sequences, 37);
  EXPECT_NE(plan.note.find("2 waves"), std::string::npos) << plan.note;
  EXPECT_NO_THROW(check_memory_fit(m, r, gpu("a100-80gb-sxm")));  // no longer refused
  EXPECT_FALSE(memory_fit(m, r, gpu("a100-80gb-sxm")).fits());    // ...but not in one wave
}

TEST(MemoryPlan, RefusedWhenWeightsOrOneSequenceDoNotFit) {
  const ModelSpec m = model("llama-2-70b");
  const MemoryPlan weights = plan_memory(m, request(m, 1, 1024, 128, 1), gpu("a100-80gb-sxm"));
  EXPECT_FALSE(weights.weights_fit);
  EXPECT_EQ(weights.waves, 0);
  try {
    check_memory_fit(m, request(m, 1, 1024, 128, 1), gpu("a100-80gb-sxm"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs --gpus 2 or more"), std::string::npos) << e.what();
  }
  // Llama-3.1-8B on an L4 (24 GB): 16.06 GB weights + 2.4 + 0.97 GB reserve leave 4.5 GB; a 100k-token sequence
  // needs 13.1 GB.
  const ModelSpec small = model("llama-3.1-8b");
  const MemoryPlan context = plan_memory(small, request(small, 1, 100000, 100, 1), gpu("l4"));
  EXPECT_TRUE(context.weights_fit);
  EXPECT_FALSE(context.runs());
  EXPECT_NE(context.note.find("one sequence of 100100 tokens"), std::string::npos) << context.note;
  EXPECT_THROW(check_memory_fit(small, request(small, 1, 100000, 100, 1), gpu("l4")), Error);
}

// The planner of a setup gives plan_memory's plan for every request of it, to the bit: every bundled model on one and
// several GPUs, at an 8-bit KV cache and the model's precision, with static-batch and continuous-batching engines,
// requests that fit, run in waves or do not run. Its layer groups sum the KV cache in another order than the
// layer-by-layer loop; every term is an integer times the KV bytes, so both sums are exact.
TEST(MemoryPlanner, EqualsPlanMemoryForEveryRequestOfASetup) {
  const std::vector<std::array<long, 3>> counts = {{1, 1, 1}, {8, 1024, 256}, {256, 4000, 3000}, {4096, 30000, 2000}};
  int waves = 0, plans = 0;
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const ModelSpec m = model(entry.id);
    for (const std::string gpu_id : {"a100-80gb-sxm", "l4"})
      for (int gpus : {1, 4})
        for (const std::string engine : {"vllm", "hf-transformers"}) {
          const Gpu g = gpu(gpu_id);
          Request setup = request(m, 1, 16, 16, gpus, gpus == 1 ? "" : "w16a16kv8");
          setup.engine = engine;
          const MemoryPlanner planner(m, setup, g);
          for (const auto& [batch, prompt, gen] : counts) {
            Request r = setup;
            r.batch = batch, r.prompt_tokens = prompt, r.gen_tokens = gen;
            const MemoryPlan fast = planner.plan(r), reference = plan_memory(m, r, g);
            const std::string where =
                fmt::format("{} {} x{} {} {}/{}/{}", entry.id, gpu_id, gpus, engine, batch, prompt, gen);
            EXPECT_EQ(fast.weight_bytes_per_gpu, reference.weight_bytes_per_gpu) << where;
            EXPECT_EQ(fast.reserve_bytes_per_gpu, reference.reserve_bytes_per_gpu) << where;
            EXPECT_EQ(fast.kv_bytes_per_sequence_per_gpu, reference.kv_bytes_per_sequence_per_gpu) << where;
            EXPECT_EQ(fast.kv_capacity_bytes_per_gpu, reference.kv_capacity_bytes_per_gpu) << where;
            EXPECT_EQ(fast.sequences_per_wave, reference.sequences_per_wave) << where;
            EXPECT_EQ(fast.waves, reference.waves) << where;
            EXPECT_EQ(fast.last_wave_sequences, reference.last_wave_sequences) << where;
            EXPECT_EQ(fast.note, reference.note) << where;
            waves += reference.waves > 1;
            ++plans;
          }
        }
  }
  EXPECT_GT(waves, 100);  // the long, wide requests run in waves on most models
  EXPECT_EQ(plans, 76 * 2 * 2 * 2 * 4);
}

}  // namespace
}  // namespace llmco2
