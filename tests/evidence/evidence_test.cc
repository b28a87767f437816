// Evidence labels, regime bands, the evidence index and the conformal intervals per label, on values worked by hand.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "evidence/evidence.h"
#include "evidence/intervals.h"
#include "llmco2/error.h"
#include "research/validation_baselines.h"

namespace llmco2::evidence {
namespace {

Gpu gpu_named(const std::string& id, const std::string& vendor, const std::string& architecture) {
  Gpu g;
  g.id = id;
  g.vendor = vendor;
  g.architecture = architecture;
  return g;
}

const Gpu kH100 = gpu_named("h100-sxm", "NVIDIA", "Hopper (GH100)");
const Gpu kH200 = gpu_named("h200", "NVIDIA", "GH100 die, same as the H100 SXM/PCIe");
const Gpu kA100 = gpu_named("a100-80gb-sxm", "NVIDIA", "Ampere (GA100)");
const Gpu kMi325 = gpu_named("mi325x", "AMD", "AMD CDNA 3 (8 XCD + 4 IOD chiplets; MI325X HBM3E board)");

TEST(Evidence, BandsAreFactorsOfFour) {
  EXPECT_EQ(batch_band(1), 0);
  EXPECT_EQ(batch_band(3.9), 0);
  EXPECT_EQ(batch_band(4), 1);
  EXPECT_EQ(batch_band(15.9), 1);
  EXPECT_EQ(batch_band(16), 2);
  EXPECT_EQ(batch_band(255), 3);
  EXPECT_EQ(batch_band(256), 4);
  EXPECT_EQ(batch_band(1e6), 4);
  EXPECT_EQ(batch_band(0.5), 0);
  EXPECT_EQ(context_band(1023), 0);
  EXPECT_EQ(context_band(1024), 1);
  EXPECT_EQ(context_band(4095), 1);
  EXPECT_EQ(context_band(4096), 2);
  EXPECT_EQ(context_band(65535), 3);
  EXPECT_EQ(context_band(65536), 4);
  EXPECT_EQ(context_band(1e8), 4);
  EXPECT_EQ(batch_band_name(2), "batch 16-63");
  EXPECT_EQ(batch_band_name(4), "batch 256+");
  EXPECT_EQ(context_band_name(0), "context <1k");
  EXPECT_EQ(context_band_name(1), "context 1k-4k");
  EXPECT_EQ(context_band_name(4), "context 64k+");
}

TEST(Evidence, GenerationEngineAndPrecisionPath) {
  EXPECT_EQ(evidence_generation(kH100), "hopper");
  EXPECT_EQ(evidence_generation(kH200), "hopper");  // a die name, not the marketing name
  EXPECT_EQ(evidence_generation(kA100), "ampere");
  EXPECT_EQ(evidence_generation(kMi325), "cdna3");
  EXPECT_EQ(evidence_generation(gpu_named("a10g", "NVIDIA", "TechPowerUp A40: GA102, the die of the A10/A10G")),
            "ampere");
  EXPECT_EQ(engine_family("vllm-v0"), "vllm");
  EXPECT_EQ(engine_family("vllm-0.2"), "vllm");
  EXPECT_EQ(engine_family("hf-transformers-no-kv-cache"), "hf-transformers");
  EXPECT_EQ(engine_family("llama.cpp"), "llama.cpp");
  EXPECT_EQ(engine_family("my-engine"), "my-engine");
  EXPECT_EQ(precision_path(parse_precision("bf16", DType::bf16)), "16-bit");
  EXPECT_EQ(precision_path(parse_precision("w8a16", DType::bf16)), "w8a16");
  EXPECT_EQ(precision_path(parse_precision("w4a16", DType::bf16)), "w4a16");
  EXPECT_EQ(precision_path(parse_precision("fp8", DType::bf16)), "fp8");
  EXPECT_EQ(precision_path(parse_precision("nvfp4", DType::bf16)), "fp4");
}

EvidenceKey key(const Gpu& gpu, const std::string& engine, double batch, double context,
                const std::string& dtype = "bf16", const std::string& family = "llama") {
  return evidence_key(gpu, engine, parse_precision(dtype, DType::bf16), family, batch, context);
}

TEST(Evidence, DistanceAddsWhatDiffers) {
  EXPECT_EQ(evidence_distance(key(kH100, "vllm", 8, 2000), key(kH100, "vllm", 8, 2000)), 0);
  EXPECT_EQ(evidence_distance(key(kH100, "vllm", 8, 2000), key(kH200, "vllm", 8, 2000)), 1);  // same generation
  EXPECT_EQ(evidence_distance(key(kH100, "vllm", 8, 2000), key(kA100, "vllm", 8, 2000)), 2);  // another generation
  EXPECT_EQ(evidence_distance(key(kH100, "vllm", 8, 2000), key(kH100, "vllm-v0", 8, 2000)), 0.5);
  // another vendor 4, another engine 2, fp8 1, another family 0.5, two batch bands (8 -> 100) and one context band.
  EXPECT_EQ(evidence_distance(key(kH100, "vllm", 8, 2000), key(kMi325, "sglang", 100, 5000, "fp8", "qwen3")), 10.5);
}

EvidenceIndex example_index() {
  EvidenceIndex index;
  index.add("mlenergy-v3", key(kH100, "vllm", 8, 2000), 10);
  index.add("mlenergy-v3", key(kH100, "vllm", 10, 3000), 2);  // same key: merged
  index.add("splitwise", key(kA100, "vllm-0.2", 1, 600), 5);
  return index;
}

TEST(Evidence, LabelsFollowTheRules) {
  const EvidenceIndex index = example_index();
  ASSERT_EQ(index.entries().size(), 2u);
  EXPECT_EQ(index.entries()[0].rows, 12);
  const Evidence same = index.assess(key(kH100, "vllm", 5, 1500));
  EXPECT_EQ(same.label, EvidenceLabel::calibrated);
  ASSERT_FALSE(same.nearest.empty());
  EXPECT_EQ(same.nearest[0].source, "mlenergy-v3");
  EXPECT_EQ(same.nearest[0].rows, 12);
  EXPECT_NE(same.reason.find("12 measured rows"), std::string::npos) << same.reason;
  // One batch band away on the same GPU, or the same regime on another Hopper board: interpolated.
  EXPECT_EQ(index.assess(key(kH100, "vllm", 20, 1500)).label, EvidenceLabel::interpolated);
  EXPECT_EQ(index.assess(key(kH200, "vllm", 5, 1500)).label, EvidenceLabel::interpolated);
  // Another version of the engine is not calibrated, but interpolates.
  EXPECT_EQ(index.assess(key(kH100, "vllm-v0", 5, 1500)).label, EvidenceLabel::interpolated);
  // Two bands away, another precision path, another vendor: extrapolated.
  EXPECT_EQ(index.assess(key(kH100, "vllm", 100, 1500)).label, EvidenceLabel::extrapolated);
  EXPECT_EQ(index.assess(key(kH100, "vllm", 5, 1500, "fp8")).label, EvidenceLabel::extrapolated);
  const Evidence far = index.assess(key(kMi325, "deepspeed", 1, 100000));
  EXPECT_EQ(far.label, EvidenceLabel::extrapolated);
  EXPECT_NE(far.reason.find("cdna3"), std::string::npos) << far.reason;
  // The A100 row is calibrated for its own setup, until its source is held out.
  EXPECT_EQ(index.assess(key(kA100, "vllm-0.2", 1, 700)).label, EvidenceLabel::calibrated);
  const Evidence held_out =
      index.assess(key(kA100, "vllm-0.2", 1, 700), [](const EvidenceEntry& e) { return e.source == "splitwise"; });
  EXPECT_EQ(held_out.label, EvidenceLabel::extrapolated);
  ASSERT_EQ(held_out.nearest.size(), 1u);
  EXPECT_EQ(held_out.nearest[0].source, "mlenergy-v3");
}

TEST(Evidence, IndexFileRoundTripsAndRefusesBadLines) {
  const auto dir = std::filesystem::temp_directory_path() / ("llmco2_evidence_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_evidence_index(dir / "index.csv", example_index());
  const EvidenceIndex back = read_evidence_index(dir / "index.csv");
  ASSERT_EQ(back.entries().size(), 2u);
  EXPECT_EQ(back.entries()[0].key.generation, "hopper");
  EXPECT_EQ(back.entries()[1].rows, 5);
  EXPECT_EQ(back.assess(key(kH100, "vllm", 5, 1500)).label, EvidenceLabel::calibrated);
  {
    std::ofstream bad(dir / "bad.csv");
    bad << "source,gpu,generation,vendor,engine,precision,family,batch_band,context_band,rows\n"
        << "s,h100-sxm,hopper,nvidia,vllm,16-bit,llama,7,0,3\n";
  }
  try {
    read_evidence_index(dir / "bad.csv");
    FAIL() << "a band of 7 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2: column 'batch_band'"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

std::vector<HeldOutResidual> repeated(EvidenceLabel label, const std::string& source, double ratio, int n) {
  return std::vector<HeldOutResidual>(static_cast<size_t>(n), HeldOutResidual{label, source, ratio});
}

TEST(EvidenceIntervals, QuantilesWeighEachSourceEqually) {
  // Source a: 10 rows at 0.5; source b: 90 rows at 1.0 and 1.5 (45 each). Each source weighs 1/2: a's rows 0.05
  // each. At level 0.6 the interval runs from the 20th to the 80th percentile: 0.5 (a alone reaches 0.5 of the
  // weight) to 1.5 (0.5 + 0.25 reaches only 0.75 at 1.0). Rows counted alike, the 20th percentile would be 1.0.
  std::vector<HeldOutResidual> r = repeated(EvidenceLabel::interpolated, "a", 0.5, 10);
  for (double ratio : {1.0, 1.5}) {
    const auto more = repeated(EvidenceLabel::interpolated, "b", ratio, 45);
    r.insert(r.end(), more.begin(), more.end());
  }
  const LabelIntervals fitted = fit_label_intervals(r, 0.6);
  ASSERT_TRUE(fitted.count(EvidenceLabel::interpolated));
  const RatioInterval& i = fitted.at(EvidenceLabel::interpolated);
  EXPECT_EQ(i.n, 100u);
  EXPECT_EQ(i.sources, 2u);
  EXPECT_EQ(i.lower, 0.5);
  EXPECT_EQ(i.upper, 1.5);
  EXPECT_EQ(i.median, 0.5);  // a's weight reaches one half exactly
  EXPECT_TRUE(covers(i, 1.0));
  EXPECT_FALSE(covers(i, 1.6));
  // No residual of the other labels: the calibrated label pools with interpolated, extrapolated with it too.
  ASSERT_TRUE(fitted.count(EvidenceLabel::calibrated));
  EXPECT_EQ(fitted.at(EvidenceLabel::calibrated).pooled_with, "interpolated");
  EXPECT_EQ(fitted.at(EvidenceLabel::extrapolated).pooled_with, "interpolated");
}

TEST(EvidenceIntervals, FewResidualsPoolAndWorseLabelsNest) {
  // calibrated: 5 rows of one source (too few: pooled with interpolated); interpolated: 0.8 and 1.25 from two sources
  // (40 rows each); extrapolated: 1.0 only, from two sources, narrower than interpolated until nested.
  std::vector<HeldOutResidual> r = repeated(EvidenceLabel::calibrated, "a", 1.0, 5);
  for (const auto& part :
       {repeated(EvidenceLabel::interpolated, "a", 0.8, 40), repeated(EvidenceLabel::interpolated, "b", 1.25, 40),
        repeated(EvidenceLabel::extrapolated, "a", 1.0, 20), repeated(EvidenceLabel::extrapolated, "c", 1.0, 20)})
    r.insert(r.end(), part.begin(), part.end());
  const LabelIntervals fitted = fit_label_intervals(r, 0.8);
  const RatioInterval &cal = fitted.at(EvidenceLabel::calibrated), &inter = fitted.at(EvidenceLabel::interpolated),
                      &extra = fitted.at(EvidenceLabel::extrapolated);
  EXPECT_EQ(cal.pooled_with, "interpolated");
  EXPECT_EQ(cal.n, 85u);
  EXPECT_EQ(inter.lower, 0.8);
  EXPECT_EQ(inter.upper, 1.25);
  EXPECT_EQ(extra.median, 1.0);
  EXPECT_EQ(extra.lower, 0.8);  // nested: at least the interpolated interval
  EXPECT_EQ(extra.upper, 1.25);
}

TEST(EvidenceIntervals, RegimesAreTheBandsCappedAtTwo) {
  EvidenceKey key;
  key.batch_band = batch_band(300), key.context_band = context_band(2000);  // bands 4 and 1
  EXPECT_EQ(regime_of(key), (Regime{2, 1}));
  EXPECT_EQ(regime_name(regime_of(key)), "batch 16+, context 1k-4k");
  key.batch_band = batch_band(1), key.context_band = context_band(100000);  // bands 0 and 4
  EXPECT_EQ(regime_name(regime_of(key)), "batch 1-3, context 4k+");
  key.batch_band = batch_band(15), key.context_band = context_band(1023);
  EXPECT_EQ(regime_name(regime_of(key)), "batch 4-15, context <1k");
}

TEST(EvidenceIntervals, FileRoundTripsAndRefusesDisorder) {
  const auto dir = std::filesystem::temp_directory_path() / ("llmco2_intervals_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EvidenceIntervals iv;
  iv.basis = "hand-made";
  iv.energy[EvidenceLabel::calibrated] = {40, 2, 0.9, 1.2, 1.05, ""};
  iv.latency[EvidenceLabel::calibrated] = {40, 2, 0.8, 1.1, 0.95, "interpolated"};
  iv.energy_coverage[{EvidenceLabel::calibrated, Regime{0, 2}}] = {94, 2, 0.45};
  write_evidence_intervals(dir / "i.json", iv);
  const EvidenceIntervals back = read_evidence_intervals(dir / "i.json");
  EXPECT_EQ(back.basis, "hand-made");
  EXPECT_EQ(back.energy.at(EvidenceLabel::calibrated).upper, 1.2);
  EXPECT_EQ(back.latency.at(EvidenceLabel::calibrated).pooled_with, "interpolated");
  ASSERT_EQ(back.energy_coverage.size(), 1u);
  const RegimeCoverage& c = back.energy_coverage.at({EvidenceLabel::calibrated, Regime{0, 2}});
  EXPECT_EQ(c.n, 94u);
  EXPECT_EQ(c.covered, 0.45);
  EXPECT_EQ(coverage_sentence(c, Regime{0, 2}),
            "held out, it covered 45% of 94 rows (2 sources) in this regime (batch 1-3, context 4k+)");
  EXPECT_TRUE(back.latency_coverage.empty());
  {
    std::ofstream bad(dir / "bad.json");
    bad << R"({"level": 0.8, "basis": "x", "energy": {"calibrated": {"n": 3, "sources": 1, "lower": 1.2,
              "upper": 1.1, "median": 1.15}}, "latency": {}})";
  }
  try {
    read_evidence_intervals(dir / "bad.json");
    FAIL() << "lower above upper was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("energy.calibrated"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "band.json") << R"({"level": 0.8, "basis": "x", "energy": {}, "latency": {},
      "energy_coverage": [{"label": "calibrated", "batch_band": 3, "context_band": 0, "n": 40, "sources": 2,
      "covered": 0.8}]})";
  try {
    read_evidence_intervals(dir / "band.json");
    FAIL() << "a regime band of 3 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("energy_coverage[0]: key 'batch_band' = 3"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Ranking, SpearmanByHand) {
  EXPECT_DOUBLE_EQ(research::spearman({1, 2, 3}, {30, 20, 10}), -1.0);
  EXPECT_DOUBLE_EQ(research::spearman({1, 2, 3}, {1, 5, 9}), 1.0);
  // Ties take their mean rank: ranks (1, 2.5, 2.5, 4) and (1, 2, 3, 4): 4.5 / sqrt(4.5 x 5).
  EXPECT_NEAR(research::spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_EQ(research::spearman({1, 1, 1}, {1, 2, 3}), 0.0);
}

}  // namespace
}  // namespace llmco2::evidence
