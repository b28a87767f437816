// Every knob an interface offers works as offered or is refused with why: predictors, engines, power caps, context
// windows; and requests that resolve to the same setup share the predictors' prepared state.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "api/resolve.h"
#include "graph/request.h"
#include "hardware/gpu_catalog.h"
#include "llmco2/api.h"
#include "model/model_catalog.h"
#include "sim/label.h"
#include "support/all_modules.h"
#include "support/error_of.h"

namespace llmco2::api {
namespace {

using testing_support::error_of;

TEST(Knobs, EveryOfferedPredictorAnswers) {
  const Session session;
  for (const std::string& name : predictor_names()) {
    Request r;
    r.predictor = name;
    EXPECT_GT(session.predict(r).figures.energy_j, 0) << name;
  }
}

TEST(Knobs, TheEnginesOfferedAreTheEnginesAccepted) {
  Request r;
  r.engine = "unknown";  // a measured row's placeholder, not an engine a request may name
  const std::string why = error_of([&] { Session().predict(r); });
  EXPECT_NE(why.find("--engine 'unknown' is unknown"), std::string::npos) << why;
  for (const std::string& engine : offered_engines()) {
    EXPECT_NE(why.find(engine), std::string::npos) << engine;
    EXPECT_NE(engine, "unknown");
  }
}

// A cap is a limit inside the board's range, as nvidia-smi -pl takes it: from its minimum limit to its TDP.
TEST(Knobs, APowerCapOutsideTheBoardsRangeIsRefusedNamingIt) {
  const Gpu h100 = GpuCatalog::bundled().resolve("h100-sxm");
  Request r;
  r.power_cap_w = 100;  // nvidia-smi -pl 100 on an H100 SXM: "should be between 200.00 W and 700.00 W"
  EXPECT_EQ(error_of([&] { Session().predict(r); }),
            "--power-cap 100: h100-sxm takes a power limit from 200 W (its minimum) to 700 W (its TDP)");
  r.power_cap_w = h100.tdp_w + 1;
  EXPECT_NE(error_of([&] { Session().predict(r); }).find("to 700 W (its TDP)"), std::string::npos);
  r.power_cap_w = 200;
  EXPECT_GT(Session().predict(r).figures.energy_j, 0);
  // A board whose minimum the catalog lacks: above its idle power.
  r.gpu = "b200";
  r.power_cap_w = GpuCatalog::bundled().resolve("b200").idle_w;
  EXPECT_NE(error_of([&] { Session().predict(r); }).find("above its idle"), std::string::npos);
  r.gpu = "h100-sxm";
  // A cap at the TDP is no cap: the same figures as none.
  r.power_cap_w = h100.tdp_w;
  const Figures capped = Session().predict(r).figures;
  const Figures plain = Session().predict(Request{}).figures;
  EXPECT_DOUBLE_EQ(capped.energy_j, plain.energy_j);
  EXPECT_DOUBLE_EQ(capped.latency_s, plain.latency_s);
}

TEST(Knobs, APromptBeyondTheContextWindowIsRefusedNamingIt) {
  Request r;
  r.model = "gemma-3-27b-it";
  r.prompt_tokens = 1000000;
  const std::string why = error_of([&] { Session().predict(r); });
  EXPECT_NE(why.find("context window of 131072 tokens"), std::string::npos) << why;
}

// Two resolutions of one request are two objects with one value: the setup cache (same_setup) treats them as one.
TEST(Knobs, TheSetupCacheKeysOnTheSetupsValue) {
  const ResolvedRequest a = resolve_request(Request{}, true), b = resolve_request(Request{}, true);
  const PredictorInput x = input_for(a), y = input_for(b);
  ASSERT_NE(x.model.get(), y.model.get());
  EXPECT_TRUE(same_setup(x, y));
  PredictorInput other_gpu = y;
  Gpu nvl = *y.gpu;
  nvl.tdp_w -= 1;
  other_gpu.gpu = std::make_shared<const Gpu>(nvl);
  EXPECT_FALSE(same_setup(x, other_gpu));
}

// A batch whose KV cache holds S sequences runs 2S in two waves, one after the other: each sequence sees the pace of
// one wave (TPOT of a batch of S), the second wave's sequences wait for the first (mean TTFT = prefill + half a
// wave), and the request's total is two waves'.
TEST(Knobs, WavesReportWhatOneSequenceSees) {
  Request r;
  r.model = "llama-3.1-8b", r.gpu = "l4", r.gpus = 2, r.batch = 512, r.prompt_tokens = 4096;
  r.gen_tokens = 128;
  const long per_wave = resolve_request(r, true).sequences_per_wave;
  ASSERT_GT(per_wave, 1);
  ASSERT_LT(per_wave, 256);
  r.batch = per_wave;
  const Figures one = Session().predict(r).figures;
  r.batch = 2 * per_wave;
  const Result two_waves = Session().predict(r);
  EXPECT_EQ(two_waves.json["waves"], 2);
  const Figures two = two_waves.figures;
  ASSERT_TRUE(one.tpot_s && two.tpot_s);
  EXPECT_NEAR(*two.tpot_s, *one.tpot_s, 1e-9 * *one.tpot_s);
  const double wave_s = one.latency_s;
  EXPECT_NEAR(two.latency_s, 2 * wave_s, 1e-9 * wave_s);
  EXPECT_NEAR(two.ttft_s, one.ttft_s + wave_s / 2, 1e-9 * wave_s);
}

// compare --node names the node of its own GPU type; every other type is metered at its own default node, said in
// its row (it was refused as "that node holds h100-sxm GPUs" for 26 of 27 GPU types).
TEST(Knobs, CompareMetersEachGpuTypeAtItsOwnNode) {
  Request r;
  r.node = "hgx-h100-xe9680";
  CompareOptions o;
  o.gpu_types = {"h100-sxm", "a100-80gb-sxm"};
  o.counts = {1};
  const Json rows = Session().compare(r, o).json["setups"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["node"], "hgx-h100-xe9680");
  EXPECT_EQ(rows[1]["node"], "dgx-a100");
  ASSERT_EQ(rows[1]["notes"].size(), 1u);
  EXPECT_NE(rows[1]["notes"][0].get<std::string>().find("--node hgx-h100-xe9680 holds h100-sxm GPUs"),
            std::string::npos);
}

// A power cap acts as the GPU does (sim/simulator.cc, throttled_power_w: clocks drop until the step draws the limit,
// compute-bound kernels stretch, memory-bound ones keep their pace).
Result capped(Request r, double cap_w, double clock_mhz = 0) {
  r.scope = "gpu", r.power_cap_w = cap_w, r.clock_mhz = clock_mhz;
  return Session().predict(r);
}

double phase_power_w(const Result& r, const char* phase) {
  return r.json["energy_j"][phase].get<double>() / r.json["latency_s"][phase].get<double>();
}

TEST(Knobs, ACapAboveWhatTheRequestDrawsChangesNothing) {
  Request r;
  const Result free = capped(r, 0);
  const double draw_w = std::max(phase_power_w(free, "prefill"), phase_power_w(free, "decode"));
  const Result above = capped(r, std::min(1.05 * draw_w + 1, 700.0));
  EXPECT_DOUBLE_EQ(above.figures.energy_j, free.figures.energy_j);
  EXPECT_DOUBLE_EQ(above.figures.latency_s, free.figures.latency_s);
}

// A compute-bound prefill (8 x 4,096 tokens) whose dynamic power is halved by the cap runs at lower clocks, and longer
// than uncapped. Clocked power falls as f^3 (docs/simulator.md, Power); HBM traffic costs the same energy at any
// clock, and in this prefill it is at most a tenth of the dynamic energy (its bytes take under a tenth of its time at
// the roofs). With that tenth kept, halving the dynamic power needs 0.9 f^3 + 0.1 f = 0.5: f = 0.7775, so it runs
// at most 1 / 0.7775 = 1.286 x as long (all of it memory-free would give cbrt(1/2) = 0.794, 1.26 x).
TEST(Knobs, ACapThatHalvesComputePowerLengthensAComputeBoundPrefill) {
  Request r;
  r.batch = 8, r.prompt_tokens = 4096, r.gen_tokens = 2;
  const Gpu h100 = GpuCatalog::bundled().resolve("h100-sxm");
  const Result free = capped(r, 0);
  const double prefill_w = phase_power_w(free, "prefill");
  ASSERT_GT(prefill_w, 0.6 * h100.tdp_w);
  const double cap_w = std::max(*h100.min_power_limit_w, h100.idle_w + (prefill_w - h100.idle_w) / 2);
  const Result half = capped(r, cap_w);
  const double t0 = free.json["latency_s"]["prefill"], t1 = half.json["latency_s"]["prefill"];
  EXPECT_GT(t1, 1.05 * t0);
  EXPECT_LE(t1, t0 / 0.7775);
  EXPECT_LE(phase_power_w(half, "prefill"), cap_w + 1e-6);
}

// A memory-bound decode (batch 1) under a moderate cap keeps its bandwidth: its time per token stays.
TEST(Knobs, AMemoryBoundDecodeUnderAModerateCapKeepsItsPace) {
  Request r;
  const Result free = capped(r, 0);
  const Result moderate = capped(r, 300);
  ASSERT_TRUE(free.figures.tpot_s && moderate.figures.tpot_s);
  EXPECT_NEAR(*moderate.figures.tpot_s, *free.figures.tpot_s, 0.02 * *free.figures.tpot_s);
  EXPECT_LE(moderate.figures.energy_decode_j, free.figures.energy_decode_j);
}

// A locked SM clock is one the board can run at: up to the maximum its peaks are quoted at (nvidia-smi -lgc clamps to
// it), down to the lowest share the power model covers; a board without a sourced maximum cannot relate one.
TEST(Knobs, ALockedClockOutsideTheBoardsRangeIsRefusedNamingIt) {
  const Gpu h100 = GpuCatalog::bundled().resolve("h100-sxm");
  ASSERT_TRUE(h100.max_sm_clock_mhz);
  const double max_mhz = *h100.max_sm_clock_mhz;
  Request r;
  r.clock_mhz = max_mhz + 1;
  const std::string why = error_of([&] { Session().predict(r); });
  EXPECT_NE(why.find(fmt::format("to {:g} MHz (its maximum)", max_mhz)), std::string::npos) << why;
  r.clock_mhz = 0.2 * *h100.tensor_peak_clock_mhz;
  EXPECT_NE(error_of([&] { Session().predict(r); }).find("the lowest llmco2's power model covers"), std::string::npos);
  r.clock_mhz = -5;
  EXPECT_NE(error_of([&] { Session().predict(r); }).find("expected a locked SM clock in MHz"), std::string::npos);
  for (const Gpu& gpu : GpuCatalog::bundled().gpus()) {
    if (gpu.max_sm_clock_mhz) continue;
    r.gpu = gpu.id, r.clock_mhz = 1000;
    EXPECT_NE(error_of([&] { Session().predict(r); }).find("has no sourced maximum SM clock"), std::string::npos)
        << gpu.id;
  }
}

// Locked at or above the clock its tensor peaks are quoted at (the H100 SXM's 1830 MHz; 1980 MHz is its maximum),
// a board runs as unlocked.
TEST(Knobs, AClockLockedAtThePeaksClockOrAboveChangesNothing) {
  const Gpu h100 = GpuCatalog::bundled().resolve("h100-sxm");
  ASSERT_TRUE(h100.tensor_peak_clock_mhz);
  EXPECT_NEAR(132 * 4096 * *h100.tensor_peak_clock_mhz * 1e6, h100.matrix_peak(DType::bf16).ops_per_s, 1e-3 * 989.4e12);
  Request r;
  const Result free = capped(r, 0);
  for (double mhz : {*h100.tensor_peak_clock_mhz, *h100.max_sm_clock_mhz}) {
    const Result locked = capped(r, 0, mhz);
    EXPECT_DOUBLE_EQ(locked.figures.energy_j, free.figures.energy_j) << mhz;
    EXPECT_DOUBLE_EQ(locked.figures.latency_s, free.figures.latency_s) << mhz;
  }
}

// A compute-bound prefill (8 x 4,096 tokens) at half the clock: its tensor-core kernels take twice as long, its
// memory-bound ones (norms, activations) as long as before, so the phase takes between 1.5x (at least three
// quarters of it compute-bound) and 2x as long. Its operations cost a quarter of their dynamic energy (C V^2 with V
// following f), so the phase's dynamic energy falls although it runs longer.
TEST(Knobs, HalfTheClockStretchesAComputeBoundPrefillUpToTwice) {
  Request r;
  r.batch = 8, r.prompt_tokens = 4096, r.gen_tokens = 2;
  const Gpu h100 = GpuCatalog::bundled().resolve("h100-sxm");
  const Result free = capped(r, 0), half = capped(r, 0, *h100.tensor_peak_clock_mhz / 2);
  const double t0 = free.json["latency_s"]["prefill"], t1 = half.json["latency_s"]["prefill"];
  EXPECT_GE(t1, 1.5 * t0);
  EXPECT_LE(t1, 2 * t0 + 1e-12);
  const double dynamic0_j = free.json["energy_j"]["prefill"].get<double>() - h100.idle_w * t0;
  const double dynamic1_j = half.json["energy_j"]["prefill"].get<double>() - h100.idle_w * t1;
  EXPECT_LT(dynamic1_j, dynamic0_j);
}

// A memory-bound decode (batch 1) at a locked clock keeps its pace (HBM has its own clock) and draws less: the
// saving is bounded by what measurements find. On an H200, locked SM clocks saved at most 32% of decode energy
// (arXiv 2605.11999, a sweep of locked clocks on vLLM decode); here at 0.55 of the maximum clock it must save energy
// and no more than a third.
TEST(Knobs, ALockedClockKeepsAMemoryBoundDecodesPaceAndSavesAtMostAThird) {
  Request r;
  r.gpu = "h200";
  const Gpu h200 = GpuCatalog::bundled().resolve("h200");
  ASSERT_TRUE(h200.tensor_peak_clock_mhz);
  const Result free = capped(r, 0), locked = capped(r, 0, std::round(0.55 * *h200.tensor_peak_clock_mhz));
  ASSERT_TRUE(free.figures.tpot_s && locked.figures.tpot_s);
  EXPECT_NEAR(*locked.figures.tpot_s, *free.figures.tpot_s, 0.03 * *free.figures.tpot_s);
  const double saving = 1 - locked.figures.energy_decode_j / free.figures.energy_decode_j;
  EXPECT_GT(saving, 0.0);
  EXPECT_LE(saving, 1.0 / 3.0);
  EXPECT_TRUE(std::any_of(locked.warnings.begin(), locked.warnings.end(),
                          [](const std::string& w) { return w.find("SM clock locked at") != std::string::npos; }));
}

}  // namespace
}  // namespace llmco2::api

