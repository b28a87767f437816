// Choosing a GPU setup: which setups serve a request, and the lowest-carbon one meeting a latency objective, with a
// predictor whose answers are known.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "carbon/embodied.h"
#include "compare/price_catalog.h"
#include "compare/setup_comparison.h"
#include "core/error.h"
#include "features/memory_fit.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

// Energy grows with the GPU count (1 kWh per GPU), latency falls (8 s / GPUs).
class ScalingPredictor final : public Predictor {
 public:
  std::string name() const override { return "scaling"; }
  Prediction predict(const PredictorInput& c) const override {
    return phase_prediction(0, 3.6e6 * c.request.gpus, 0, 8.0 / c.request.gpus);
  }
};

// Each row's setup as a caller resolves it (api/resolve.h does for the product): the request on that GPU type and
// count, checked to run there.
SetupFor fixed_setup(const ModelSpec& model, const Request& request, const CarbonFor& carbon) {
  return [=](const Gpu& gpu, int gpus) {
    Request r = request;
    r.gpus = gpus;
    check_runs(model, r, gpu);
    return ComparedSetup{predictor_input(model, gpu, r), carbon(gpu, gpus), {}};
  };
}

SweepSetupFor fixed_sweep(const ModelSpec& model, const Request& request, const Gpu& gpu, const CarbonFor& carbon) {
  return [=](int gpus, long batch, long prompt) {
    Request r = request;
    r.batch = batch, r.prompt_tokens = prompt;
    return fixed_setup(model, r, carbon)(gpu, gpus);
  };
}

CarbonInputs carbon_for(const Gpu&, int gpus) {
  CarbonInputs in;
  in.ci_g_per_kwh = 100;
  in.pue = 1;
  in.embodied.kgco2e = 157.68;  // 0.001 g per GPU-second
  in.lifetime_years = 5;
  in.gpus = gpus;
  return in;
}

TEST(Compare, LowestCarbonSetupMeetingTheObjective) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  Request request;
  request.precision = precision_or_default("", model.default_dtype);
  const std::vector<Gpu> gpus = {GpuCatalog::bundled().resolve("h100-sxm")};
  const ScalingPredictor predictor;
  // Without an objective: 1 GPU (100 g + 0.008 g). Total CO2 = 100 x n + 0.008 g (embodied: 8/n s x n GPUs).
  const Comparison any =
      compare_request(predictor, gpus, {1, 2, 4, 8}, fixed_setup(model, request, carbon_for), std::nullopt);
  ASSERT_EQ(any.rows.size(), 4u);
  ASSERT_TRUE(any.best);
  EXPECT_EQ(any.rows[*any.best].gpus, 1);
  EXPECT_NEAR(any.rows[0].total_g(), 100.008, 1e-9);
  EXPECT_NEAR(any.rows[3].per_gpu_g(), 800.008 / 8, 1e-9);
  // Latency 8/n s: a 3 s objective needs 4 GPUs or more; 4 is the lowest-carbon of those.
  const Comparison slo = compare_request(predictor, gpus, {1, 2, 4, 8}, fixed_setup(model, request, carbon_for), 3.0);
  ASSERT_TRUE(slo.best);
  EXPECT_EQ(slo.rows[*slo.best].gpus, 4);
  EXPECT_FALSE(slo.rows[1].meets_slo);
  // Nothing meets 0.5 s.
  EXPECT_FALSE(compare_request(predictor, gpus, {1, 2, 4, 8}, fixed_setup(model, request, carbon_for), 0.5).best);
}

// 100 g/kWh, PUE 1, each GPU's LLMCarbon figure: unknown for b200 (no published die area).
CarbonInputs llmcarbon_for(const Gpu& gpu, int gpus) {
  CarbonInputs in = carbon_for(gpu, gpus);
  in.embodied = gpu_embodied(gpu, EmbodiedBasis::llmcarbon, bundled_embodied_params());
  return in;
}

TEST(Compare, GpusWithoutAnEmbodiedFigureAreComparedOnOperationalCo2) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  Request request;
  request.precision = precision_or_default("", model.default_dtype);
  const std::vector<Gpu> gpus = {GpuCatalog::bundled().resolve("h100-sxm"), GpuCatalog::bundled().resolve("b200")};
  const ScalingPredictor predictor;
  const Comparison c =
      compare_request(predictor, gpus, {1, 2}, fixed_setup(model, request, llmcarbon_for), std::nullopt);
  ASSERT_EQ(c.rows.size(), 4u);
  for (const SetupRow& r : c.rows) {
    EXPECT_TRUE(r.unavailable.empty()) << r.gpu << ": " << r.unavailable;
    EXPECT_NEAR(r.energy_j, 3.6e6 * r.gpus, 1e-6) << r.gpu;
    EXPECT_NEAR(r.operational_g, 100.0 * r.gpus, 1e-9) << r.gpu;  // 1 kWh per GPU at 100 g/kWh
  }
  const SetupRow& h100 = c.rows[0];
  const SetupRow& b200 = c.rows[2];
  EXPECT_EQ(b200.gpu, "b200");
  EXPECT_TRUE(h100.embodied_known);
  EXPECT_GT(h100.embodied_g, 0);
  EXPECT_FALSE(b200.embodied_known);
  EXPECT_EQ(b200.embodied_g, 0);
  EXPECT_NEAR(b200.total_g(), b200.operational_g, 1e-12);  // operational only
  ASSERT_TRUE(c.best);
  EXPECT_EQ(c.rows[*c.best].gpu, "b200");  // 100 g against 100 g + H100's embodied share
  // The same over a log: the account marks the embodied carbon unknown and its totals are operational.
  RequestLog log;
  log.source = "test";
  log.format = "dataset";
  log.requests = {{std::nullopt, 100, 10, 2}, {std::nullopt, 200, 20, 3}};
  const Comparison logged = compare_log(predictor, log, {GpuCatalog::bundled().resolve("b200")}, {1},
                                        fixed_setup(model, request, llmcarbon_for), std::nullopt, 1.1);
  ASSERT_EQ(logged.rows.size(), 1u);
  EXPECT_TRUE(logged.rows[0].unavailable.empty()) << logged.rows[0].unavailable;
  EXPECT_FALSE(logged.rows[0].embodied_known);
  EXPECT_NEAR(logged.rows[0].operational_g, 200, 1e-6);  // 2 requests x 1 kWh x 100 g/kWh
  EXPECT_NEAR(logged.rows[0].total_g(), logged.rows[0].operational_g, 1e-12);
}

