// Carbon accounting: operational and embodied CO2 against hand-computed values, the region and PUE catalogs, the
// embodied bases, and the intervals from error bands.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <set>
#include <string>

#include "carbon/footprint.h"
#include "carbon/region_catalog.h"
#include "core/error.h"
#include "core/paths.h"
#include "core/statistics.h"
#include "hardware/gpu_catalog.h"
#include "support/all_modules.h"
#include "support/temp_file.h"

namespace llmco2 {
namespace {

using testing_support::write_temp;

TEST(Carbon, OperationalIsEnergyTimesPueTimesIntensity) {
  // 1 kWh in a PUE 1.5 facility on a 400 g/kWh grid: 1 x 1.5 x 400 = 600 g.
  EXPECT_DOUBLE_EQ(operational_g(3.6e6, 1.5, 400), 600.0);
  // 875.6 J = 0.00024322 kWh; x 1.1 x 430 = 0.115045... g
  EXPECT_NEAR(operational_g(875.6, 1.1, 430), 875.6 / 3.6e6 * 1.1 * 430, 1e-15);
  EXPECT_DOUBLE_EQ(operational_g(0, 1.5, 400), 0.0);
}

TEST(Carbon, EmbodiedIsAmortisedOverTheLifetimePerGpu) {
  // 46.652 kg per GPU, 2 GPUs busy for an hour of a 5 x 365-day lifetime: 46652 g x 3600 / 157,680,000 x 2.
  EXPECT_DOUBLE_EQ(lifetime_seconds(5), 157680000.0);
  EXPECT_NEAR(embodied_g(46.652, 3600, 5, 2), 2.1302283105022832, 1e-12);
  // A whole lifetime charges the whole embodied carbon once per GPU.
  EXPECT_NEAR(embodied_g(10, lifetime_seconds(3), 3, 4), 40000.0, 1e-9);
}

TEST(Carbon, LlmCarbonBasisIsDieAreaTimesCpaPlusMemory) {
  const EmbodiedParams& params = bundled_embodied_params();
  EXPECT_EQ(params.lifetime_years, 5);
  EXPECT_EQ(params.llmcarbon_memory_kgco2e_per_gb, 0.4);
  // H100 SXM: 8.14 cm2 x 1.8 kg/cm2 + 80 GB x 0.4 kg/GB = 14.652 + 32 = 46.652 kg.
  const GpuEmbodied h100 = gpu_embodied(GpuCatalog::bundled().resolve("h100-sxm"), EmbodiedBasis::llmcarbon, params);
  EXPECT_NEAR(*h100.kgco2e, 46.652, 1e-9);
  EXPECT_NE(h100.derivation.find("8.14 cm2 x 1.8 kg/cm2"), std::string::npos) << h100.derivation;
  // T4: 5.45 cm2 x 1.2 + 16 GB x 0.4 = 6.54 + 6.4 = 12.94 kg.
  EXPECT_NEAR(*gpu_embodied(GpuCatalog::bundled().resolve("t4"), EmbodiedBasis::llmcarbon, params).kgco2e, 12.94, 1e-9);
}

TEST(Carbon, TheVendorBasisWithoutAPcfIsAnErrorNamingTheGpu) {
  const EmbodiedParams& params = bundled_embodied_params();
  try {
    gpu_embodied(GpuCatalog::bundled().resolve("h100-sxm"), EmbodiedBasis::vendor, params);
    FAIL() << "no vendor PCF is bundled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("h100-sxm has no vendor product carbon footprint"), std::string::npos);
  }
  EXPECT_THROW(parse_embodied_basis("act"), Error);
}

TEST(Carbon, GpusWithoutASourcedLlmCarbonFigureGetAnUnknownOne) {
  const EmbodiedParams& params = bundled_embodied_params();
  // Samsung 8 nm (no LLMCarbon figure): a10g, a40, rtx-3090; no published die area: b200, gb200, b300, gb300, mi250x,
  // mi300x, mi325x, gaudi3.
  const std::set<std::string> unknown = {"a10g",  "a40",    "rtx-3090", "b200",   "gb200", "b300",
                                         "gb300", "mi250x", "mi300x",   "mi325x", "gaudi3"};
  for (const std::string& id : unknown) {
    const GpuEmbodied e = gpu_embodied(GpuCatalog::bundled().resolve(id), EmbodiedBasis::llmcarbon, params);
    EXPECT_FALSE(e.known()) << id;
    EXPECT_EQ(e.unknown_label(), fmt::format("unknown (no sourced embodied figure for {})", id));
    EXPECT_NE(e.derivation.find("--embodied-kg"), std::string::npos) << e.derivation;
  }
  // Every other bundled GPU has a figure.
  for (const Gpu& gpu : GpuCatalog::bundled().gpus())
    if (!unknown.contains(gpu.id)) {
      EXPECT_TRUE(gpu_embodied(gpu, EmbodiedBasis::llmcarbon, params).known()) << gpu.id;
    }
}

TEST(Carbon, FootprintWithUnknownEmbodiedIsOperationalOnly) {
  Prediction p = phase_prediction(3.6e5, 3.24e6, 2.0, 18.0);  // 0.1 + 0.9 kWh; 2 + 18 s
  CarbonInputs in;
  in.ci_g_per_kwh = 200;
  in.pue = 1.25;
  in.embodied =
      gpu_embodied(GpuCatalog::bundled().resolve("b200"), EmbodiedBasis::llmcarbon, bundled_embodied_params());
  in.gpus = 2;
  PredictorErrorBands bands{ErrorBand{100, 2.0, 0.5, 1.0, 2.0}, ErrorBand{100, 1.5, 0.8, 1.0, 1.5}};
  const Footprint f = footprint(p, in, &bands);
  EXPECT_NEAR(*f.energy_j.total, 3.6e6, 1e-6);
  EXPECT_NEAR(*f.operational_g.total, 250, 1e-9);
  EXPECT_FALSE(f.embodied_g.total.has_value());
  EXPECT_FALSE(f.embodied_g.prefill.has_value());
  EXPECT_NEAR(*f.total_g.total, 250, 1e-9);  // operational only
  EXPECT_NEAR(*f.total_g.decode, 225, 1e-9);
  ASSERT_TRUE(f.embodied_unknown.has_value());
  EXPECT_EQ(*f.embodied_unknown, "unknown (no sourced embodied figure for b200)");
  ASSERT_TRUE(f.has_intervals);
  EXPECT_NEAR(f.total_g_interval.total->low, 125, 1e-9);
  EXPECT_NEAR(f.total_g_interval.total->high, 500, 1e-9);
  EXPECT_FALSE(footprint(p, CarbonInputs{.embodied = GpuEmbodied{157.68}}, nullptr).embodied_unknown);
}

TEST(Carbon, VendorBasisReadsTheGpuFilesPcfWhichMustNameItsSource) {
  Json gpu = read_json_file(std::string(LLMCO2_TESTDATA) + "/gpus/my_gpu.json");
  gpu["embodied"]["vendor_pcf_kgco2e"] = 150.0;
  EXPECT_THROW(gpu_from_json(gpu, "pcf.json"), Error);  // no source for the PCF
  gpu["sources"]["embodied.vendor_pcf_kgco2e"] = "the vendor's PCF summary";
  const GpuEmbodied e = gpu_embodied(gpu_from_json(gpu, "pcf.json"), EmbodiedBasis::vendor, bundled_embodied_params());
  EXPECT_EQ(e.kgco2e, 150.0);
  gpu["embodied"]["vendor_pcf_kgco2e"] = -1.0;
  EXPECT_THROW(gpu_from_json(gpu, "pcf.json"), Error);
}

TEST(Carbon, FootprintPerPhaseAndItsIntervals) {
  Prediction p = phase_prediction(3.6e5, 3.24e6, 2.0, 18.0);  // 0.1 + 0.9 kWh; 2 + 18 s
  CarbonInputs in;
  in.ci_g_per_kwh = 200;
  in.pue = 1.25;
  in.embodied.kgco2e = 157.68;  // 157,680 g over 157,680,000 s: 0.001 g per GPU-second
  in.lifetime_years = 5;
  in.gpus = 2;
  PredictorErrorBands bands{ErrorBand{100, 2.0, 0.5, 1.0, 2.0}, ErrorBand{100, 1.5, 0.8, 1.0, 1.5}};  // x2, x1.5
  const Footprint f = footprint(p, in, &bands);
  EXPECT_NEAR(*f.operational_g.prefill, 0.1 * 1.25 * 200, 1e-9);  // 25 g
  EXPECT_NEAR(*f.operational_g.decode, 0.9 * 1.25 * 200, 1e-9);   // 225 g
  EXPECT_NEAR(*f.operational_g.total, 250, 1e-9);
  EXPECT_NEAR(*f.embodied_g.prefill, 2 * 0.001 * 2, 1e-12);  // 2 s x 2 GPUs
  EXPECT_NEAR(*f.embodied_g.total, 20 * 0.001 * 2, 1e-12);
  EXPECT_NEAR(*f.total_g.total, 250.04, 1e-9);
  ASSERT_TRUE(f.has_intervals);
  EXPECT_NEAR(f.energy_j_interval.total->low, 1.8e6, 1e-6);
  EXPECT_NEAR(f.energy_j_interval.total->high, 7.2e6, 1e-6);
  EXPECT_NEAR(f.latency_s_interval.total->high, 30, 1e-12);
  EXPECT_NEAR(f.latency_s_interval.total->low, 20 / 1.5, 1e-12);
  EXPECT_NEAR(f.total_g_interval.total->low, 125 + 0.04 / 1.5, 1e-9);  // 250 / 2 + 0.04 / 1.5
  EXPECT_NEAR(f.total_g_interval.total->high, 500 + 0.06, 1e-9);
  EXPECT_FALSE(footprint(p, in, nullptr).has_intervals);
  // A predictor that knows totals only gets totals only.
  const Footprint totals = footprint(total_prediction(3.6e6, 10), in, nullptr);
  EXPECT_FALSE(totals.operational_g.prefill.has_value());
  EXPECT_NEAR(*totals.total_g.total, 250 + 0.02, 1e-9);
}

TEST(RegionCatalog, ResolvesCountriesCloudRegionsAndNames) {
  const RegionCatalog& c = RegionCatalog::bundled();
  const Region& france = c.resolve("FRA");
  EXPECT_EQ(france.ci_g_per_kwh, 56.0);  // OWID 2023, ../shared/reference/carbon.md section 1
  EXPECT_EQ(france.year, 2023);
  EXPECT_EQ(&c.resolve("france"), &france);
  EXPECT_EQ(c.resolve("usa").ci_g_per_kwh, 369.5);
  const Region& iowa = c.resolve("gcp:us-central1");
  EXPECT_EQ(iowa.ci_g_per_kwh, 430);
  EXPECT_EQ(iowa.provider, "gcp");
  EXPECT_EQ(c.resolve("us-east-1").id, "aws:us-east-1");      // bare, only AWS has it
  EXPECT_EQ(c.resolve("aws:us-east-1").ci_g_per_kwh, 322);    // Google's Ashburn figure, same grid
  EXPECT_EQ(c.resolve("gcp:me-central1").ci_g_per_kwh, 575);  // "me-cenrtal1" in the source file
  EXPECT_EQ(c.resolve("WORLD").ci_g_per_kwh, 481);
  try {
    c.resolve("atlantis");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown region 'atlantis'"), std::string::npos);
  }
}

// bundled() reads regions.csv one row per id (start-up); the whole-table reader is the reference: every id, in any
// case, resolves to the same values through both.
TEST(RegionCatalog, RowByRowLookUpEqualsTheWholeTable) {
  const RegionCatalog whole =
      RegionCatalog::load(data_dir() / "carbon" / "regions.csv", data_dir() / "carbon" / "pue.csv");
  ASSERT_GT(whole.regions().size(), 200u);
  for (const Region& r : whole.regions()) {
    std::string upper = r.id;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const Region& row = RegionCatalog::bundled().resolve(upper);
    EXPECT_EQ(row.id, r.id);
    EXPECT_EQ(row.kind, r.kind);
    EXPECT_EQ(row.provider, r.provider);
    EXPECT_EQ(row.name, r.name);
    EXPECT_EQ(row.ci_g_per_kwh, r.ci_g_per_kwh) << r.id;
    EXPECT_EQ(row.year, r.year);
    EXPECT_EQ(row.source, r.source);
  }
}

TEST(RegionCatalog, EveryValueNamesItsSourceAndYear) {
  const RegionCatalog& c = RegionCatalog::bundled();
  EXPECT_GT(c.regions().size(), 250u);
  for (const auto& r : c.regions()) {
    EXPECT_FALSE(r.source.empty()) << r.id;
    EXPECT_GE(r.year, 2000) << r.id;
    EXPECT_LE(r.year, 2026) << r.id;
    EXPECT_GE(r.ci_g_per_kwh, 0) << r.id;
    EXPECT_LT(r.ci_g_per_kwh, 1500) << r.id;
  }
  for (const auto& p : c.pue_entries()) {
    EXPECT_FALSE(p.source.empty()) << p.id;
    EXPECT_GE(p.year, 2020) << p.id;
    EXPECT_GE(p.pue, 1.0) << p.id;
    EXPECT_LE(p.pue, 3.0) << p.id;
  }
}

TEST(RegionCatalog, PueIsANumberOrAnEntryAndBadValuesAreErrors) {
  const RegionCatalog& c = RegionCatalog::bundled();
  EXPECT_EQ(c.resolve_pue("1.2").pue, 1.2);
  EXPECT_EQ(c.resolve_pue("aws").pue, 1.14);
  EXPECT_EQ(c.resolve_pue("industry-average").pue, 1.58);
  for (const char* bad : {"0.9", "-1", "abc", "7"}) EXPECT_THROW(c.resolve_pue(bad), Error) << bad;
}

TEST(RegionCatalog, ImplausibleValuesAreRefusedNamingFileLineAndColumn) {
  const std::string header = "id,kind,provider,name,country,ci_g_per_kwh,year,source\n";
  const auto good_regions = write_temp("range_regions.csv", header + "AAA,country,,A,AAA,100,2023,src\n");
  const auto good_pue = write_temp("range_pue.csv", "id,pue,year,source\nx,1.1,2024,somewhere\n");
  EXPECT_NO_THROW(RegionCatalog::load(good_regions, good_pue));
  struct Case {
    std::string regions, pue, message;
  };
  const std::string bad = "range_regions_bad.csv:2: ";
  const Case cases[] = {
      {header + "AAA,country,,A,AAA,2500,2023,src\n", "", bad + "ci_g_per_kwh = 2500 is outside [0, 2000]"},
      {header + "AAA,country,,A,AAA,-1,2023,src\n", "", bad + "ci_g_per_kwh = -1 is outside [0, 2000]"},
      {header + "AAA,country,,A,AAA,100,1950,src\n", "", bad + "year = 1950 is outside [1990, 2100]"},
      {"", "id,pue,year,source\nx,3.5,2024,s\n", "range_pue_bad.csv:2: pue = 3.5 is outside [1, 3]"},
      {"", "id,pue,year,source\nx,0.9,2024,s\n", "range_pue_bad.csv:2: pue = 0.9 is outside [1, 3]"},
  };
  for (const Case& c : cases) {
    const auto regions = c.regions.empty() ? good_regions : write_temp("range_regions_bad.csv", c.regions);
    const auto pue = c.pue.empty() ? good_pue : write_temp("range_pue_bad.csv", c.pue);
    try {
      RegionCatalog::load(regions, pue);
      ADD_FAILURE() << "accepted: " << c.message;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

TEST(RegionCatalog, BadRowsNameTheFileAndLine) {
  const auto pue = write_temp("pue.csv", "id,pue,year,source\nx,1.1,2024,somewhere\n");
  const auto regions = write_temp("regions.csv",
                                  "id,kind,provider,name,country,ci_g_per_kwh,year,source\n"
                                  "AAA,country,,A,AAA,100,2023,src\nBBB,country,,B,BBB,lots,2023,src\n");
  try {
    RegionCatalog::load(regions, pue);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("regions.csv:3: column 'ci_g_per_kwh': expected a number, got 'lots'"),
              std::string::npos)
        << e.what();
  }
  const auto no_source = write_temp(
      "regions2.csv", "id,kind,provider,name,country,ci_g_per_kwh,year,source\nAAA,country,,A,AAA,1,2023,\n");
  EXPECT_THROW(RegionCatalog::load(no_source, pue), Error);
}

TEST(ErrorBands, PercentilesAndRatios) {
  EXPECT_NEAR(percentile({5, 1, 4, 2, 3}, 0.1), 1.4, 1e-12);
  EXPECT_NEAR(percentile({5, 1, 4, 2, 3}, 0.9), 4.6, 1e-12);
  EXPECT_NEAR(percentile({5, 1, 4, 2, 3}, 0.5), 3.0, 1e-12);
  std::vector<double> measured, predicted;
  for (int i = 1; i <= 21; ++i) {  // measured/predicted = 0.5, 0.6, ..., 2.5
    measured.push_back(0.4 + 0.1 * i);
    predicted.push_back(1.0);
  }
  const auto band = error_band(measured, predicted);
  ASSERT_TRUE(band);
  EXPECT_EQ(band->n, 21u);
  EXPECT_NEAR(band->low_ratio, 0.7, 1e-12);
  EXPECT_NEAR(band->median_ratio, 1.5, 1e-12);
  EXPECT_NEAR(band->high_ratio, 2.3, 1e-12);
  // max(r, 1/r) sorted: 1, 1.1, 1.11, 1.2, 1.25, 1.3, 1.4, 1.43, 1.5, 1.6, 1.67, 1.7, 1.8, 1.9, 2, 2, 2.1, ...: the
  // 80th percentile is the 17th of 21, 2.1.
  EXPECT_NEAR(band->factor, 2.1, 1e-12);
  EXPECT_FALSE(error_band({1, 2}, {1, 2}).has_value());  // too few pairs
}

TEST(ErrorBands, FileRoundTripsAndBadFilesAreErrors) {
  ErrorBands bands;
  bands.evaluated_on = "test";
  bands.predictors["x"] = {ErrorBand{30, 1.8, 0.6, 0.9, 1.7}, ErrorBand{30, 2.2, 0.5, 1.1, 2.0}};
  const auto path = std::filesystem::path(testing::TempDir()) / "bands.json";
  write_error_bands(path, bands);
  const ErrorBands back = read_error_bands(path);
  EXPECT_EQ(back.evaluated_on, "test");
  EXPECT_EQ(back.predictors.at("x").energy->high_ratio, 1.7);
  EXPECT_EQ(back.predictors.at("x").latency->n, 30u);
  EXPECT_EQ(back.predictors.at("x").latency->factor, 2.2);
  const auto bad =
      write_temp("bad_bands.json", R"({"level": 0.8, "evaluated_on": "t", "predictors": {"x": {"energy": {"n": 3, )"
                                   R"("factor": 2, "low_ratio": 2, "median_ratio": 1, "high_ratio": 3}}}})");
  EXPECT_THROW(read_error_bands(bad), Error);
}

}  // namespace
}  // namespace llmco2
