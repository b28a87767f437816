// Tests of the reference simulator: one step worked out by hand, and the physical invariants it must keep
// under both the uncalibrated and the calibrated (data/sim/params.json) parameters.
#include <gtest/gtest.h>

#include "support/all_modules.h"
#include "support/error_of.h"
#include "support/hand_sim_params.h"

#include <cmath>
#include <functional>

#include "core/error.h"

#include "core/json_io.h"
#include "engine/engine_profile.h"
#include "hardware/gpu_catalog.h"
#include "model/hf_config.h"
#include "model/model_catalog.h"
#include "sim/label.h"
#include "sim/simulator.h"

namespace llmco2 {
namespace {
using testing_support::hand_sim_params;

// A prefill of `steps` steps of one GEMM (`ops`, `bytes`, 1e15 op/s peak) launched `count` times per step, on a
// 700 W board idling at 100 W with 2 TB/s; engine "vllm" is not in hand_params: its "default" profile applies.
SimWorkload one_gemm_workload(double steps, double ops, double bytes, double count) {
  SimWorkload w;
  SimSegment s;
  s.steps = steps;
  s.kernels.push_back({{KernelClass::matrix, ops, bytes, 0, bytes, 1e15}, count});
  w.prefill.push_back(s);
  w.roofs.memory_bytes_per_s = 2e12;
  w.tdp_w = 700, w.idle_w = 100;
  w.engine = "vllm";
  return w;
}

TEST(Simulator, OneSegmentByHand) {
  const SimWorkload w = one_gemm_workload(10, 1e12, 1e9, 2);
  // kernel: 1e-5 + max(1e12 / (1e15 x 0.5), 1e9 / (2e12 x 0.5)) = 2.01e-3 s; 2 launches: 4.02e-3 s busy;
  // host launches 2 x 1e-6 s < busy; step: 4.02e-3 + 1e-3 host = 5.02e-3 s. Ideal compute 2 x 1e-3 s, memory 2 x 0.5e-3
  // s. energy/step = 100 W x 5.02e-3 s + 600 W x (0.2 x 4.02e-3 + 0.5 x 2e-3 + 0.4 x 1e-3) s = 0.502 + 1.3224 J.
  const SimResult r = run_workload(w, hand_sim_params());
  EXPECT_NEAR(r.latency_s.prefill, 10 * 5.02e-3, 1e-12);
  EXPECT_NEAR(r.energy_j.prefill, 10 * 1.8244, 1e-9);
  EXPECT_NEAR(r.mean_power_w, 1.8244 / 5.02e-3, 1e-6);
  EXPECT_EQ(r.energy_j.decode, 0);
}

// A GEMM of 40 rows on the CUDA cores, bf16 converted to fp32 (Volta under PyTorch): the thread block tiles 128 rows,
// so it costs 128 rows at 9.6 of the 15.7 TFLOP/s fp32 peak. ops = 2 x 40 x 4096 x 4096 = 1.34217728e9; time =
// 1e-5 + 1.34217728e9 x 128 / 40 / 9.6e12 = 1e-5 + 4.4739243e-4 s (its 33.6 MB at 2 TB/s x 0.5: 3.4e-5 s, less).
// Step: + 1e-6 launch hidden, + 1e-3 host = 1.45739243e-3 s. Power: active on the busy time, and power_simt (0.5)
// on the ops at the fp32 peak, 1.34217728e9 / 15.7e12 = 8.5488999e-5 s, not power_compute (which would be 0.9 here):
// energy = 100 W x t + 600 W x (0.2 x 4.5739243e-4 + 0.5 x 8.5488999e-5 + 0.4 x 1.6777216e-5) J.
TEST(Simulator, GemmsWithoutTensorUnitsRunOnTheCudaCoresInWholeTiles) {
  SimWorkload w = one_gemm_workload(1, 2.0 * 40 * 4096 * 4096, 4096.0 * 4096 * 2, 1);
  KernelWork& work = w.prefill.at(0).kernels.at(0).work;
  work.rows = 40, work.peak_ops_per_s = 15.7e12, work.simt_efficiency = kEmulatedGemmEfficiency;
  SimParams p = hand_sim_params();
  p.power.compute = 0.9, p.power.simt = 0.5;
  const SimResult r = run_workload(w, p);
  const double busy_s = 1e-5 + 4.4739243e-4, step_s = busy_s + 1e-3;
  EXPECT_NEAR(r.latency_s.prefill, step_s, 1e-10);
  const double memory_s = 4096.0 * 4096 * 2 / 2e12;
  EXPECT_NEAR(r.energy_j.prefill, 100 * step_s + 600 * (0.2 * busy_s + 0.5 * 8.5488999e-5 + 0.4 * memory_s), 1e-8);
  // A full tile of 128 rows costs what 40 rows do.
  work.rows = 128;
  work.ops = 2.0 * 128 * 4096 * 4096;
  EXPECT_NEAR(run_workload(w, p).latency_s.prefill, step_s, 1e-10);
}

// Llama-2-7B in bf16 on a V100 (no bf16 tensor cores), a 2048-token prefill: HF transformers keeps bf16, so every
// GEMM runs converted on the CUDA cores at 9.6 TFLOP/s (cuBLAS on a V100 at m = 2048, lablup/mlxcel issue 1654); its
// 2 x 6.74e9 x 2048 = 2.76e13 weight FLOPs alone take 2.9 s. vLLM casts to fp16 and runs on the 125 TFLOP/s tensor
// cores: under a quarter of that.
TEST(Simulator, Bf16OnAVoltaRunsAtTheConvertedCudaCoreRateUnderPyTorch) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-2-7b");
  const Gpu& v100 = GpuCatalog::bundled().resolve("v100-sxm2");
  auto prefill_s = [&](const std::string& engine) {
    Request r;
    r.batch = 1, r.prompt_tokens = 2048, r.gen_tokens = 1, r.engine = engine;
    r.precision = engine_precision(v100, m.precision_for("bf16"), engine).precision;
    return simulate(m, v100, r, SimScenario{}, default_sim_params()).latency_s.prefill;
  };
  const double weight_flops = 2 * 6.74e9 * 2048;
  const double hf_s = prefill_s("hf-transformers");
  EXPECT_GE(hf_s, weight_flops / 9.6e12);
  EXPECT_LE(hf_s, 1.5 * weight_flops / 9.6e12);
  EXPECT_LT(prefill_s("vllm"), hf_s / 4);
}

// An eager engine that loops over the routed experts in Python (HF transformers' MoE blocks) launches each loaded
// expert's kernels itself. One routed node in 32 layers with 8 experts loaded, each launch 1e-5 s on the GPU:
// fused (one launch per layer): busy 32 x 1e-5 = 3.2e-4 s > 32 x 1e-6 s of launches; step 3.2e-4 + 1e-3 s host.
// Looped at 2.5 launches per expert: 32 x 8 x 2.5 = 640 launches x 1e-6 s = 6.4e-4 s > busy; step 6.4e-4 + 1e-3 s.
TEST(Simulator, AnEngineLoopingOverExpertsLaunchesEachLoadedExpert) {
  SimWorkload w = one_gemm_workload(1, 0, 0, 32);
  w.prefill.at(0).kernels.at(0).work.loop_experts = 8;
  SimParams p = hand_sim_params();
  EXPECT_NEAR(run_workload(w, p).latency_s.prefill, 3.2e-4 + 1e-3, 1e-12);
  // Looping over 8 experts at 2.5 launches each: 32 x 8 x 2.5 x 1 us = 0.64 ms of launches, and the host waits for
  // the GPU in every such layer (each expert's torch.where), so the 0.32 ms of kernels add to it, not overlap.
  p.engines.at("default").expert_loop_launches = 2.5;
  EXPECT_NEAR(run_workload(w, p).latency_s.prefill, 3.2e-4 + 6.4e-4 + 1e-3, 1e-12);
  // Every routed node of a MoE block carries the experts it runs, the activation too (launched per expert as well):
  // Mixtral-8x7B at batch 1 decodes with its top-2 experts.
  const ModelSpec m = ModelCatalog::bundled().resolve("mixtral-8x7b");
  Request r;
  r.batch = 1, r.prompt_tokens = 64, r.gen_tokens = 2;
  r.precision = m.default_precision;
  int routed = 0;
  for (const KernelNode& node : build_kernel_graph(m, r).nodes)
    if (node.expert == "routed") {
      EXPECT_DOUBLE_EQ(node.experts_loaded_decode, 2.0) << node.kernel;
      ++routed;
    }
  EXPECT_EQ(routed, 4);  // gate, up, act, down
}

// A routed expert GEMM takes the token rows routed to it: Mixtral (8 experts, top-2) decoding 32 sequences sends
// 32 x 2 = 64 rows to the 8 (1 - (6/8)^32) = 7.9992 experts hit, 8.0 rows each (not 16: the routed node's tokens
// already count the top-2).
TEST(Simulator, RoutedExpertsSplitTheirTokenRowsAmongTheExpertsHit) {
  const ModelSpec m = ModelCatalog::bundled().resolve("mixtral-8x7b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request r;
  r.batch = 32, r.prompt_tokens = 64, r.gen_tokens = 2;
  r.precision = m.default_precision;
  const SimWorkload w = prepare_workload(m, gpu, r, {Measures::fixed_batch});
  const double hit = 8.0 * (1.0 - std::pow(0.75, 32));
  int routed = 0;
  for (const SimKernel& k : w.decode.at(0).kernels)
    if (k.work.loop_experts > 0 && k.work.kind == KernelClass::matrix) {
      EXPECT_NEAR(k.work.rows, 64.0 / hit, 1e-9);
      ++routed;
    }
  EXPECT_EQ(routed, 3);  // gate, up, down
}

// Latent attention's own kernel terms (KernelWork::latent) are taken by an MLA model's decode attention only: its
// expanded prefill and every other model's attention run FMHA kernels (the attention_* terms).
TEST(Simulator, OnlyAnMlaModelsDecodeAttentionIsLatent) {
  const Gpu gpu = GpuCatalog::bundled().resolve("h200");
  auto latent_attention = [&](const char* id, bool decode) {
    const ModelSpec m = ModelCatalog::bundled().resolve(id);
    Request r;
    r.batch = 4, r.prompt_tokens = 256, r.gen_tokens = 8, r.gpus = 8;
    r.precision = m.default_precision;
    const SimWorkload w = prepare_workload(m, gpu, r, {Measures::fixed_batch});
    int attention = 0, latent = 0;
    for (const SimKernel& k : (decode ? w.decode : w.prefill).at(0).kernels)
      if (k.work.keys_per_query > 0) ++attention, latent += k.work.latent ? 1 : 0;
    EXPECT_EQ(attention, 1) << id;
    return latent == 1;
  };
  EXPECT_TRUE(latent_attention("deepseek-v3.1", true));
  EXPECT_FALSE(latent_attention("deepseek-v3.1", false));
  EXPECT_FALSE(latent_attention("llama-3.1-70b", true));
}

// Which matrix kernels run on the CUDA cores, and at which of the two measured efficiencies: only where an NVIDIA GPU
// has no tensor units for the requested type. bf16 on a V100 (HF keeps it): converted, 9.6/15.7; fp32 and tf32 on a
// V100: native SGEMM, 14.0/15.7; bf16 on an A100 and fp16 on a V100: tensor cores (0); fp32 on an MI300X: AMD's
// matrix units run fp32 matmuls (0).
TEST(Simulator, OnlyNvidiaGpusWithoutTensorUnitsForTheTypeUseTheCudaCorePath) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.2-1b");
  auto matrix_simt = [&](const std::string& gpu, const std::string& dtype) {
    Request r;
    r.batch = 1, r.prompt_tokens = 256, r.gen_tokens = 2, r.engine = "hf-transformers";
    r.precision = m.precision_for(dtype);
    const SimWorkload w = prepare_workload(m, GpuCatalog::bundled().resolve(gpu), r, SimScenario{});
    for (const SimKernel& k : w.prefill.at(0).kernels)
      if (k.work.kind == KernelClass::matrix) return k.work.simt_efficiency;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(matrix_simt("v100-sxm2", "bf16"), 9.6 / 15.7);
  EXPECT_DOUBLE_EQ(matrix_simt("v100-sxm2", "fp32"), 14.0 / 15.7);
  EXPECT_DOUBLE_EQ(matrix_simt("v100-sxm2", "tf32"), 14.0 / 15.7);
  EXPECT_DOUBLE_EQ(matrix_simt("v100-sxm2", "fp16"), 0.0);
  EXPECT_DOUBLE_EQ(matrix_simt("a100-80gb-sxm", "bf16"), 0.0);
  EXPECT_DOUBLE_EQ(matrix_simt("a100-80gb-sxm", "fp32"), 14.0 / 15.7);
  EXPECT_DOUBLE_EQ(matrix_simt("mi300x", "fp32"), 0.0);
  // Native fp32 takes the fitted tile, not the converted kernels' 128 rows: a 40-row SGEMM costs 40 rows.
  KernelWork w{KernelClass::matrix, 2.0 * 40 * 4096 * 4096, 0, 0, 40, 15.7e12};
  KernelEfficiency e;
  e.gemm_tile_rows = 16, e.kernel_floor_s = 0, e.memory_half_bytes = 1;
  w.simt_efficiency = kSimtGemmEfficiency;
  EXPECT_NEAR(kernel_time_s(w, DeviceRoofs{2e12}, e, {}), w.ops / 14.0e12, 1e-12);
  w.simt_efficiency = kEmulatedGemmEfficiency;
  EXPECT_NEAR(kernel_time_s(w, DeviceRoofs{2e12}, e, {}), w.ops * 128 / 40 / 9.6e12, 1e-12);
}

// The layer GEMMs of a block-scaled fp8 checkpoint on an H100 are block-scaled kernels (Llama: q, k, v, o, gate, up,
// down); its LM head (kept bf16 by the checkpoint), every GEMM of a per-channel fp8 checkpoint and of a bf16 model are
// not. An A100 has no fp8 tensor cores: vLLM runs the same checkpoint weight-only (w8a16, Marlin), with no fp8 GEMM.
TEST(Simulator, OnlyBlockScaledLayerGemmsAreFlagged) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.1-8b");
  auto flagged = [&](const std::string& dtype, const std::string& gpu = "h100-sxm") {
    Request r;
    r.batch = 1, r.prompt_tokens = 256, r.gen_tokens = 2, r.engine = "vllm";
    r.precision = m.precision_for(dtype);
    const SimWorkload w = prepare_workload(m, GpuCatalog::bundled().resolve(gpu), r, SimScenario{});
    int n = 0;
    for (const SimKernel& k : w.prefill.at(0).kernels) n += k.work.block_scaled ? 1 : 0;
    return n;
  };
  EXPECT_EQ(flagged("wfp8-afp8-kvbf16-blk"), 7);
  EXPECT_EQ(flagged("wfp8afp8kvbf16"), 0);
  EXPECT_EQ(flagged("bf16"), 0);
  EXPECT_EQ(flagged("wfp8-afp8-kvbf16-blk", "a100-80gb-sxm"), 0);
}

// The host launches while the GPU runs what is queued; where it waits for the GPU first, the two add up. By hand: 10 ms
// of GPU work launched in 6 ms of host time take 10 ms overlapped, 16 ms serialised, and 0.25 x 10 + 0.75 x 16 =
// 14.5 ms when the host waits in 3 of 4 layers (4 GPUs of an accelerate layer split).
TEST(Simulator, HostWaitsSerialiseLaunchesAndKernels) {
  EXPECT_DOUBLE_EQ(kernels_wall_s(10e-3, 6e-3, 0.0), 10e-3);
  EXPECT_DOUBLE_EQ(kernels_wall_s(4e-3, 6e-3, 0.0), 6e-3);
  EXPECT_NEAR(kernels_wall_s(10e-3, 6e-3, 1.0), 16e-3, 1e-15);
  EXPECT_NEAR(kernels_wall_s(10e-3, 6e-3, 0.75), 14.5e-3, 1e-15);
}

// An accelerate layer split over 4 GPUs: the host waits for the GPU in 3 of 4 layers (host_wait_share), so 3/4 of the
// launch time adds to the kernels'. OneSegmentByHand's step with 1.5 ms a launch: 2 launches, 3 ms of host time under
// 4.02 ms of GPU work; one GPU overlaps them (4.02 + 1 ms host = 5.02 ms), the split adds 0.75 x 3 ms = 2.25 ms.
TEST(Simulator, ALayerSplitWaitsForTheGpuOnAllButTheFirstGpu) {
  SimWorkload w = one_gemm_workload(10, 1e12, 1e9, 2);
  SimParams p = hand_sim_params();
  p.engines.at("default").launch_host_s = 1.5e-3;
  EXPECT_NEAR(run_workload(w, p).latency_s.prefill, 10 * 5.02e-3, 1e-12);
  w.layer_split = true, w.gpus_total = 4;
  EXPECT_NEAR(run_workload(w, p).latency_s.prefill, 10 * (5.02e-3 + 2.25e-3), 1e-12);
}

// Block-scaled GEMMs reach block_scaled_efficiency of the 16-bit kernels' efficiencies on both roofs. By hand, with
// gemm 0.8, memory 0.9 (no ramp), block 0.5: 1 TFLOP at a 2 PFLOP/s fp8 peak takes 1e12 / (2e15 x 0.4) = 1.25 ms, and a
// memory-bound 1 GB at 3 TB/s takes 1e9 / (3e12 x 0.45) = 0.741 ms; unflagged, half of each.
TEST(Simulator, BlockScaledGemmsRunAtTheirShareOfTheEfficiencies) {
  KernelEfficiency e;
  e.gemm_efficiency = 0.8, e.memory_efficiency = 0.9, e.memory_half_bytes = 0, e.kernel_floor_s = 0;
  e.gemm_tile_rows = 16, e.block_scaled_efficiency = 0.5;
  KernelWork compute{KernelClass::matrix, 1e12, 1e6, 0, 4096, 2e15};
  KernelWork memory{KernelClass::matrix, 1e9, 1e9, 0, 8, 2e15};
  const DeviceRoofs roofs{3e12};
  EXPECT_NEAR(kernel_time_s(compute, roofs, e, {}), 0.625e-3, 1e-12);
  EXPECT_NEAR(kernel_time_s(memory, roofs, e, {}), 1e9 / (3e12 * 0.9), 1e-12);
  compute.block_scaled = memory.block_scaled = true;
  EXPECT_NEAR(kernel_time_s(compute, roofs, e, {}), 1.25e-3, 1e-12);
  EXPECT_NEAR(kernel_time_s(memory, roofs, e, {}), 1e9 / (3e12 * 0.45), 1e-12);
}

// Decode attention is not padded to a GEMM tile: a paged/split-KV kernel at batch 1 is the larger of reading its KV
// cache at the memory roof and its FLOPs at the attention efficiency. By hand, one query row over a 120k-token cache
// of Llama-3.1-8B on one layer (8 KV heads x 128 dims x 2 (K, V) x 2 bytes x 120,000 = 491.52 MB; 4 x 120,000 x 128
// x 32 heads = 1.966 GFLOP) at 3.35 TB/s x 0.9 and 989.4 TFLOP/s x 0.3: 491.52e6 / 3.015e12 = 163.0 us against
// 6.6 us of compute; a 36-row tile per query row made it 36 x 6.6 = 238.5 us, compute-bound.
TEST(Simulator, DecodeAttentionReadsItsCacheWithoutTilePadding) {
  KernelEfficiency e;
  e.attention_efficiency = 0.3, e.memory_efficiency = 0.9, e.memory_half_bytes = 0, e.kernel_floor_s = 0;
  e.gemm_tile_rows = 36;
  const double bytes = 8.0 * 128 * 2 * 2 * 120000, ops = 4.0 * 120000 * 128 * 32;
  const KernelWork attention{KernelClass::attention, ops, bytes, 0, 1, 989.4e12};
  const DeviceRoofs roofs{3.35e12};
  EXPECT_NEAR(kernel_time_s(attention, roofs, e, {}), bytes / (3.35e12 * 0.9), 1e-12);
  // A narrower cache halves the read: an 8-bit KV cache decodes faster.
  KernelWork kv8 = attention;
  kv8.mem_bytes = bytes / 2;
  EXPECT_NEAR(kernel_time_s(kv8, roofs, e, {}), bytes / 2 / (3.35e12 * 0.9), 1e-12);
  // A GEMM of one row still pays its tile.
  const KernelWork gemm{KernelClass::matrix, ops, 1e3, 0, 1, 989.4e12};
  e.gemm_efficiency = 0.3;
  EXPECT_NEAR(kernel_time_s(gemm, roofs, e, {}), 36 * ops / (989.4e12 * 0.3), 1e-12);
}

// The time a block-scaled GEMM loses against its 16-bit efficiency is CUDA-core work (block scales, FP32
// accumulation), and draws power as such. OneSegmentByHand's GEMM at block_scaled_efficiency 0.5: 1e-5 + max(1e12 /
// (1e15 x 0.25), 1e9 / (2e12 x 0.25)) = 4.01e-3 s a launch, 8.02e-3 s busy, 9.02e-3 s a step; its lost half, 2
// x 4.01e-3 x 0.5 s, counts at power_simt (0.3): energy/step = 100 W x 9.02e-3 s + 600 W x (0.2 x 8.02e-3 + 0.5 x 2e-3
// + 0.4 x 1e-3 + 0.3 x 4.01e-3) s = 0.902 + 2.5242 J.
TEST(Simulator, TheTimeBlockScaledGemmsLoseDrawsCudaCorePower) {
  SimWorkload w = one_gemm_workload(10, 1e12, 1e9, 2);
  w.prefill[0].kernels[0].work.block_scaled = true;
  SimParams p = hand_sim_params();
  p.block_scaled_efficiency = 0.5;
  p.power.simt = 0.3;
  const SimResult r = run_workload(w, p);
  EXPECT_NEAR(r.latency_s.prefill, 10 * 9.02e-3, 1e-12);
  EXPECT_NEAR(r.energy_j.prefill, 10 * (0.902 + 2.5242), 1e-9);
}

// HF runs gpt-oss's experts as batched matmuls over all experts (GptOssExperts at inference): no per-expert loop, so
// its routed kernels carry no loop count; Mixtral's carry the experts they load.
TEST(Simulator, GptOssExpertsAreBatchedInHfNotLooped) {
  auto loop_experts = [](const std::string& name) {
    const ModelSpec m = ModelCatalog::bundled().resolve(name);
    Request r;
    r.batch = 1, r.prompt_tokens = 64, r.gen_tokens = 2, r.engine = "hf-transformers";
    r.precision = m.default_precision;
    r.gpus = 2;
    double most = 0;
    const SimWorkload w = prepare_workload(m, GpuCatalog::bundled().resolve("h100-sxm"), r, SimScenario{});
    for (const SimKernel& k : w.decode.at(0).kernels) most = std::max(most, k.work.loop_experts);
    return most;
  };
  EXPECT_EQ(loop_experts("gpt-oss-20b"), 0.0);
  EXPECT_DOUBLE_EQ(loop_experts("mixtral-8x7b"), 2.0);  // top-2 of 8 at batch 1
}

TEST(Simulator, KernelsOfSomeLayersLaunchOnlyInThoseLayers) {
  // DeepSeek-V3.1 on 8 x B200, prefill of 1 x 1024: the router runs in the 58 MoE layers, the dense MLP in 3, MLA in
  // all 61. A launch carries one layer's work: 2 x 1024 x 7168 x 256 + 1024 x 256 router ops.
  const ModelSpec m = ModelCatalog::bundled().resolve("deepseek-v3.1");
  Request r;
  r.batch = 1, r.prompt_tokens = 1024, r.gen_tokens = 2, r.gpus = 8;
  r.precision = m.default_precision;
  const SimWorkload w = prepare_workload(m, GpuCatalog::bundled().resolve("b200"), r, SimScenario{});
  std::vector<double> counts;
  double router_ops = 0;
  for (const SimKernel& k : w.prefill.at(0).kernels) {
    counts.push_back(k.count);
    if (k.count == 58 && k.work.kind == KernelClass::matrix && k.work.ops == 1024.0 * (2 * 7168 * 256 + 256))
      router_ops = k.work.ops;
  }
  EXPECT_GT(router_ops, 0);
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 3.0), 4);    // the dense MLP: gate, up, act, down
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 58.0), 9);   // router, routed and shared experts' 4 each
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 61.0), 15);  // 12 of the MLA block, norm_mlp, allreduce, add
}