TEST(Compare, SetupsThatCannotServeSayWhy) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-70b");
  Request request;
  request.precision = precision_or_default("", model.default_dtype);
  const ScalingPredictor predictor;
  const Comparison c = compare_request(predictor, {GpuCatalog::bundled().resolve("h100-sxm")}, {1, 2, 4, 8},
                                       fixed_setup(model, request, carbon_for), std::nullopt);
  EXPECT_NE(c.rows[0].unavailable.find("does not fit"), std::string::npos) << c.rows[0].unavailable;
  EXPECT_TRUE(c.rows[2].unavailable.empty());
  ASSERT_TRUE(c.best);
  EXPECT_EQ(c.rows[*c.best].gpus, 2);  // 140 GB of bf16 weights fit 2 x 80 GB
}

TEST(Compare, SweepLeavesOutSetupsThatCannotServe) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  Request request;
  request.precision = precision_or_default("", model.default_dtype);
  const ScalingPredictor predictor;
  const auto points = sweep_gpu_counts(predictor, {1, 4}, {64, 1024}, {1, 2, 4},
                                       fixed_sweep(model, request, GpuCatalog::bundled().resolve("t4"), carbon_for));
  EXPECT_EQ(points.size(), 8u);  // 16 GB of weights do not fit one 16 GB T4
  for (const auto& p : points) {
    EXPECT_GT(p.gpus, 1);
    EXPECT_NEAR(p.operational_per_gpu_g, 100, 1e-9);  // 1 kWh per GPU at 100 g/kWh
  }
}

}  // namespace
}  // namespace llmco2

namespace llmco2 {
namespace {

// The bundled cloud prices: one row per GPU type and cloud, every GPU type a bundled one, every price dated and
// sourced; AWS's p5.48xlarge at 55.04 $ an hour for 8 H100s is 6.88 $ a GPU-hour (by hand).
TEST(PriceCatalog, BundledPricesAreDatedSourcedAndPerGpu) {
  const PriceCatalog& c = PriceCatalog::bundled();
  EXPECT_EQ(c.clouds(), (std::vector<std::string>{"aws", "azure", "gcp"}));
  for (const GpuPrice& p : c.prices()) {
    EXPECT_NO_THROW(GpuCatalog::bundled().resolve(p.gpu)) << p.gpu;
    EXPECT_EQ(p.date.size(), 10u) << p.gpu;
    EXPECT_NE(p.source.find("http"), std::string::npos) << p.gpu << " " << p.cloud;
  }
  const GpuPrice* h100 = c.find("aws", "h100-sxm");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->instance, "p5.48xlarge");
  EXPECT_DOUBLE_EQ(h100->usd_per_gpu_hour(), 6.88);
  EXPECT_EQ(c.find("aws", "mi300x"), nullptr);
  EXPECT_THROW(c.require_cloud("oracle"), Error);
}

// A bad row names its file, line and column.
TEST(PriceCatalog, ABadRowNamesItsLineAndColumn) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "llmco2_price_catalog_test";
  std::filesystem::create_directories(dir);
  const std::string header = "gpu,cloud,region,instance,gpus,usd_per_instance_hour,date,source\n";
  auto message = [&](const std::string& row) {
    std::ofstream(dir / "prices.csv") << header << row << "\n";
    try {
      PriceCatalog::load(dir / "prices.csv");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("h100-sxm,aws,us-east-1,p5,8,55,2026-13-01,x").find(":2: column 'date'"), std::string::npos);
  EXPECT_NE(message("h100-sxm,aws,us-east-1,p5,0,55,2026-01-01,x").find(":2: column 'gpus'"), std::string::npos);
  EXPECT_NE(message("h100-sxm,aws,us-east-1,p5,8,-1,2026-01-01,x").find("usd_per_instance_hour"), std::string::npos);
  EXPECT_NE(message("h100-sxm,aws,us-east-1,p5,8,55,2026-01-01,").find(":2: column 'source' is empty"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmco2
