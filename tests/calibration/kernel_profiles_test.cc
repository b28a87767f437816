// Tests of the kernel-time fit: shapes to operations and bytes by hand, kernel_time_s on a hand case, link classes,
// the range-checked kernels.json loader, and the committed fit's held-out accuracy on the committed Vidur data.
#include <gtest/gtest.h>

#include "support/all_modules.h"
#include "support/error_of.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>

#include "calibration/collective_tables.h"
#include "calibration/kernel_profiles.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "hardware/gpu_catalog.h"

namespace llmco2 {
namespace {

const VidurModelShape kLlama2_7b{32, 32, 4096, 11008, true};
const VidurModelShape kLlama2_70b{64, 8, 8192, 28672, true};

TEST(KernelProfile, AttnPreProjLlama2_7bByHand) {
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  const KernelWork w = vidur_op_work("attn_pre_proj", kLlama2_7b, 4096, 1, gpu);
  // QKV: N = (32 + 2 x 32) x 128 = 12288; 2 x 4096 x 4096 x 12288 FLOP.
  EXPECT_DOUBLE_EQ(w.ops, 2.0 * 4096 * 4096 * 12288);
  // fp16: weights 4096 x 12288, input 4096 x 4096, output 4096 x 12288.
  EXPECT_DOUBLE_EQ(w.mem_bytes, 2.0 * (4096.0 * 12288 + 4096.0 * 4096 + 4096.0 * 12288));
  EXPECT_EQ(w.kind, KernelClass::matrix);
  EXPECT_DOUBLE_EQ(w.rows, 4096);
  EXPECT_NEAR(w.peak_ops_per_s, 989.4e12, 1e9);
}

TEST(KernelProfile, TensorParallelSplitsByHand) {
  const Gpu gpu = GpuCatalog::bundled().resolve("a100-80gb-sxm");
  // Llama-2-70B, TP 4, 16 tokens. Up: N = 2 x 28672 / 4 = 14336. Down: K = 28672 / 4 = 7168.
  EXPECT_DOUBLE_EQ(vidur_op_work("mlp_up_proj", kLlama2_70b, 16, 4, gpu).ops, 2.0 * 16 * 8192 * 14336);
  EXPECT_DOUBLE_EQ(vidur_op_work("mlp_down_proj", kLlama2_70b, 16, 4, gpu).ops, 2.0 * 16 * 7168 * 8192);
  // QKV with GQA: (64 + 2 x 8) x 128 / 4 = 2560 columns; output projection K = 64 x 128 / 4 = 2048.
  EXPECT_DOUBLE_EQ(vidur_op_work("attn_pre_proj", kLlama2_70b, 16, 4, gpu).ops, 2.0 * 16 * 8192 * 2560);
  EXPECT_DOUBLE_EQ(vidur_op_work("attn_post_proj", kLlama2_70b, 16, 4, gpu).mem_bytes,
                   2.0 * (2048.0 * 8192 + 16.0 * 2048 + 16.0 * 8192));
  // Residual add is not split: reads 2 x 16 x 8192, writes 16 x 8192 fp16 values.
  const KernelWork add = vidur_op_work("add", kLlama2_70b, 16, 4, gpu);
  EXPECT_EQ(add.kind, KernelClass::vector);
  EXPECT_DOUBLE_EQ(add.mem_bytes, 2.0 * 3 * 16 * 8192);
  EXPECT_DOUBLE_EQ(add.peak_ops_per_s, gpu.vector_peak_ops_per_s());
}

TEST(KernelProfile, KernelTimeHandCase) {
  KernelWork w;
  w.ops = 1e12;
  w.mem_bytes = 1e9;
  w.rows = 64;
  w.peak_ops_per_s = 1e15;
  const DeviceRoofs roofs{2e12, 0, 1};
  KernelEfficiency e;
  e.gemm_efficiency = 0.8;
  e.gemm_tile_rows = 128;  // 64 rows pad to a 128-row tile: twice the operations at 0.8 of the peak
  e.memory_efficiency = 0.9;
  e.memory_half_bytes = 1e6;
  e.kernel_floor_s = 5e-6;
  // compute 2 x 1e12 / (1e15 x 0.8) = 2.5 ms beats memory 1e9 / (2e12 x 0.9 x 1e9 / (1e9 + 1e6)) = 0.556 ms.
  EXPECT_NEAR(kernel_time_s(w, roofs, e, {}), 5e-6 + 2.5e-3, 1e-12);

  KernelWork all_reduce;
  all_reduce.kind = KernelClass::network;
  all_reduce.net_bytes = 1.5e8;  // 2 (4 - 1) / 4 x 100 MB
  const NetworkEfficiency n{10e-6, 5e-6, 0.75};
  // 10 us + 2 (4 - 1) x 5 us + 1.5e8 / (3e11 x 0.75) = 40 us + 666.67 us.
  EXPECT_NEAR(kernel_time_s(all_reduce, {2e12, 3e11, 4}, e, n), 40e-6 + 1.5e8 / 2.25e11, 1e-12);
}

// An engine's own all-reduce: its call cost and bytes at its own share of the link, or NCCL's ring where that is
// shorter (the engine hands large messages to NCCL); one GPU all-reduces nothing.
TEST(KernelProfile, DirectAllReduceByHandAndBoundedByTheRing) {
  const NetworkEfficiency ring{10e-6, 1e-6, 0.75};
  const DirectAllReduceEfficiency direct{4e-6, 0.5};
  const DeviceRoofs roofs{2e12, 3e11, 4};
  KernelWork small;
  small.kind = KernelClass::network;
  small.net_bytes = 1.5e4;  // 2 (4 - 1) / 4 x 10 kB
  // ring: 10 us + 6 x 1 us + 1.5e4 / 2.25e11 = 16.07 us; direct: 4 us + 1.5e4 / 1.5e11 = 4.1 us.
  EXPECT_NEAR(allreduce_s(small, roofs, ring, &direct), 4e-6 + 1e-7, 1e-15);
  EXPECT_NEAR(allreduce_s(small, roofs, ring, nullptr), 16e-6 + 1.5e4 / 2.25e11, 1e-15);
  KernelWork large = small;
  large.net_bytes = 1.5e8;
  // direct 4 us + 1 ms is longer than the ring's 16 us + 666.67 us: the ring's.
  EXPECT_NEAR(allreduce_s(large, roofs, ring, &direct), 16e-6 + 1.5e8 / 2.25e11, 1e-12);
  EXPECT_EQ(allreduce_s(large, {2e12, 3e11, 1}, ring, &direct), 0.0);
}

TEST(KernelProfile, LinkClasses) {
  const auto& catalog = GpuCatalog::bundled();
  EXPECT_EQ(link_class(catalog.resolve("h100-sxm"), 4), "nvswitch");
  EXPECT_EQ(link_class(catalog.resolve("h100-sxm"), 16), "pcie");
  EXPECT_EQ(link_class(catalog.resolve("a100-80gb-pcie"), 2), "nvlink-pair");
  EXPECT_EQ(link_class(catalog.resolve("a100-80gb-pcie"), 4), "pcie");
  EXPECT_EQ(link_class(catalog.resolve("l4"), 2), "pcie");
  // An engine launching eagerly pays eager NCCL calls over NVSwitch; other links have one class for both.
  EXPECT_EQ(engine_link_class("nvswitch", false), "nvswitch-eager");
  EXPECT_EQ(engine_link_class("nvswitch", true), "nvswitch");
  EXPECT_EQ(engine_link_class("pcie", false), "pcie");
}

KernelParams sample_params() {
  KernelParams p;
  p.generations["hopper"] = KernelEfficiency{};
  p.generations["default"] = KernelEfficiency{};
  p.networks["nvswitch"] = NetworkEfficiency{};
  p.networks["default"] = NetworkEfficiency{};
  p.direct["default"] = DirectAllReduceEfficiency{};
  return p;
}

using testing_support::error_of;

TEST(KernelProfile, LoaderRoundTripsAndFallsBack) {
  KernelParams p = sample_params();
  p.generations["hopper"].gemm_efficiency = 0.7;
  p.networks["hopper/nvswitch"] = {1e-5, 2e-6, 0.8};
  p.direct["hopper"] = {3e-6, 0.4};
  p.direct["hopper/vllm"] = {5e-6, 0.5};
  p.networks["nvswitch"].bus_efficiency = 0.6;
  const KernelParams back = kernel_params_from_json(kernel_params_to_json(p), "x.json");
  EXPECT_DOUBLE_EQ(back.generation("hopper").gemm_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(back.generation("volta").gemm_efficiency, KernelEfficiency{}.gemm_efficiency);  // default
  EXPECT_DOUBLE_EQ(back.network("pcie").bus_efficiency, NetworkEfficiency{}.bus_efficiency);
  EXPECT_DOUBLE_EQ(back.network("hopper", "nvswitch").bus_efficiency, 0.8);  // the generation's own entry
  EXPECT_DOUBLE_EQ(back.network("ampere", "nvswitch").bus_efficiency, 0.6);  // the pooled class
  EXPECT_DOUBLE_EQ(back.network("ampere", "pcie").bus_efficiency, NetworkEfficiency{}.bus_efficiency);
  EXPECT_DOUBLE_EQ(back.network("hopper", "nvswitch").call_latency_s, 1e-5);
  EXPECT_DOUBLE_EQ(back.direct_allreduce("hopper", "vllm").direct_latency_s, 5e-6);    // the engine's own curve
  EXPECT_DOUBLE_EQ(back.direct_allreduce("hopper", "sglang").direct_latency_s, 3e-6);  // the generation's pooled one
  EXPECT_DOUBLE_EQ(back.direct_allreduce("hopper", "").direct_bus_efficiency, 0.4);
  EXPECT_DOUBLE_EQ(back.direct_allreduce("ada", "vllm").direct_latency_s, DirectAllReduceEfficiency{}.direct_latency_s);
}

TEST(KernelProfile, LoaderRejectsOutOfRangeNaNAndMissing) {
  const auto path = std::filesystem::path(testing::TempDir()) / "kernels_bad.json";
  Json j = kernel_params_to_json(sample_params());
  j["generations"]["hopper"]["gemm_efficiency"] = 1.2;
  std::ofstream(path) << j.dump(2);
  EXPECT_EQ(error_of([&] { load_kernel_params(path); }),
            path.string() + ": generations.hopper.gemm_efficiency = 1.2 is outside [0.4, 0.85]");

  j = kernel_params_to_json(sample_params());
  j["networks"]["nvswitch"]["step_latency_s"] = std::numeric_limits<double>::quiet_NaN();
  const std::string nan_error = error_of([&] { kernel_params_from_json(j, "k.json"); });
  EXPECT_NE(nan_error.find("k.json: networks.nvswitch.step_latency_s"), std::string::npos) << nan_error;
  EXPECT_NE(nan_error.find("not a finite number"), std::string::npos) << nan_error;

  std::ofstream(path) << R"({"generations": {"default": {"gemm_efficiency": NaN}}})";
  EXPECT_NE(error_of([&] { load_kernel_params(path); }).find(path.string()), std::string::npos);

  j = kernel_params_to_json(sample_params());
  j["generations"]["hopper"].erase("kernel_floor_s");
  EXPECT_EQ(error_of([&] { kernel_params_from_json(j, "k.json"); }),
            "k.json: generations.hopper.kernel_floor_s is missing or not a number");
  EXPECT_NE(error_of([&] { load_kernel_params(path.string() + ".missing"); }).find(".missing"), std::string::npos);

  j = kernel_params_to_json(sample_params());
  j.erase("direct");  // a kernels.json written before the engines' own all-reduces were fitted
  EXPECT_NE(error_of([&] { kernel_params_from_json(j, "k.json"); }).find("k.json: missing object 'direct'"),
            std::string::npos);
  for (auto& entry : j["networks"]) entry.erase("call_latency_s");  // and its networks, as written then
  EXPECT_NE(error_of([&] { kernel_params_from_json(j, "k.json"); }).find("k.json: missing object 'direct'"),
            std::string::npos);
  j = kernel_params_to_json(sample_params());
  j["direct"]["default"]["direct_bus_efficiency"] = 0.05;
  EXPECT_EQ(error_of([&] { kernel_params_from_json(j, "k.json"); }),
            "k.json: direct.default.direct_bus_efficiency = 0.05 is outside [0.1, 0.92]");
}

// The fit on a fixed sample of the committed Vidur profiles (every 7th compute and network sample in file order; the
// 10 operators repeat with period 10 there, and 7 is prime to it, so every operator is sampled; every 8th sampled
// half of them) lands near the committed parameters: the GEMM and memory efficiencies of both generations within 10%
// of data/sim/kernels.json's (fitted on all samples), and each (GPU, operator) group described about as well as the
// full fit describes it (fitted MAPE within 2 points). About 2.6 s, where the full refit takes ~25 s (label slow).
TEST(KernelProfile, AFitOnAFixedSampleLandsNearTheCommittedParameters) {
  const KernelProfileSet all = read_kernel_profiles(default_vidur_dir(), default_kernel_tables_dir());
  KernelProfileSet sample;
  for (size_t i = 0; i < all.compute.size(); i += 7) sample.compute.push_back(all.compute[i]);
  for (size_t i = 0; i < all.network.size(); i += 7) sample.network.push_back(all.network[i]);
  ASSERT_GT(sample.compute.size(), 50u);
  const KernelFit fit = fit_kernel_params(sample);
  const KernelParams committed = load_kernel_params(default_kernel_params_path());
  for (const char* generation : {"ampere", "hopper"}) {
    const KernelEfficiency& got = fit.params.generation(generation);
    const KernelEfficiency& want = committed.generation(generation);
    EXPECT_NEAR(got.gemm_efficiency, want.gemm_efficiency, 0.1 * want.gemm_efficiency) << generation;
    EXPECT_NEAR(got.memory_efficiency, want.memory_efficiency, 0.1 * want.memory_efficiency) << generation;
  }
  // Each (GPU, operator) group's fitted MAPE on the sample: within 2 points of the full fit's on all samples.
  const Json reported = read_json_file(default_kernel_params_path())["fit"]["compute"];
  const std::vector<OpScore> scores = score_by_op(sample.compute, fit.compute_fitted_s, fit.compute_held_out_s);
  int compared = 0;
  for (const OpScore& score : scores)
    for (const Json& full : reported)
      if (full["gpu"] == score.gpu_id && full["op"] == score.op) {
        EXPECT_LE(score.fitted_mape, full["fitted_mape"].get<double>() + 0.02) << score.gpu_id << " " << score.op;
        ++compared;
      }
  EXPECT_EQ(compared, static_cast<int>(reported.size()));
}

// A kernel fit stops at its first search sweep once an interrupt is requested (the Python bindings' Ctrl-C), instead
// of running its ~20 s to the end; the sample is the fixed one AFitOnAFixedSample... fits without an interrupt.
TEST(KernelProfile, AFitStopsOnAnInterruptRequest) {
  const KernelProfileSet all = read_kernel_profiles(default_vidur_dir(), default_kernel_tables_dir());
  KernelProfileSet sample;
  for (size_t i = 0; i < all.compute.size(); i += 7) sample.compute.push_back(all.compute[i]);
  for (size_t i = 0; i < all.network.size(); i += 7) sample.network.push_back(all.network[i]);
  request_interrupt(true);
  EXPECT_THROW(fit_kernel_params(sample), Interrupted);
  request_interrupt(false);
}

// The committed data/sim/kernels.json loads, and refitting on the committed Vidur data reproduces held-out per-operator
// MAPEs no worse than the figures the file reports.
TEST(KernelProfile, CommittedFitReproducesReportedHeldOutAccuracy) {
  const Json committed = read_json_file(default_kernel_params_path());
  const KernelParams params = load_kernel_params(default_kernel_params_path());
  EXPECT_GT(params.generation("hopper").gemm_efficiency, 0.6);
  const KernelProfileSet set = read_kernel_profiles(default_vidur_dir(), default_kernel_tables_dir());
  const KernelFit fit = fit_kernel_params(set);
  auto check = [&](const char* group, const std::vector<OpScore>& scores) {
    ASSERT_EQ(committed["fit"][group].size(), scores.size());
    for (size_t i = 0; i < scores.size(); ++i) {
      const Json& reported = committed["fit"][group][i];
      EXPECT_EQ(reported["op"].get<std::string>(), scores[i].op);
      EXPECT_LE(scores[i].held_out_mape, reported["held_out_mape"].get<double>() + 0.005)
          << scores[i].gpu_id << " " << scores[i].op;
    }
  };
  check("compute", score_by_op(set.compute, fit.compute_fitted_s, fit.compute_held_out_s));
  check("network", score_by_op(set.network, fit.network_fitted_s, fit.network_held_out_s));
  // The committed parameters themselves reproduce the fitted GEMM accuracy.
  for (size_t i = 0; i < set.compute.size(); ++i) {
    if (set.compute[i].op != "mlp_up_proj") continue;
    EXPECT_NEAR(predict_sample_s(set.compute[i], params), fit.compute_fitted_s[i], 1e-3 * fit.compute_fitted_s[i]);
  }
}

}  // namespace
}  // namespace llmco2