// A step that only waits on the engine's host work (no kernels: 1 ms of step_host_s) draws idle plus power_wait of the
// dynamic range: 100 W + 0.25 x (700 - 100) W = 250 W, i.e. 0.25 J per step; with power_wait 0, idle alone.
TEST(Simulator, HostWaitInsideAStepDrawsTheWaitShareOfTheDynamicRange) {
  SimWorkload w;
  SimSegment s;
  s.steps = 4;
  w.decode.push_back(s);
  w.tdp_w = 700, w.idle_w = 100;
  w.engine = "vllm";
  SimParams p = hand_sim_params();
  p.power.wait = 0.25;
  const SimResult r = run_workload(w, p);
  EXPECT_NEAR(r.latency_s.decode, 4e-3, 1e-15);
  EXPECT_NEAR(r.energy_j.decode, 4 * 0.25, 1e-12);
  p.power.wait = 0;
  EXPECT_NEAR(run_workload(w, p).mean_power_w, 100.0, 1e-9);
}

TEST(Simulator, PowerNeverExceedsTheTdpOrTheCap) {
  SimWorkload w;
  SimSegment s;
  s.steps = 1;
  s.kernels.push_back({{KernelClass::matrix, 1e15, 1e6, 0, 1e6, 1e15}, 1});  // compute-bound at half the peak
  w.prefill.push_back(s);
  w.roofs.memory_bytes_per_s = 2e12;
  w.tdp_w = 700, w.idle_w = 100;
  SimParams p = hand_sim_params();
  p.power = {0.4, 1.4, 1.0};  // the largest coefficients the ranges allow: the load would exceed 1
  EXPECT_NEAR(run_workload(w, p).mean_power_w, 700.0, 1e-9);
  w.tdp_w = 400;  // a 400 W power cap
  EXPECT_NEAR(run_workload(w, p).mean_power_w, 400.0, 1e-9);
}

