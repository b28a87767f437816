// Tests of the dataset format: round trip, and per-row validation that keeps good rows and names bad ones.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>

#include "core/error.h"
#include "dataset/dataset_csv.h"
#include "dataset/plan.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

DatasetRow sample_row() {
  DatasetRow r;
  r.source = "test";
  r.source_ref = "x.csv:2";
  r.model = "llama-3.1-8b";
  r.gpu = "h100-sxm";
  r.gpus = 2;
  r.tensor_parallel = 2;
  r.engine = "vllm";
  r.batch = 4;
  r.prompt_tokens = 512;
  r.gen_tokens = 128;
  r.measures = Measures::fixed_batch;
  r.energy_j = {100.0, 300.0, 400.0};
  r.latency_s = {0.1, 1.9, 2.0};
  r.caveats = {"aggregated_mean", "short_run"};
  r.notes = "a note, with a comma";
  return r;
}

TEST(DatasetCsv, RoundTripsEveryField) {
  const std::string text = dataset_to_csv({sample_row()});
  const DatasetReadResult read = parse_dataset(parse_csv(text, "mem.csv"));
  ASSERT_TRUE(read.rejects.empty()) << read.rejects[0].message();
  ASSERT_EQ(read.rows.size(), 1u);
  const DatasetRow& r = read.rows[0];
  EXPECT_EQ(r.model, "llama-3.1-8b");
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.measures, Measures::fixed_batch);
  EXPECT_DOUBLE_EQ(*r.energy_j.total, 400.0);
  EXPECT_DOUBLE_EQ(*r.latency_s.prefill, 0.1);
  EXPECT_FALSE(r.max_batch.has_value());
  EXPECT_EQ(r.caveats, (std::vector<std::string>{"aggregated_mean", "short_run"}));
  EXPECT_EQ(r.notes, "a note, with a comma");
}

TEST(DatasetCsv, RejectsBadRowsWithLineAndReasonAndKeepsTheRest) {
  DatasetRow negative = sample_row();
  negative.energy_j = {std::nullopt, std::nullopt, -5.0};
  DatasetRow inconsistent = sample_row();
  inconsistent.energy_j = {100.0, 300.0, 500.0};
  DatasetRow unknown_caveat = sample_row();
  unknown_caveat.caveats = {"made_up"};
  DatasetRow nothing = sample_row();
  nothing.energy_j = {};
  nothing.latency_s = {};
  DatasetRow bad_parallel = sample_row();
  bad_parallel.gpus = 3;
  std::string text = dataset_to_csv({sample_row(), negative, inconsistent, unknown_caveat, nothing, bad_parallel});
  CsvTable good = parse_csv(dataset_to_csv({sample_row()}), "good");
  good.records[0].cells[good.column("batch")] = "two";  // batch not a number
  append_csv_record(text, good.records[0].cells);
  const DatasetReadResult read = parse_dataset(parse_csv(text, "d.csv"));
  ASSERT_EQ(read.rows.size(), 1u);
  ASSERT_EQ(read.rejects.size(), 6u);
  EXPECT_EQ(read.rejects[0].message(), "d.csv:3: energy_total is negative (-5)");
  EXPECT_EQ(read.rejects[1].message(), "d.csv:4: energy_total 500 is not prefill + decode = 400");
  EXPECT_EQ(read.rejects[2].message(), "d.csv:5: unknown caveat 'made_up' (see docs/data.md)");
  EXPECT_EQ(read.rejects[3].message(), "d.csv:6: no energy and no latency value");
  EXPECT_EQ(read.rejects[4].message(),
            "d.csv:7: gpus 3 is not tensor_parallel 2 x pipeline_parallel 1 x data_parallel 1");
  EXPECT_EQ(read.rejects[5].message(), "d.csv:8: column 'batch': expected a number, got 'two'");
}

TEST(ImportRejects, RoundTripPerSourceAndReasonClassesDropDetail) {
  const auto dir = std::filesystem::temp_directory_path() / ("llmco2-rejects-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_import_rejects(dir / "alpha.rejects.csv", {{"a.csv", 3, "GPU 1 drew 299 W (serving, not idle)"},
                                                   {"a.csv", 9, "model 'x, y' not in the catalog"}});
  write_import_rejects(dir / "beta.rejects.csv", {});
  const auto rejects = read_import_rejects(dir);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(rejects.size(), 2u);
  ASSERT_EQ(rejects.at("alpha").size(), 2u);
  EXPECT_TRUE(rejects.at("beta").empty());
  EXPECT_EQ(rejects.at("alpha")[0].line, 3);
  EXPECT_EQ(rejects.at("alpha")[1].reason, "model 'x, y' not in the catalog");  // the quoted comma survives
  // Row detail goes: parenthesised parts, and every run of digits becomes one N, so "299 W" and "330 W" count alike.
  EXPECT_EQ(reason_class("GPU 1 drew 299 W (serving, not idle): two GPUs"), "GPU N drew N W: two GPUs");
  EXPECT_EQ(reason_class("pipeline parallelism (pp=2) over two nodes"), "pipeline parallelism over two nodes");
  EXPECT_EQ(reason_class("model 'a' (did you mean (b))"), "model 'a'");
  EXPECT_EQ(reason_class("same measurement as the llama2-70b-99.9 row"), "same measurement as the llama2-70b-99.9 row");
  EXPECT_EQ(reason_class("GPU drew 0.0747 kWh, 1,000 requests"), "GPU drew N.N kWh, N,N requests");
  EXPECT_EQ(reason_class("out of scope: encoder-decoder/RNN"), "out of scope: encoder-decoder/RNN");
}

TEST(DatasetCsv, MissingRequiredColumnFailsTheWholeFile) {
  EXPECT_THROW(parse_dataset(parse_csv("source,model\nx,y\n", "short.csv")), Error);
}

TEST(Plan, ReadsRowsWithOptionalColumnsAndRejectsBadCounts) {
  const PlanReadResult plan =
      parse_plan(parse_csv("model,gpu,gpus,batch,prompt,gen,engine\nllama-3.1-8b,h100,1,8,512,64,hf-transformers\n"
                           "llama-3.1-8b,h100,0,8,512,64,\nllama-3.1-8b,h100,1,8,5x,64,\n",
                           "plan.csv"));
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_EQ(plan.rows[0].batch, 8);
  EXPECT_EQ(plan.rows[0].engine, "hf-transformers");
  EXPECT_EQ(plan.rows[0].dtype, "");
  ASSERT_EQ(plan.rejects.size(), 2u);
  EXPECT_EQ(plan.rejects[0].message(), "plan.csv:3: column 'gpus': must be at least 1, got 0");
  EXPECT_EQ(plan.rejects[1].message(), "plan.csv:4: column 'prompt': expected a whole number, got '5x'");
}

}  // namespace
}  // namespace llmco2
