// Trace accounting: reading logs (bad lines skipped and named), the shape table's interpolation, and the totals,
// shares and timeline of a log, against a predictor whose answers are known in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/csv.h"
#include "core/error.h"
#include "sim/label.h"
#include "support/all_modules.h"
#include "support/error_of.h"
#include "support/temp_file.h"
#include "support/trace_fixtures.h"
#include "trace/trace_report.h"

namespace llmco2 {
namespace {

using testing_support::error_of;
using testing_support::llama_on_h100;
using testing_support::PowerLawPredictor;
using testing_support::write_temp;

// One kWh and 10 s per request (prefill 0.25 kWh, 2 s), whatever its shape.
class ConstantPredictor final : public Predictor {
 public:
  std::string name() const override { return "constant"; }
  Prediction predict(const PredictorInput& c) const override {
    const double b = static_cast<double>(c.request.batch);
    return phase_prediction(0.9e6 * b, 2.7e6 * b, 2.0, 8.0);
  }
};

// 100 g/kWh, PUE 1.5, 0.001 g of embodied carbon per GPU-second (157.68 kg over 5 years), 2 GPUs.
CarbonInputs test_carbon() {
  CarbonInputs carbon;
  carbon.ci_g_per_kwh = 100;
  carbon.pue = 1.5;
  carbon.embodied.kgco2e = 157.68;
  carbon.lifetime_years = 5;
  carbon.gpus = 2;
  return carbon;
}

TEST(RequestLog, ParsesAzureTimestamps) {
  EXPECT_NEAR(*parse_timestamp("2023-11-16 18:17:03.9799600"), 1700158623.97996, 1e-6);
  EXPECT_NEAR(*parse_timestamp("1970-01-02T00:00:01Z"), 86401.0, 1e-9);
  EXPECT_NEAR(*parse_timestamp("12.5"), 12.5, 1e-12);
  for (const char* bad : {"2023-13-01 00:00:00", "yesterday", "2023-11-16 25:00:00", ""})
    EXPECT_FALSE(parse_timestamp(bad).has_value()) << bad;
}

// Issue 41: a day the month has not is not the next month's. February has 29 days in 2024 and 2000 (divisible by 4;
// by 400), 28 in 2023 and 1900 (a century not divisible by 400); April 30.
TEST(RequestLog, DatesTheCalendarHasNotAreRefused) {
  for (const char* bad : {"2023-02-30 00:00:00", "2023-02-29 00:00:00", "1900-02-29 00:00:00", "2023-04-31 12:00:00"})
    EXPECT_FALSE(parse_timestamp(bad).has_value()) << bad;
  // 2024-02-29 is 2024-03-01 less a day: 1709251200 (2024-03-01T00:00:00Z, 19783 days after 1970-01-01) - 86400.
  EXPECT_NEAR(*parse_timestamp("2024-02-29 00:00:00"), 1709251200.0 - 86400.0, 1e-9);
  EXPECT_NEAR(*parse_timestamp("2000-02-29T00:00:00"), 951782400.0, 1e-9);  // 11016 days after 1970-01-01
  EXPECT_TRUE(parse_timestamp("2023-12-31 23:59:59").has_value());
}

TEST(RequestLog, SkipsAndNamesBadLinesAndKeepsTheGoodOnes) {
  const auto path = write_temp("log.csv",
                               "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                               "2023-11-16 18:00:00.0,100,10\r\n"
                               "2023-11-16 18:00:01.0,abc,10\r\n"
                               "2023-11-16 18:00:02.0,100\r\n"
                               "2023-11-16 18:00:03.0,0,5\r\n"
                               "not a time,10,5\r\n"
                               "2023-11-16 19:00:00.0,200,20");
  const RequestLog log = read_request_log(path);
  EXPECT_EQ(log.format, "azure");
  ASSERT_EQ(log.requests.size(), 2u);
  EXPECT_EQ(log.requests[1].line, 7);
  EXPECT_EQ(log.requests[1].prompt_tokens, 200);
  EXPECT_EQ(log.skipped, 4);
  ASSERT_EQ(log.examples.size(), 4u);
  EXPECT_EQ(log.examples[0].line, 3);
  EXPECT_NE(log.examples[0].reason.find("ContextTokens"), std::string::npos) << log.examples[0].reason;
  EXPECT_EQ(log.examples[1].line, 4);
  EXPECT_NE(log.examples[1].reason.find("2 cells"), std::string::npos);
  EXPECT_NE(log.examples[3].reason.find("TIMESTAMP"), std::string::npos);
  EXPECT_TRUE(log.has_time());
}

TEST(RequestLog, ReadsTheDatasetFormatAndRefusesOtherFiles) {
  const RequestLog log =
      read_request_log(write_temp("rows.csv", "model,prompt_tokens,gen_tokens\nx,512,64\nx,99.6,7\n"));
  EXPECT_EQ(log.format, "dataset");
  ASSERT_EQ(log.requests.size(), 2u);
  EXPECT_EQ(log.requests[1].prompt_tokens, 100);  // means are rounded
  EXPECT_FALSE(log.has_time());
  EXPECT_THROW(read_request_log(write_temp("other.csv", "a,b\n1,2\n")), Error);
  EXPECT_THROW(read_request_log(write_temp("allbad.csv", "ContextTokens,GeneratedTokens\n-1,2\n")), Error);
  EXPECT_THROW(read_request_log(std::filesystem::path(testing::TempDir()) / "missing.csv"), Error);
}

// Prefix-caching columns: a session (hashed, never 0; an empty id is none), the tokens shared with it, the tokens an
// API reported cached; a share larger than the prompt skips the line naming its column; a share without a session
// refuses the file.
TEST(RequestLog, ReadsSessionsAndSharedOrCachedPromptTokens) {
  const RequestLog log =
      read_request_log(write_temp("sessions.csv",
                                  "TIMESTAMP,ContextTokens,GeneratedTokens,SessionId,SharedPrefixTokens,CachedTokens\n"
                                  "2023-11-16 18:00:00,500,20,a,0,\n"
                                  "2023-11-16 18:00:01,620,20,a,520,512\n"
                                  "2023-11-16 18:00:02,300,20,,,\n"
                                  "2023-11-16 18:00:03,100,20,b,101,\n"));
  ASSERT_EQ(log.requests.size(), 3u);
  EXPECT_NE(log.requests[0].session, 0u);
  EXPECT_EQ(log.requests[1].session, log.requests[0].session);
  EXPECT_EQ(log.requests[1].shared_tokens, 520);
  EXPECT_EQ(log.requests[1].cached_tokens, 512);
  EXPECT_EQ(log.requests[2].session, 0u);
  EXPECT_EQ(log.skipped, 1);
  EXPECT_NE(log.examples[0].reason.find("column 'SharedPrefixTokens'"), std::string::npos) << log.examples[0].reason;
  EXPECT_NE(error_of([] {
              read_request_log(write_temp("noid.csv", "ContextTokens,GeneratedTokens,SharedPrefixTokens\n5,5,1\n"));
            }).find("needs a session column"),
            std::string::npos);
}

TEST(ShapeTable, InterpolationIsExactForPowerLawsAndOnGridNodes) {
  const PowerLawPredictor predictor;
  ShapeTable table(predictor, llama_on_h100(), 1.1);
  const std::vector<Shape> shapes = {{3, 1}, {31, 7}, {1000, 300}, {4500, 77}, {123, 1999}, {32, 33}};
  table.prepare(shapes, false);
  for (const auto& s : shapes) {
    PredictorInput c = llama_on_h100();
    c.request.prompt_tokens = s.prompt_tokens;
    c.request.gen_tokens = s.gen_tokens;
    const Prediction want = predictor.predict(c), got = table.at(s);
    EXPECT_NEAR(*got.energy_j.prefill / *want.energy_j.prefill, 1.0, 1e-9) << s.prompt_tokens << " " << s.gen_tokens;
    EXPECT_NEAR(*got.energy_j.decode / *want.energy_j.decode, 1.0, 1e-9) << s.prompt_tokens << " " << s.gen_tokens;
    EXPECT_NEAR(*got.latency_s.total / *want.latency_s.total, 1.0, 1e-9);
    EXPECT_NEAR(*got.energy_j.total, *got.energy_j.prefill + *got.energy_j.decode, 1e-9 * *got.energy_j.total);
  }
  // Shapes up to 32 tokens are grid nodes; 6 shapes need at most 4 nodes each.
  EXPECT_LE(table.predictions_made(), 24u);
  // Longer than the model's 131,072-token context: not valid.
  EXPECT_FALSE(table.valid({131072, 1}));
  EXPECT_TRUE(table.valid({100000, 1000}));
}

TEST(ShapeTable, InterpolatedSimulatorStaysWithinAPerCentOfExact) {
  const auto sim = make_sim_predictor(load_sim_params(default_sim_params_path()));
  ShapeTable grid(*sim, llama_on_h100(), 1.1), exact(*sim, llama_on_h100(), 1.0);
  std::vector<Shape> shapes;
  for (long p = 40; p < 8000; p = p * 13 / 10 + 7)
    for (long g = 40; g < 1500; g = g * 3 / 2 + 5) shapes.push_back({p, g});
  grid.prepare(shapes, false);
  exact.prepare(shapes, false);
  EXPECT_EQ(exact.predictions_made(), shapes.size());
  for (const auto& s : shapes) {
    EXPECT_NEAR(*grid.at(s).energy_j.total / *exact.at(s).energy_j.total, 1.0, 0.01)
        << s.prompt_tokens << " " << s.gen_tokens;
    EXPECT_NEAR(*grid.at(s).latency_s.total / *exact.at(s).latency_s.total, 1.0, 0.01);
  }
}

TEST(TraceAccount, TotalsSharesTimelineAndBatchShare) {
  const auto path = write_temp("three.csv",
                               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                               "2023-11-16 18:00:00,100,10\n"
                               "2023-11-16 18:30:00,200,20\n"
                               "2023-11-16 19:05:00,300,30\n"
                               "2023-11-16 19:06:00,300\n");
  const RequestLog log = read_request_log(path);
  const CarbonInputs carbon = test_carbon();
  const ConstantPredictor predictor;
  TraceOptions options;
  std::vector<RequestFigures> figures;
  const TraceAccount a = account_trace(log, predictor, llama_on_h100(), carbon, options, &figures);
  EXPECT_EQ(a.requests, 3);
  EXPECT_EQ(a.skipped_lines, 1);
  EXPECT_EQ(a.prompt_tokens, 600);
  EXPECT_EQ(a.gen_tokens, 60);
  // Each request: 1 kWh x 1.5 x 100 = 150 g operational; 10 s x 2 GPUs x 0.001 = 0.02 g embodied.
  EXPECT_NEAR(a.energy_j, 3 * 3.6e6, 1e-3);
  EXPECT_NEAR(a.operational_g, 450, 1e-9);
  EXPECT_NEAR(a.embodied_g, 0.06, 1e-12);
  EXPECT_NEAR(a.gpu_busy_s, 60, 1e-12);
  EXPECT_NEAR(*a.energy_prefill_j / a.energy_j, 0.25, 1e-12);
  // Prefill CO2: 0.25 kWh x 150 g/kWh + 2 s x 2 GPUs x 0.001 g = 37.504 g per request.
  EXPECT_NEAR(*a.co2_prefill_g, 3 * 37.504, 1e-9);
  EXPECT_NEAR(a.co2_per_request_g.p50, 150.02, 1e-9);
  ASSERT_EQ(a.hourly.size(), 2u);  // 18:00 and 19:00
  EXPECT_EQ(a.hourly[0].requests, 2);
  EXPECT_NEAR(a.hourly[1].co2_g, 150.02, 1e-9);
  EXPECT_EQ(a.timeline_bin_s, 60);    // the log spans an hour: minute bins, empty minutes included
  EXPECT_EQ(a.timeline.size(), 66u);  // 18:00 to 19:05
  ASSERT_EQ(figures.size(), 3u);
  EXPECT_EQ(figures[2].line, 4);

  // Served in batches of 4, each request is charged a quarter of its batch's energy and embodied carbon.
  options.batch = 4;
  const TraceAccount batched = account_trace(log, predictor, llama_on_h100(), carbon, options);
  EXPECT_NEAR(batched.operational_g, 450, 1e-9);  // the constant predictor scales energy with the batch
  EXPECT_NEAR(batched.embodied_g, 0.06 / 4, 1e-12);

  // With error bands, the totals get intervals.
  PredictorErrorBands bands{ErrorBand{50, 2, 0.5, 1, 2}, ErrorBand{50, 2, 0.5, 1, 2}};  // within x2
  options.batch = 1;
  TraceAccount with_bands = account_trace(log, predictor, llama_on_h100(), carbon, options);
  EXPECT_FALSE(with_bands.total_g_interval);  // accounting sets none: the caller's evidence does
  set_intervals(with_bands, &bands);
  ASSERT_TRUE(with_bands.total_g_interval);
  EXPECT_NEAR(with_bands.total_g_interval->high, 2 * 450.06, 1e-9);
}

TEST(TraceAccount, RequestsLongerThanTheSetupServesAreSkippedAndNamed) {
  const RequestLog log = read_request_log(write_temp("long.csv", "ContextTokens,GeneratedTokens\n100,10\n200000,10\n"));
  const ConstantPredictor predictor;
  const TraceAccount a = account_trace(log, predictor, llama_on_h100(), test_carbon(), TraceOptions{});
  EXPECT_EQ(a.requests, 1);
  EXPECT_EQ(a.skipped_shapes, 1);
  ASSERT_EQ(a.skipped_examples.size(), 1u);
  EXPECT_EQ(a.skipped_examples[0].line, 3);
}

TEST(TraceReport, WritesTheReportFilesAndTheRequestCsv) {
  const RequestLog log = read_request_log(write_temp(
      "report.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,100,10\n2023-11-16 18:01:00,50,5\n"));
  const ConstantPredictor predictor;
  std::vector<RequestFigures> figures;
  const TraceAccount a = account_trace(log, predictor, llama_on_h100(), test_carbon(), TraceOptions{}, &figures);
  const auto dir = std::filesystem::path(testing::TempDir()) / "trace-report";
  std::filesystem::remove_all(dir);
  TraceContext context{log.source, log.format, "setup", "constant", "carbon", "no interval", TraceOptions{}};
  write_trace_report(a, context, dir);
  EXPECT_TRUE(std::filesystem::exists(dir / "report.md"));
  EXPECT_EQ(read_json_file(dir / "summary.json").at("requests"), 2);
  const auto csv_path = dir / "requests.csv";
  write_request_csv(figures, csv_path);
  const CsvTable table = read_csv_file(csv_path);
  ASSERT_EQ(table.records.size(), 2u);
  EXPECT_EQ(table.records[1].cells[table.column("line")], "3");
  EXPECT_NEAR(std::stod(table.records[0].cells[table.column("co2_operational_g")]), 150.0, 1e-9);  // 1 kWh x 1.5 x 100
}

}  // namespace
}  // namespace llmco2