// The dynamic power of the one-GEMM step below at a share f of its clocks (sim/simulator.cc dynamic_power_w): its
// `gemm_s` of compute-bound GEMM stretch by s = gemm_s (1/f - 1); the cycles (active x busy time) draw f^3 per
// second, the operations (compute and CUDA-core work at the peaks) f^2 of their energy, the bytes the same.
double one_gemm_power_w(double f, double busy_s, double time_s, double gemm_s, double simt_s, const PowerParams& p) {
  const double s = gemm_s * (1 / f - 1);
  return 600 * (p.active * f * f * f * (busy_s + s) + f * f * (p.compute * 1.0 + p.simt * simt_s) + p.memory * 5e-7) /
         (time_s + s);
}

// A compute-bound step whose work would draw more than the board allows runs at lower clocks. One GEMM of 1e15
// operations at 0.5 of a 1e15 op/s peak: 2 s (+ 10 us floor) busy, 1 ms host, 2.00101 s. With active 0.4 and compute
// 1.4 it would draw 600 W x (0.4 x 2.00001 + 1.4 x 1.0 + 1.0 x 5e-7) / 2.00101 = 659.7 W over a 600 W headroom: the
// clocks drop to where the step draws the headroom, f = 0.9689 (one_gemm_power_w = 600 W, solved by bisection by
// hand), and the 2 s of GEMM stretch to 2 / f, at the TDP. A 400 W cap (300 W headroom): f =
// 0.7690.
TEST(Simulator, WorkBeyondThePowerLimitRunsAtLowerClocks) {
  SimWorkload w = one_gemm_workload(1, 1e15, 1e6, 1);
  SimParams p = hand_sim_params();
  p.power = {0.4, 1.4, 1.0, 0.0};
  EXPECT_NEAR(one_gemm_power_w(1.0, 2.00001, 2.00101, 2, 0, p.power), 659.7, 0.05);
  SimResult r = run_workload(w, p);
  const auto clock_of = [](double time_s) { return 2.0 / (time_s - 2.00101 + 2.0); };
  EXPECT_NEAR(clock_of(r.latency_s.prefill), 0.9689, 1e-4);
  EXPECT_NEAR(one_gemm_power_w(clock_of(r.latency_s.prefill), 2.00001, 2.00101, 2, 0, p.power), 600, 1e-6);
  EXPECT_NEAR(r.mean_power_w, 700, 1e-9);
  w.tdp_w = 400;
  w.die.dynamic_w = 600;  // the die's range stays 600 W: only the limit falls
  r = run_workload(w, p);
  EXPECT_NEAR(clock_of(r.latency_s.prefill), 0.7690, 1e-4);
  EXPECT_NEAR(one_gemm_power_w(clock_of(r.latency_s.prefill), 2.00001, 2.00101, 2, 0, p.power), 300, 1e-6);
  EXPECT_NEAR(r.mean_power_w, 400, 1e-9);
}

