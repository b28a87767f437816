// Per-family scores and the report's tables, on two rows worked out by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "evaluation/report.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

DatasetRow row(const std::string& model, double energy_j) {
  DatasetRow r;
  r.model = model;
  r.energy_j.total = energy_j;
  r.latency_s.total = 1.0;
  return r;
}

TEST(Scoring, FamiliesComeFromTheDataFile) {
  EXPECT_EQ(family_of("gemma-2b"), "Gemma");
  EXPECT_EQ(family_of("gemma-2-9b"), "Gemma2");
  EXPECT_EQ(family_of("mixtral-8x7b"), "Mixtral");
  EXPECT_EQ(family_of("falcon-7b"), "other");
}

TEST(EvalReport, TablesHoldTheHandComputedScores) {
  const std::vector<DatasetRow> rows = {row("gemma-2b", 100), row("bloom-560m", 200)};
  TestResult t;
  t.id = "x";
  t.title = "two rows";
  t.rows = {&rows[0], &rows[1]};
  PredictorResult p;
  p.name = "p";
  p.predictions = {total_prediction(110, 1.0), total_prediction(150, 1.2)};  // errors 10% and 25%
  p.score = score(t.rows, p.predictions);
  EXPECT_NEAR(p.score.energy_family_mean.mape, 0.175, 1e-12);
  EXPECT_DOUBLE_EQ(p.score.energy_family_mean.eba10, 0.5);
  EXPECT_NEAR(p.score.latency_all.mape, 0.1, 1e-12);
  t.predictors.push_back(p);
  EvalReport report;
  report.tests.push_back(t);
  report.ablation = {{"only row", "p"}};
  const auto dir = std::filesystem::path(testing::TempDir()) / "llmco2_eval_report";
  write_eval_report(report, dir / "accuracy.md", dir / "plots");
  std::ifstream in(dir / "accuracy.md");
  std::stringstream md;
  md << in.rdbuf();
  // MAPE table: Gemma 10%, Bloom 25%, mean and all rows 17.5%.
  EXPECT_NE(md.str().find("| p | 10.0% | 25.0% | 17.5% | 17.5% |"), std::string::npos) << md.str();
  EXPECT_NE(md.str().find("| only row | p | 50.0% | 17.5% |"), std::string::npos) << md.str();
}

}  // namespace
}  // namespace llmco2
