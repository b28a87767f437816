// Tests of the calibration: on rows the simulator itself labelled with known parameters, the fit must find
// parameters that reproduce them far better than the starting point, and the accuracy figures are computed by hand.
#include <gtest/gtest.h>

#include "calibration/calibration.h"
#include "sim/label.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(Calibration, FitRecoversSimulatedGroundTruth) {
  // Truth inside the ranges, away from the defaults: the fit must move to it.
  SimParams truth = default_sim_params();
  truth.power.active = 0.3;
  truth.power.memory = 0.8;
  truth.sync_wait_fraction = 0.1;
  CatalogCache catalogs;
  std::vector<DatasetRow> rows;
  for (long batch : {1L, 4L, 32L})
    for (long prompt : {128L, 2048L})
      for (int gpus : {1, 2}) {
        const SimConfig c =
            config_for_plan({0, "llama-3.1-8b", "a100-80gb-sxm", gpus, batch, prompt, 64, "", ""}, catalogs);
        DatasetRow row = simulated_row(c, simulate(*c.model, *c.gpu, c.request, c.scenario, truth), "t");
        row.source = gpus == 1 ? "one" : "two";
        rows.push_back(row);
      }
  const CalibrationSet set = prepare_calibration(rows);
  ASSERT_EQ(set.samples.size(), 12u);
  ASSERT_TRUE(set.skipped.empty());
  std::vector<size_t> all(set.samples.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto predictions = [&](const SimParams& p) {
    std::vector<SimEstimate> out;
    for (const auto& s : set.samples) out.push_back(predict(s, p));
    return out;
  };
  FitOptions options;
  options.max_evaluations = 1500;
  const SimParams fitted = fit_params(set, all, default_sim_params(), options);
  const AccuracyStats before = accuracy(set, all, predictions(default_sim_params()), Quantity::energy);
  const AccuracyStats after = accuracy(set, all, predictions(fitted), Quantity::energy);
  const AccuracyStats latency = accuracy(set, all, predictions(fitted), Quantity::latency);
  EXPECT_GT(before.mape, 0.05);
  EXPECT_LT(after.mape, 0.01);
  EXPECT_LT(latency.mape, 0.05);
}

TEST(Calibration, AccuracyFiguresByHand) {
  CalibrationSet set;
  set.rows.resize(1);
  for (double measured : {100.0, 100.0, 100.0, 200.0}) {
    CalibrationSample s;
    s.energy_j = measured;
    set.samples.push_back(s);
  }
  // errors: 5%, 20%, 50%, 0% -> MAPE 18.75%, EBA(10%) 2/4, EBA(30%) 3/4; no latencies measured
  const std::vector<SimEstimate> p = {{105, 0}, {80, 0}, {150, 0}, {200, 0}};
  const AccuracyStats a = accuracy(set, {0, 1, 2, 3}, p, Quantity::energy);
  EXPECT_EQ(a.n, 4u);
  EXPECT_NEAR(a.mape, 0.1875, 1e-12);
  EXPECT_DOUBLE_EQ(a.eba10, 0.5);
  EXPECT_DOUBLE_EQ(a.eba30, 0.75);
  EXPECT_EQ(accuracy(set, {0, 1, 2, 3}, p, Quantity::latency).n, 0u);
}

}  // namespace
}  // namespace llmco2