// A locked clock below what the limit allows: the step runs at it and draws less than the limit. The GEMM above at
// f = 0.5 under no cap takes 2.00101 + 2 = 4.00101 s and draws 100 W + one_gemm_power_w(0.5) = 100 + 600 x (0.4 x
// 0.125 x 4.00001 + 0.25 x 1.4 + 5e-7) / 4.00101 = 182.5 W: the cycles at an eighth of their power per second, the
// operations at a quarter of their energy, and 730 J in all against 1,446 J unlocked at the TDP.
TEST(Simulator, ALockedClockRunsTheStepAtItBelowTheLimit) {
  SimWorkload w = one_gemm_workload(1, 1e15, 1e6, 1);
  w.clock_share = 0.5;
  SimParams p = hand_sim_params();
  p.power = {0.4, 1.4, 1.0, 0.0};
  const SimResult r = run_workload(w, p);
  EXPECT_NEAR(r.latency_s.prefill, 4.00101, 1e-9);
  const double expected_w = 100 + 600 * (0.4 * 0.125 * 4.00001 + 0.25 * 1.4 + 5e-7) / 4.00101;
  EXPECT_NEAR(r.mean_power_w, expected_w, 1e-9);
  EXPECT_LT(r.mean_power_w * r.latency_s.prefill, 700 * 2.06524);  // less energy than at the limit unlocked
}

