// Tests of site profiles: the corrections act on the GPU and engine they name as the physics says (a dynamic-power
// scale multiplies only the power above idle), the file is checked on reading, and a fit on rows the simulator
// labelled under known corrections finds them, moving less when the rows are few.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "calibration/site_fit.h"
#include "core/error.h"
#include "sim/label.h"
#include "sim/site_profile.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

SiteProfile profile(std::vector<SiteCorrection> corrections) {
  SiteProfile site;
  site.name = "test";
  site.corrections = std::move(corrections);
  return site;
}

TEST(SiteProfile, ScalesOnlyTheNamedGpuInsideTheKernelRanges) {
  const SimParams global = default_sim_params();
  const SimParams site = apply_site(global, profile({{"h100-sxm", SiteKnob::compute, 0.8},
                                                     {"h100-sxm", SiteKnob::memory, 1.2},
                                                     {"h100-sxm", SiteKnob::power, 1.25}}));
  const KernelEfficiency before = global.efficiency("hopper", "h100-sxm"),
                         after = site.efficiency("hopper", "h100-sxm");
  EXPECT_DOUBLE_EQ(after.gemm_efficiency, before.gemm_efficiency * 0.8);
  EXPECT_DOUBLE_EQ(after.attention_efficiency, before.attention_efficiency * 0.8);
  // memory_efficiency x 1.2 would pass 0.92, the top of its range (the best streaming kernels on HBM): held there.
  EXPECT_DOUBLE_EQ(after.memory_efficiency, std::min(before.memory_efficiency * 1.2, 0.92));
  EXPECT_DOUBLE_EQ(site.efficiency("hopper", "h200").gemm_efficiency,
                   global.efficiency("hopper", "h200").gemm_efficiency);
  EXPECT_DOUBLE_EQ(site.power_on("h100-sxm").memory, global.power.memory * 1.25);
  EXPECT_DOUBLE_EQ(site.power_on("h200").memory, global.power.memory);
  EXPECT_EQ(site.site_gpus.size(), 1u);  // the one GPU named, no other
}

TEST(SiteProfile, HostScaleStaysInsideTheEngineRange) {
  const SimParams global = default_sim_params();
  const SimParams site = apply_site(global, profile({{"vllm", SiteKnob::host, 2.0}}));
  const EngineProfile &g = global.engines.get("vllm"), &s = site.engines.get("vllm");
  const auto range = g.ranges.find("step_host_s");
  ASSERT_NE(range, g.ranges.end());
  EXPECT_DOUBLE_EQ(s.step_host_s, std::min(2 * g.step_host_s, range->second.second));
  EXPECT_DOUBLE_EQ(site.engines.get("trt-llm").step_host_s, global.engines.get("trt-llm").step_host_s);
}

// Power is idle + dynamic; a dynamic-power scale of 1.2 on a step well under the TDP (batch-1 decode streams the
// weights at ~1/3 of the board's range) leaves the time and the idle part alone and multiplies the rest by 1.2.
TEST(SiteProfile, PowerScaleMultipliesOnlyTheDynamicPower) {
  CatalogCache catalogs;
  const SimConfig c = config_for_plan({0, "llama-3.1-8b", "h100-sxm", 1, 1, 256, 128, "", ""}, catalogs);
  const SimParams global = default_sim_params();
  const SimParams site = apply_site(global, profile({{"h100-sxm", SiteKnob::power, 1.2}}));
  const SimResult a = simulate(*c.model, *c.gpu, c.request, c.scenario, global);
  const SimResult b = simulate(*c.model, *c.gpu, c.request, c.scenario, site);
  ASSERT_LT(a.mean_power_w, 0.8 * c.gpu->tdp_w);
  EXPECT_DOUBLE_EQ(b.latency_s.total(), a.latency_s.total());
  const double idle_j = c.gpu->idle_w * a.latency_s.total();
  EXPECT_NEAR(b.energy_j.total() - idle_j, 1.2 * (a.energy_j.total() - idle_j), 1e-9 * a.energy_j.total());
}

