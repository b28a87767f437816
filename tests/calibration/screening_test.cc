// Tests of the screening of rows that are not GPU-bound: a GPU at least as good on every figure, clearly slower than a
// weaker one on the same work, with the weaker GPU's time interpolated by hand.
#include <gtest/gtest.h>

#include "calibration/screening.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

// A steady-state row of Llama-3.1-8B under vLLM generating 100 tokens a request at `ms_per_token`.
void add_row(CalibrationSet& set, const std::string& gpu, double batch, double ms_per_token,
             const std::string& task = "chat", double gen_tokens = 100) {
  DatasetRow row;
  row.source = "s", row.model = "llama-3.1-8b", row.dtype = "bf16", row.engine = "vllm", row.gpu = gpu;
  row.measures = Measures::steady_state;
  row.batch = batch, row.prompt_tokens = 90, row.gen_tokens = gen_tokens;
  row.notes = "task " + task;
  CalibrationSample sample;
  sample.row = set.rows.size();
  sample.latency_s = ms_per_token * 1e-3 * gen_tokens;
  set.rows.push_back(row);
  set.samples.push_back(sample);
}

TEST(Screening, ABetterGpuClearlySlowerThanAWeakerOneIsNotGpuBound) {
  CalibrationSet set;
  // H100 SXM: 10 ms a token at batch 8, 20 ms at 32; at batch 16, halfway in log batch: 15 ms.
  add_row(set, "h100-sxm", 8, 10);
  add_row(set, "h100-sxm", 32, 20);
  add_row(set, "b200", 16, 18.0);           // 1.20 x 15 ms: within the 1.25 margin, kept
  add_row(set, "b200", 16, 19.5);           // 1.30 x 15 ms: not GPU-bound
  add_row(set, "b200", 64, 40.0);           // batch 64 beyond the H100's 8-32 (+10%): nothing to compare with
  add_row(set, "b200", 8, 30.0, "gpqa");    // another task: not the same work
  add_row(set, "a100-80gb-sxm", 16, 40.0);  // slower, but an A100 is not at least as good as an H100
  const std::vector<NotGpuBound> slow = not_gpu_bound(set);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].sample, 3u);
  EXPECT_NE(slow[0].reason.find("b200 x1.30 of h100-sxm at batch 16"), std::string::npos) << slow[0].reason;
}

// Repeats at one batch count at their median: one fast outlier among the weaker GPU's repeats does not flag a row.
// H100 repeats at batch 8: 4, 10, 11 ms (median 10); a B200 row at 12 ms is 1.2x the median, 3x the outlier.
TEST(Screening, RepeatsCountAtTheirMedian) {
  CalibrationSet set;
  for (double ms : {4.0, 10.0, 11.0}) add_row(set, "h100-sxm", 8, ms);
  add_row(set, "b200", 8, 12);
  EXPECT_TRUE(not_gpu_bound(set).empty());
  add_row(set, "b200", 8, 13);  // 1.3x the median
  EXPECT_EQ(not_gpu_bound(set).size(), 1u);
}

// A steady state's output length is measured: a row generating over 1.5x longer (a longer context per token) is not
// the same work. The B200 at 3x the H100's time, but with 3x longer outputs, is not compared.
TEST(Screening, SteadyStatesOfOtherOutputLengthsAreNotCompared) {
  CalibrationSet set;
  add_row(set, "h100-sxm", 8, 10, "chat", 100);
  add_row(set, "h100-sxm", 32, 20, "chat", 100);
  add_row(set, "b200", 16, 45, "chat", 300);
  EXPECT_TRUE(not_gpu_bound(set).empty());
  add_row(set, "b200", 16, 45, "chat", 140);  // within 1.5x: compared, and 3x slower
  EXPECT_EQ(not_gpu_bound(set).size(), 1u);
}

TEST(Screening, TheWeakerGpuIsNeverFlaggedForBeingSlower) {
  CalibrationSet set;
  add_row(set, "b200", 8, 5);
  add_row(set, "b200", 32, 8);
  add_row(set, "h100-sxm", 16, 30);  // 5x the B200: slower, as a weaker GPU may be
  EXPECT_TRUE(not_gpu_bound(set).empty());
}

TEST(Screening, PreparingACalibrationSetSkipsTheRowsWithTheReason) {
  CatalogCache catalogs;
  std::vector<DatasetRow> rows;
  for (const auto& [gpu, latency_s] : {std::pair{"h100-sxm", 1.0}, {"h100-sxm", 1.0}, {"b200", 2.0}}) {
    DatasetRow row;
    row.source = "s", row.model = "llama-3.1-8b", row.dtype = "bf16", row.engine = "vllm", row.gpu = gpu;
    row.measures = Measures::isolated;
    row.batch = 4, row.prompt_tokens = 128, row.gen_tokens = 64;
    row.latency_s.total = latency_s;
    rows.push_back(row);
  }
  const CalibrationSet set = prepare_calibration(rows);
  ASSERT_EQ(set.samples.size(), 2u);
  ASSERT_EQ(set.skipped.size(), 1u);
  EXPECT_EQ(set.skipped[0].row, 2u);
  EXPECT_NE(set.skipped[0].reason.find("not GPU-bound"), std::string::npos);
  // The kept samples are whole: their workloads survived the removal.
  for (const auto& sample : set.samples) EXPECT_FALSE(sample.workload.decode.empty());
}

}  // namespace
}  // namespace llmco2