// Throttling stretches a block-scaled GEMM at its own efficiency. The GEMM of WorkBeyondThePowerLimitRunsAtLowerClocks,
// block-scaled at 0.5: 1e15 / (1e15 x 0.5 x 0.5) = 4 s (+ 10 us floor), 4.00101 s a step; its lost 2.000005 s count
// as CUDA-core work. With active 0.4, compute 1.4, memory 1.0, simt 1.4 it would draw 600 W x (0.4 x 4.00001 + 1.4 x
// 1.0 + 1.0 x 5e-7 + 1.4 x 2.000005) / 4.00101 = 1.4497 x 600 W: the clocks drop to f = 0.8836 and all 4 s of GEMM
// stretch (not the 2 s it would take at the 16-bit efficiency).
TEST(Simulator, ThrottlingStretchesBlockScaledGemmsAtTheirOwnEfficiency) {
  SimWorkload w = one_gemm_workload(1, 1e15, 1e6, 1);
  w.prefill[0].kernels[0].work.block_scaled = true;
  SimParams p = hand_sim_params();
  p.block_scaled_efficiency = 0.5;
  p.power = {0.4, 1.4, 1.0, 0.0, 1.4};
  EXPECT_NEAR(one_gemm_power_w(1.0, 4.00001, 4.00101, 4, 2.000005, p.power) / 600, 1.4497, 1e-4);
  const SimResult r = run_workload(w, p);
  const double clock = 4.0 / (r.latency_s.prefill - 4.00101 + 4.0);
  EXPECT_NEAR(clock, 0.8836, 1e-4);
  EXPECT_NEAR(one_gemm_power_w(clock, 4.00001, 4.00101, 4, 2.000005, p.power), 600, 1e-6);
  EXPECT_NEAR(r.mean_power_w, 700, 1e-9);
}

TEST(Simulator, CudaGraphsReplaceEagerLaunchesInDecode) {
  // 1,000 kernels of 1 us each: eager launches at 20 us each make the host the bound (20 ms); a graph replay costs
  // one launch, so the GPU time (1,000 x (floor 1e-5 + ~0)) bounds the step.
  SimWorkload w;
  SimSegment s;
  s.steps = 1, s.step_tokens = 1;
  s.kernels.push_back({{KernelClass::vector, 0, 1, 0, 1, 1e12}, 1000});
  w.prefill.push_back(s);
  w.roofs.memory_bytes_per_s = 2e12;
  w.tdp_w = 700, w.idle_w = 100;
  SimParams p = hand_sim_params();
  p.engines.at("default").launch_host_s = 2e-5;
  p.engines.at("default").step_host_s = 0;
  const double eager_s = run_workload(w, p).latency_s.prefill;
  p.engines.at("default").cuda_graphs = true;
  p.engines.at("default").graph_launch_s = 1e-5;
  const double graph_s = run_workload(w, p).latency_s.prefill;
  EXPECT_NEAR(eager_s, 1000 * 2e-5, 1e-9);
  EXPECT_NEAR(graph_s, 1000 * (1e-5 + 1.0 / (2e12 * 0.5)), 1e-9);
}

class Invariants : public ::testing::TestWithParam<bool> {
 protected:
  SimParams params() const { return GetParam() ? load_sim_params(default_sim_params_path()) : default_sim_params(); }
  SimResult run(const std::string& model, long batch, long prompt, long gen, int gpus, const SimScenario& sc = {}) {
    Request r;
    r.batch = batch, r.prompt_tokens = prompt, r.gen_tokens = gen, r.gpus = gpus;
    const ModelSpec m = ModelCatalog::bundled().resolve(model);
    r.precision = {m.default_dtype, m.default_dtype, m.default_dtype};
    return simulate(m, GpuCatalog::bundled().resolve("h100-sxm"), r, sc, params());
  }
};

TEST_P(Invariants, EnergyGrowsWithPromptGenAndBatch) {
  const double base = run("llama-3.1-8b", 4, 512, 128, 1).energy_j.total();
  EXPECT_GT(run("llama-3.1-8b", 4, 2048, 128, 1).energy_j.total(), base);
  EXPECT_GT(run("llama-3.1-8b", 4, 512, 512, 1).energy_j.total(), base);
  EXPECT_GT(run("llama-3.1-8b", 16, 512, 128, 1).energy_j.total(), base);
  // ...but batching amortises the weights: per request, batch 16 costs less than batch 4.
  EXPECT_LT(run("llama-3.1-8b", 16, 512, 128, 1).energy_j.total() / 16, base / 4);
}

TEST_P(Invariants, MoreGpusCostMoreForATinyRequest) {
  const double one = run("llama-3.1-8b", 1, 16, 8, 1).energy_j.total();
  const double two = run("llama-3.1-8b", 1, 16, 8, 2).energy_j.total();
  const double eight = run("llama-3.1-8b", 1, 16, 8, 8).energy_j.total();
  EXPECT_GT(two, one);
  EXPECT_GT(eight, two);
}

TEST_P(Invariants, PowerStaysBetweenIdleAndTdp) {
  for (long batch : {1L, 64L}) {
    const SimResult r = run("llama-3.1-8b", batch, 1024, 128, 1);
    EXPECT_GE(r.mean_power_w, 75.0);   // H100 SXM idle
    EXPECT_LE(r.mean_power_w, 700.0);  // TDP
  }
}

TEST_P(Invariants, RecomputingWithoutAKvCacheCostsMore) {
  SimScenario no_cache;
  no_cache.kv_cache = false;
  EXPECT_GT(run("llama-3.1-8b", 1, 512, 256, 1, no_cache).energy_j.decode,
            2 * run("llama-3.1-8b", 1, 512, 256, 1).energy_j.decode);
}

// Layers split over 4 GPUs: the host waits for the GPU in 3/4 of the layers, so the request is slower than on one
// GPU; the 3 waiting GPUs draw idle power (75 W on an H100 SXM) and the working one between idle and the TDP.
TEST_P(Invariants, LayerSplitPaysIdlePowerOfTheWaitingGpus) {
  SimScenario split;
  split.parallelism = Parallelism::layer_split;
  split.layer_split_gpus = 4;
  const SimResult one = run("llama-3.1-8b", 1, 512, 64, 1);
  const SimResult four = run("llama-3.1-8b", 1, 512, 64, 1, split);
  const double t = four.latency_s.total();
  EXPECT_GT(t, one.latency_s.total());
  const double working_gpu_j = four.energy_j.total() - 3 * 75.0 * t;
  EXPECT_GE(working_gpu_j, 75.0 * t - 1e-9);
  EXPECT_LE(working_gpu_j, 700.0 * t + 1e-9);
}