TEST(SiteProfile, FileIsCheckedOnReading) {
  const SiteProfile site = profile({{"h100-sxm", SiteKnob::compute, 0.93}, {"vllm", SiteKnob::host, 1.5}});
  const SiteProfile back = site_profile_from_json(site_profile_to_json(site), "s.json");
  ASSERT_EQ(back.corrections.size(), 2u);
  EXPECT_DOUBLE_EQ(back.corrections[0].value, 0.93);
  EXPECT_EQ(back.corrections[1].knob, SiteKnob::host);
  auto refused = [&](const std::string& key, const Json& value) {
    Json j = site_profile_to_json(site);
    j["corrections"][0][key] = value;
    try {
      site_profile_from_json(j, "s.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused("value", 1.5).find("s.json: corrections[0]: value = 1.5 is outside [0.7, 1.3]"), std::string::npos);
  EXPECT_NE(refused("parameter", "clock_scale").find("unknown correction 'clock_scale'"), std::string::npos);
  EXPECT_NE(refused("target", "h100").find("did you mean 'h100-sxm'"), std::string::npos);
}

// Rows of one H100 under vLLM, labelled by the simulator under known corrections (no noise): prefill-heavy and
// decode-heavy, batch 1 to 64, so that compute, bandwidth, power and host work each leave their mark.
CalibrationSet labelled_rows(const SimParams& truth) {
  CatalogCache catalogs;
  std::vector<DatasetRow> rows;
  for (long batch : {1L, 8L, 64L})
    for (long prompt : {128L, 4096L})
      for (long gen : {16L, 256L}) {
        const SimConfig c =
            config_for_plan({0, "llama-3.1-8b", "h100-sxm", 1, batch, prompt, gen, "", "vllm"}, catalogs);
        rows.push_back(simulated_row(c, simulate(*c.model, *c.gpu, c.request, c.scenario, truth), "t"));
      }
  return prepare_calibration(rows);
}

const SiteProfile kTruth = profile({{"h100-sxm", SiteKnob::compute, 0.90},
                                    {"h100-sxm", SiteKnob::memory, 0.94},
                                    {"h100-sxm", SiteKnob::power, 1.12},
                                    {"vllm", SiteKnob::host, 1.40}});

double fitted(const SiteProfile& site, SiteKnob knob) {
  for (const auto& c : site.corrections)
    if (c.knob == knob) return c.value;
  return 0;
}

const SiteCorrection& correction(const SiteProfile& site, SiteKnob knob) {
  for (const auto& c : site.corrections)
    if (c.knob == knob) return c;
  throw Error("no correction");
}

TEST(SiteFit, RecoversKnownCorrections) {
  const SimParams global = default_sim_params();
  const CalibrationSet set = labelled_rows(apply_site(global, kTruth));
  ASSERT_EQ(set.samples.size(), 12u);
  const SiteProfile site = fit_site(set, {}, global, "t");
  // Noise-free rows: what keeps the fit from the truth is the prior's pull, small against 12 rows at 5% each.
  for (const auto& t : kTruth.corrections)
    EXPECT_NEAR(std::log(fitted(site, t.knob) / t.value), 0.0, t.knob == SiteKnob::host ? 0.08 : 0.02)
        << site_knob(t.knob).name << " fitted x" << fitted(site, t.knob);
  EXPECT_GT(site.fit["before"]["latency"]["mape"].get<double>(), 0.05);
  EXPECT_LT(site.fit["after"]["latency"]["mape"].get<double>(), 0.01);
  EXPECT_LT(site.fit["after"]["energy"]["mape"].get<double>(), 0.01);
  EXPECT_GT(correction(site, SiteKnob::power).data_share, kIdentifiedDataShare);
}

TEST(SiteFit, FewRowsMoveTheCorrectionsLess) {
  const SimParams global = default_sim_params();
  const CalibrationSet set = labelled_rows(apply_site(global, kTruth));
  const SiteProfile two = fit_site(set, {0, 1}, global, "t");
  const SiteProfile all = fit_site(set, {}, global, "t");
  EXPECT_LT(correction(two, SiteKnob::compute).data_share, correction(all, SiteKnob::compute).data_share);
  EXPECT_GT(correction(two, SiteKnob::power).sd, correction(all, SiteKnob::power).sd);
  // Without energy rows the power correction has nothing to learn from: it stays at 1 and the profile says so.
  CalibrationSet latency_only = set;
  for (auto& s : latency_only.samples) s.energy_j.reset();
  const SiteProfile blind = fit_site(latency_only, {}, global, "t");
  EXPECT_NEAR(fitted(blind, SiteKnob::power), 1.0, 0.01);
  EXPECT_NE(std::find(blind.global.begin(), blind.global.end(),
                      "power_scale of h100-sxm stays global: no row measured energy"),
            blind.global.end());
}

TEST(SiteFit, ChosenRowsPinTheCorrectionsDownBetterThanTheFirstRows) {
  const SimParams global = default_sim_params();
  const CalibrationSet set = labelled_rows(apply_site(global, kTruth));
  std::vector<size_t> all(set.samples.size());
  for (size_t s = 0; s < all.size(); ++s) all[s] = s;
  const std::vector<size_t> chosen = choose_site_rows(set, all, global, 4);
  ASSERT_EQ(chosen.size(), 4u);
  const SiteProfile picked = fit_site(set, chosen, global, "t"), first = fit_site(set, {0, 1, 2, 3}, global, "t");
  double picked_sd = 0, first_sd = 0;  // the log-volume of the posterior, per knob
  for (size_t k = 0; k < picked.corrections.size(); ++k)
    picked_sd += std::log(picked.corrections[k].sd), first_sd += std::log(first.corrections[k].sd);
  EXPECT_LT(picked_sd, first_sd);
}

}  // namespace
}  // namespace llmco2