namespace llmco2::api {
namespace {

// Pipeline stages: predict names the stages beside the GPUs per stage, counts every stage's GPUs in the embodied CO2,
// and the same request through the simulator alone gives the same energy; other predictors refuse it.
TEST(Knobs, PipelineStagesAreNamedAndCountedOnce) {
  Request r;
  r.model = "llama-3.1-70b", r.gpus = 4, r.pipeline_parallel = 2, r.batch = 8, r.scope = "gpu";
  const Result staged = Session().predict(r);
  EXPECT_EQ(staged.json["gpus"], 4);
  EXPECT_EQ(staged.json["pipeline_parallel"], 2);
  r.pipeline_parallel = 1, r.gpus = 8;
  const Result grouped = Session().predict(r);
  // Embodied CO2 is per GPU-second: 8 GPUs either way, over each setup's own latency.
  EXPECT_NEAR(
      staged.json["co2_g"]["embodied"]["total"].get<double>() / staged.json["latency_s"]["total"].get<double>(),
      grouped.json["co2_g"]["embodied"]["total"].get<double>() / grouped.json["latency_s"]["total"].get<double>(),
      1e-9);
  r.gpus = 4, r.pipeline_parallel = 2, r.predictor = "llmco2";
  EXPECT_NE(error_of([&] { Session().predict(r); }).find("--pp: pipeline stages are simulated by the physics"),
            std::string::npos);
}

}  // namespace
}  // namespace llmco2::api