TEST_P(Invariants, NoiseIsSeededAndCentredOnTheCleanValue) {
  const SimResult clean = run("llama-3.1-8b", 1, 512, 64, 1);
  SimParams p = params();
  EXPECT_DOUBLE_EQ(add_noise(clean, p, 7).energy_j.total(), add_noise(clean, p, 7).energy_j.total());
  EXPECT_NE(add_noise(clean, p, 7).energy_j.total(), add_noise(clean, p, 8).energy_j.total());
  double log_sum = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) log_sum += std::log(add_noise(clean, p, seed).energy_j.decode);
  EXPECT_NEAR(log_sum / 2000, std::log(clean.energy_j.decode), 4 * p.energy_noise / std::sqrt(2000.0));
}

INSTANTIATE_TEST_SUITE_P(UncalibratedAndCalibrated, Invariants, ::testing::Bool());

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

using testing_support::error_of;

TEST(SimParamsFiles, AMissingParamsFileIsAnError) {
  const std::string message = error_of([] { load_sim_params("/nonexistent/params.json"); });
  EXPECT_NE(message.find("/nonexistent/params.json"), std::string::npos) << message;
  EXPECT_NE(message.find("not found"), std::string::npos) << message;
}

TEST(SimParamsFiles, AValueOutsideItsPhysicalRangeNamesFileAndKey) {
  Json j = sim_params_to_json(default_sim_params());
  j["shared"]["power_active"] = 2.0;  // the range is [0, 0.4]
  const std::string message =
      error_of([&] { sim_params_from_json(j, "p.json", default_sim_params().kernels, default_sim_params().engines); });
  EXPECT_NE(message.find("p.json"), std::string::npos) << message;
  EXPECT_NE(message.find("shared.power_active"), std::string::npos) << message;
  EXPECT_NE(message.find("[0, 0.4]"), std::string::npos) << message;
}

// A params.json of an older version, with w8a8_efficiency (renamed when its meaning narrowed to block-scaled GEMMs),
// is refused with the rename and what to do, not as a bare missing key.
TEST(SimParamsFiles, TheOldW8a8KeyNamesItsRename) {
  Json j = sim_params_to_json(default_sim_params());
  j["shared"]["w8a8_efficiency"] = j["shared"]["block_scaled_efficiency"];
  j["shared"].erase("block_scaled_efficiency");
  const std::string message = error_of(
      [&] { sim_params_from_json(j, "old.json", default_sim_params().kernels, default_sim_params().engines); });
  EXPECT_NE(message.find("old.json"), std::string::npos) << message;
  EXPECT_NE(message.find("'w8a8_efficiency' is now 'block_scaled_efficiency'"), std::string::npos) << message;
  EXPECT_NE(message.find("llmco2 calibrate"), std::string::npos) << message;
}

TEST(SimParamsFiles, AnEngineValueOutsideItsRangeNamesEngineAndField) {
  Json j = read_json_file(default_engine_catalog_path());
  j["engines"]["vllm"]["step_host_s"] = -1e-3;
  const std::string message = error_of([&] { engine_catalog_from_json(j, "e.json"); });
  EXPECT_NE(message.find("e.json: engines.vllm"), std::string::npos) << message;
  EXPECT_NE(message.find("step_host_s"), std::string::npos) << message;
  j = read_json_file(default_engine_catalog_path());
  j["engines"]["hf-transformers"]["launch_host_s"] = std::nan("");
  EXPECT_NE(error_of([&] { engine_catalog_from_json(j, "e.json"); }).find("not a finite number"), std::string::npos);
}

// Which all-reduce each engine pays, looked up once per setup: a CUDA-graph engine with its own kernel takes that
// kernel's curve (SGLang's, not vLLM's) and NCCL's graph class; an eager engine takes the eager NCCL class, and its own
// kernel, launched eagerly, two stages of that class's step; over PCIe no engine has its own all-reduce.
TEST(SimParamsFiles, EachEngineTakesItsOwnAllReduceCurveAndClass) {
  const SimParams p = default_sim_params();
  SimWorkload w;
  w.generation = "hopper", w.gpu_id = "h100-sxm", w.link = "nvswitch";
  w.engine = "sglang";
  const ResolvedParams sglang = resolve_params(w, p);
  ASSERT_TRUE(sglang.direct_allreduce);
  EXPECT_EQ(sglang.direct_allreduce->direct_latency_s, p.kernels.direct.at("hopper/sglang").direct_latency_s);
  EXPECT_NE(sglang.direct_allreduce->direct_latency_s, p.kernels.direct.at("hopper/vllm").direct_latency_s);
  EXPECT_EQ(&sglang.network, &p.kernels.networks.at("hopper/nvswitch"));
  w.engine = "vllm-eager";
  const ResolvedParams eager = resolve_params(w, p);
  const NetworkEfficiency& eager_ring = p.kernels.networks.at("hopper/nvswitch-eager");
  EXPECT_EQ(&eager.network, &eager_ring);
  ASSERT_TRUE(eager.direct_allreduce);
  EXPECT_DOUBLE_EQ(eager.direct_allreduce->direct_latency_s, 2 * eager_ring.step_latency_s);
  EXPECT_DOUBLE_EQ(eager.direct_allreduce->direct_bus_efficiency, eager_ring.bus_efficiency);
  w.engine = "vllm-0.2";  // eager, NCCL
  const ResolvedParams nccl = resolve_params(w, p);
  EXPECT_FALSE(nccl.direct_allreduce);
  EXPECT_EQ(&nccl.network, &eager_ring);
  w.engine = "vllm", w.link = "pcie";
  EXPECT_FALSE(resolve_params(w, p).direct_allreduce);
}

// An engine names whose measured all-reduce kernel it runs: one of the three the tables measured, and only with its
// own all-reduce on.
TEST(SimParamsFiles, AnAllReduceKernelIsOneMeasuredAndNeedsCustomAllReduce) {
  EXPECT_EQ(EngineCatalog::bundled().get("sglang").allreduce_kernel, "sglang");
  EXPECT_EQ(EngineCatalog::bundled().get("trt-llm").allreduce_kernel, "trtllm");
  Json j = read_json_file(default_engine_catalog_path());
  j["engines"]["vllm"]["allreduce_kernel"] = "nccl";
  EXPECT_EQ(error_of([&] { engine_catalog_from_json(j, "e.json").get("vllm"); }),
            "e.json: engines.vllm.allreduce_kernel: expected \"vllm\", \"sglang\" or \"trtllm\", got \"nccl\"");
  j = read_json_file(default_engine_catalog_path());
  j["engines"]["tgi"]["allreduce_kernel"] = "vllm";
  EXPECT_EQ(error_of([&] { engine_catalog_from_json(j, "e.json").get("tgi"); }),
            "e.json: engines.tgi.allreduce_kernel: set without custom_allreduce: true");
}

// The bundled catalog reads each engine's object on first use; the whole-file reader is the reference: every engine
// reads the same through both, field by field (EngineProfile's ==, ranges and citations included).
TEST(EngineCatalogFile, EnginesReadOnFirstUseEqualTheWholeFile) {
  const EngineCatalog whole = load_engine_catalog(default_engine_catalog_path());
  const EngineCatalog lazy = lazy_engine_catalog(default_engine_catalog_path());
  ASSERT_EQ(lazy.ids(), whole.ids());
  ASSERT_GE(lazy.ids().size(), 10u);  // vllm, vllm-eager, sglang, trt-llm, tgi, llama.cpp, deepspeed, hf, default, ...
  for (const std::string& id : whole.ids()) EXPECT_TRUE(lazy.get(id) == whole.get(id)) << id;
  EXPECT_EQ(&lazy.get("no-such-engine"), &lazy.get("default"));
}

// A catalog is a value: calibrating a copy leaves the bundled catalog as it was.
TEST(EngineCatalogFile, ACopyChangedByCalibrationLeavesTheOriginal) {
  const double bundled_step_s = EngineCatalog::bundled().get("vllm").step_host_s;
  EngineCatalog copy = EngineCatalog::bundled();
  copy.at("vllm").step_host_s = bundled_step_s + 1e-4;
  EXPECT_EQ(copy.get("vllm").step_host_s, bundled_step_s + 1e-4);
  EXPECT_EQ(EngineCatalog::bundled().get("vllm").step_host_s, bundled_step_s);
}

// A fitted value is checked against its field's physical bound when the parameters are read (step_host_s in
// [0, 0.02] s), and against the engine's own range when the engine is first used: vLLM states [0.2, 2.5] ms, so 5 ms
// passes the bound and is refused at first use, naming the file and the key.
TEST(EngineCatalogFile, FittedHostCostsAreCheckedAgainstBoundAndOwnRange) {
  EngineCatalog outside_bound = EngineCatalog::bundled();
  EXPECT_NE(error_of([&] {
              outside_bound.overlay("vllm", {{"step_host_s", 0.03}}, "p.json");
            }).find("p.json: engines.vllm.step_host_s = 0.03 is outside"),
            std::string::npos);
  EngineCatalog outside_own = EngineCatalog::bundled();
  outside_own.overlay("vllm", {{"step_host_s", 5e-3}}, "p.json");
  const std::string message = error_of([&] { outside_own.get("vllm"); });
  EXPECT_NE(message.find("p.json: engines.vllm.step_host_s = 0.005 is outside"), std::string::npos) << message;
  EngineCatalog inside = EngineCatalog::bundled();
  inside.overlay("vllm", {{"step_host_s", 2e-3}}, "p.json");
  EXPECT_EQ(inside.get("vllm").step_host_s, 2e-3);
  EXPECT_EQ(inside.get("vllm").launch_host_s, EngineCatalog::bundled().get("vllm").launch_host_s);
  EXPECT_NE(error_of([&] { inside.overlay("no-such-engine", {}, "p.json"); }).find("no 'no-such-engine'"),
            std::string::npos);
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// vLLM v0 without chunked prefill (prefill_stalls_decode): at steady state each finished request's replacement is
// prefilled in a step of its own. Llama-3.1-8B, B = 128 running requests of G = 480 tokens: B/G = 0.267 finish per
// decode step, p = 1 - exp(-0.267) = 0.234 of the steps are followed by a prefill step of 0.267 / 0.234 = 1.14 -> 1
// prompt, so the 128 prompts cost 128 single-prompt prefill steps.
TEST(SteadyState, EnginesWithoutChunkedPrefillPrefillEachReplacementAlone) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  const SimParams params = default_sim_params();
  Request running;
  running.batch = 128, running.prompt_tokens = 100, running.gen_tokens = 480, running.engine = "vllm-v0";
  SimScenario steady;
  steady.measures = Measures::steady_state;
  Request alone = running;
  alone.batch = 1, alone.gen_tokens = 1;
  const double one_prompt_s = simulate(model, gpu, alone, {}, params).latency_s.prefill;
  EXPECT_NEAR(simulate(model, gpu, running, steady, params).latency_s.prefill, 128 * one_prompt_s, 1e-9);
  // B = 512, G = 100: 5.12 finish per step, p = 0.994, 5.15 -> 5 prompts per prefill step, 512 / 5 steps.
  running.batch = 512, running.gen_tokens = 100, alone.batch = 5;
  const double five_prompts_s = simulate(model, gpu, alone, {}, params).latency_s.prefill;
  EXPECT_NEAR(simulate(model, gpu, running, steady, params).latency_s.prefill, 512.0 / 5 * five_prompts_s, 1e-9);
  // vLLM V1 mixes prefill chunks into decode steps: the prompts are one pass, as for a fixed batch.
  running.engine = "vllm";
  Request batch = running;
  EXPECT_DOUBLE_EQ(simulate(model, gpu, running, steady, params).latency_s.prefill,
                   simulate(model, gpu, batch, {}, params).latency_s.prefill);
}

// Every kernel of `a`'s first decode segment moves the bytes its twin in `b`'s does.
void expect_same_decode_bytes(const SimWorkload& a, const SimWorkload& b) {
  ASSERT_EQ(a.decode.at(0).kernels.size(), b.decode.at(0).kernels.size());
  for (size_t k = 0; k < a.decode[0].kernels.size(); ++k)
    EXPECT_DOUBLE_EQ(a.decode[0].kernels[k].work.mem_bytes, b.decode[0].kernels[k].work.mem_bytes) << k;
}

// Requests of a steady state whose lengths vary (cv = std / mean) are met in the running batch in proportion to their
// length, so its sequences sit at a mean context of prompt + G (1 + cv^2) / 2: with cv = 1, each of the G - 1 decode
// steps of a request of mean length G costs what a step of a request of 2G tokens costs on average.
TEST(SteadyState, VaryingLengthsPutTheRunningBatchAtTheLengthBiasedContext) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request running;
  running.batch = 64, running.prompt_tokens = 100, running.gen_tokens = 400, running.engine = "vllm";
  SimScenario steady;
  steady.measures = Measures::steady_state;
  steady.gen_tokens_cv = 1.0;
  const SimWorkload mixed = prepare_workload(model, gpu, running, steady);
  Request twice = running;
  twice.gen_tokens = 800;
  steady.gen_tokens_cv = 0;
  const SimWorkload longer = prepare_workload(model, gpu, twice, steady);
  ASSERT_EQ(mixed.decode.size(), 1u);
  EXPECT_DOUBLE_EQ(mixed.decode[0].steps, 399);
  expect_same_decode_bytes(mixed, longer);
  // Alike lengths (cv 0): mean context 100 + 200 tokens instead of 100 + 400. The KV cache read per step differs by
  // 64 sequences x 200 tokens x 131,072 B (32 layers x 8 KV heads x 128 x 2 x 2 B) = 1.68 GB.
  const SimWorkload alike = prepare_workload(model, gpu, running, steady);
  auto step_bytes = [](const SimWorkload& w) {
    double bytes = 0;
    for (const auto& k : w.decode[0].kernels) bytes += k.count * k.work.mem_bytes;
    return bytes;
  };
  EXPECT_NEAR(step_bytes(mixed) - step_bytes(alike), 64.0 * 200 * 131072, 0.02 * 64.0 * 200 * 131072);
}

// A fixed batch run to its longest response, which reached max_tokens (TokenPowerBench's generate() per batch):
// 32 sequences of mean 200 generated tokens under a cap of 1,000 decode 999 steps, not 199, while the 32 x 199 =
// 6,368 decode tokens spread over them run at a mean batch of 6,368 / 999 = 6.37, i.e. 6 sequences; the survivors
// reach the context of the longest, 100 + 1,000 tokens. Its decode is that of 6 sequences of 1,000 tokens; its
// prefill is the batch's 32 prompts.
TEST(FixedBatch, ABatchRunToItsCapDecodesTheCapsStepsAtTheMeanRunningBatch) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-nvl");
  Request batch;
  batch.batch = 32, batch.prompt_tokens = 100, batch.gen_tokens = 200, batch.engine = "vllm";
  SimScenario capped;
  capped.measures = Measures::fixed_batch;
  capped.decode_steps = 999;
  const SimWorkload ran = prepare_workload(model, gpu, batch, capped);
  Request survivors = batch;
  survivors.batch = 6, survivors.gen_tokens = 1000;
  const SimWorkload alike = prepare_workload(model, gpu, survivors, {});
  ASSERT_EQ(ran.decode.size(), 1u);
  EXPECT_DOUBLE_EQ(ran.decode[0].steps, 999);
  EXPECT_DOUBLE_EQ(ran.decode[0].sequences, 6);
  expect_same_decode_bytes(ran, alike);
  const SimWorkload mean = prepare_workload(model, gpu, batch, {Measures::fixed_batch});
  EXPECT_DOUBLE_EQ(ran.prefill[0].kernels[0].work.mem_bytes, mean.prefill[0].kernels[0].work.mem_bytes);
  // A cap the batch never needed (decode_steps below gen - 1) changes nothing.
  capped.decode_steps = 100;
  EXPECT_DOUBLE_EQ(prepare_workload(model, gpu, batch, capped).decode[0].steps, 199);
}

// The sampler reads and writes every logit of the whole vocabulary each step, on the GPU that samples: Llama-3.1-8B
// (vocab 128,256), batch 256, one decode step. vLLM 0.5's top-p sampler moves 205 B per logit against 52 B when
// greedy (data/engines/engines.json): (205 - 52) x 256 x 128,256 = 5.02 GB more per step, which no kernel can move
// faster than the H100 SXM's 3.35 TB/s: at least 1.50 ms more per step.
TEST(Sampler, TopPSamplingCostsItsExtraLogitPassesAtNoMoreThanPeakBandwidth) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request r;
  r.batch = 256, r.prompt_tokens = 100, r.gen_tokens = 2, r.engine = "vllm-v0";
  const KernelGraph graph = build_kernel_graph(model, r);
  const KernelNode& sampler = graph.step_nodes.back();
  ASSERT_EQ(sampler.kernel, "sampler");
  EXPECT_DOUBLE_EQ(sampler.decode.mem_bytes(), 256.0 * 128256 * 8);  // one pass: 4 B read + 4 B written per logit
  SimScenario top_p, greedy;
  greedy.sampling.greedy = true;
  const SimParams params = load_sim_params(default_sim_params_path());
  const double extra_s = simulate(model, gpu, r, top_p, params).latency_s.decode -
                         simulate(model, gpu, r, greedy, params).latency_s.decode;
  const double extra_bytes = (205.0 - 52.0) * 256 * 128256;
  EXPECT_GE(extra_s, extra_bytes / 3.35e12);
  EXPECT_LT(extra_s, 2 * extra_bytes / 3.35e12);  // memory-bound passes at no less than half the peak bandwidth
  // A temperature alone skips the sort: 68 B per logit, between greedy and top-p.
  SimScenario temperature;
  temperature.sampling.top_p = false;
  const double temperature_s = simulate(model, gpu, r, temperature, params).latency_s.decode;
  EXPECT_GT(temperature_s, simulate(model, gpu, r, greedy, params).latency_s.decode);
  EXPECT_LT(temperature_s, simulate(model, gpu, r, top_p, params).latency_s.decode);
}

// TokenPowerBench's meter: NVML samples (each the mean power of the last second) from 2 s before to 2 s after the
// run, 10% trimmed at each end. A 1 s run: samples span 5 s, the kept window [-1.5, 2.5] s holds the 1 s of busy
// power smeared over [0, 2] s: share 1 / 4. A 3.6 s run: window [-1.24, 4.84] s (6.08 s) holds all 3.6 busy
// seconds: 0.592. A 40 s run: window [2.4, 37.6] s lies inside the run: 1.
TEST(WindowMeter, ShortRunsAreDilutedByTheIdleSecondsAroundThem) {
  EXPECT_NEAR(window_busy_share(1.0), 0.25, 1e-9);
  EXPECT_NEAR(window_busy_share(3.6), 3.6 / 6.08, 1e-9);
  EXPECT_NEAR(window_busy_share(40.0), 1.0, 1e-3);  // midpoint rule across the window edges
  // 300 W busy for 1 s on a GPU idling at 90 W reads 90 + 210 / 4 = 142.5 W, i.e. 142.5 J.
  SimResult r;
  r.energy_j.decode = 300, r.latency_s.decode = 1, r.gpus = 1;
  const WindowMeter meter{128.0 / 128};
  EXPECT_NEAR(meter.energy_j(r, 90), 142.5, 1e-9);
  EXPECT_DOUBLE_EQ(WindowMeter{}.energy_j(r, 90), 300);  // no meter: what an integrating counter reads
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// DRAM bytes of one serving iteration over all its kernels.
double step_bytes(const SimWorkload& w) {
  double bytes = 0;
  for (const auto& k : w.decode.front().kernels) bytes += k.count * k.work.mem_bytes;
  return bytes;
}

TEST(MixedStep, DecodeAttentionReadsTheKvCacheEvenInAOneLayerModel) {
  // tiny_llama with one layer: 2 KV heads x 16 dims x (K, V) x 2 bytes = 128 bytes per cached token. One decode at
  // a context of 4,000 tokens reads 3,990 x 128 bytes more than at 10 (layer nodes are told from step nodes by where
  // they sit in the graph, not by their launch count).
  Json config = read_json_file(std::string(LLMCO2_TESTDATA) + "/configs/tiny_llama.json");
  config["num_hidden_layers"] = 1;
  const ModelSpec model = model_from_hf_config(config, "tiny_llama one layer");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request setup;
  setup.precision = model.default_precision;
  MixedStep step;
  step.decodes = 1, step.logits = 1, step.decode_context = 10;
  const double short_bytes = step_bytes(mixed_step_workload(model, gpu, setup, step));
  step.decode_context = 4000;
  const double long_bytes = step_bytes(mixed_step_workload(model, gpu, setup, step));
  EXPECT_GE(long_bytes - short_bytes, 0.99 * 3990 * 128);
}

// A prompt chunk of c = 100 tokens after p = 900 cached ones (n = 1000), tiny_llama with one layer (4 heads over 2
// KV heads of 16): its queries do c p + c (c + 1) / 2 = 95,050 query-key pairs, 4 x (4 x 16 + 5) operations each;
// it reads Q and writes O of its 100 tokens (2 x 100 x 4 x 16 x 2 B) and the K and V of all 1,000 keys once
// (2 x 1000 x 2 x 16 x 2 B), as the whole prefill's tiles do; a query sees 950.5 keys on average.
TEST(MixedStep, APromptChunkReadsEveryKeyOnceAndComputesOnlyItsPairs) {
  Json config = read_json_file(std::string(LLMCO2_TESTDATA) + "/configs/tiny_llama.json");
  config["num_hidden_layers"] = 1;
  const ModelSpec model = model_from_hf_config(config, "tiny_llama one layer");
  Request setup;
  setup.precision = model.default_precision;
  MixedStep step;
  step.prefill_tokens = 100, step.prefill_chunks = 1, step.prefill_context = 900;
  const SimWorkload w = mixed_step_workload(model, GpuCatalog::bundled().resolve("h100-sxm"), setup, step);
  const SimKernel* attention = nullptr;
  for (const auto& k : w.decode.front().kernels)
    if (k.work.keys_per_query > 0) attention = &k;
  ASSERT_NE(attention, nullptr);
  EXPECT_NEAR(attention->work.ops, 95050.0 * 4 * 69, 1e-9 * 95050.0 * 4 * 69);
  EXPECT_NEAR(attention->work.mem_bytes, 2.0 * 100 * 4 * 16 * 2 + 2.0 * 1000 * 2 * 16 * 2, 1e-6);
  EXPECT_NEAR(attention->work.keys_per_query, 950.5, 1e-9);
}

}  // namespace
}  // namespace llmco2
