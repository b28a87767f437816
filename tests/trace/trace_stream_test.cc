// The streaming accountant against the plain one-request-at-a-time path: the same totals, distributions, timeline,
// skipped lines and per-request CSV, to the last bit, on the Azure traces and on a messy multi-block log, with one
// thread or several; the exact sums, weighted percentiles and arrival bins it rests on, checked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "carbon/embodied.h"
#include "compare/setup_comparison.h"
#include "core/csv.h"
#include "core/paths.h"
#include "dataset/log_scanner.h"
#include "predictor/predictor.h"
#include "sim/sim_params.h"
#include "support/all_modules.h"
#include "support/temp_file.h"
#include "support/trace_fixtures.h"
#include "trace/shape_map.h"
#include "trace/trace_report.h"
#include "trace/trace_stream.h"

namespace llmco2 {
namespace {

using testing_support::llama_on_h100;
using testing_support::PowerLawPredictor;
using testing_support::write_temp;

CarbonInputs h100_carbon() {
  CarbonInputs carbon;
  carbon.ci_g_per_kwh = 369.5;
  carbon.pue = 1.2;
  carbon.embodied = gpu_embodied(*llama_on_h100().gpu, EmbodiedBasis::llmcarbon, bundled_embodied_params());
  return carbon;
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Everything `trace` prints of an account: the summary JSON (full precision), the skipped lines and the timeline.
std::string printed(const TraceAccount& a) {
  TraceContext context{"log", "azure", "setup", "predictor", "carbon", "intervals", TraceOptions{}};
  std::string out = trace_summary_json(a, context).dump(1) + trace_summary_text(a, context);
  for (const auto& e : a.skipped_examples) out += std::to_string(e.line) + ": " + e.reason + "\n";
  for (const auto& b : a.timeline)
    out += fmt::format("{} {} {:.17g} {:.17g}\n", b.start_s, b.requests, b.energy_j, b.co2_g);
  std::map<double, long> co2;  // the histogram's input, equal values merged (one entry per request on the plain path)
  for (const auto& v : a.co2_values_g) co2[v.value] += v.count;
  std::string values;
  for (const auto& [value, count] : co2) values += fmt::format("{:.17g} {}\n", value, count);
  return out + fmt::format("bin {}; {} distinct CO2 values, digest {}\n", a.timeline_bin_s, co2.size(),
                           std::hash<std::string>{}(values));
}

// The plain path: the whole log in memory, time outliers dropped, one request at a time.
TraceAccount reference(const std::filesystem::path& path, const Predictor& predictor, const TraceOptions& options,
                       const std::filesystem::path& csv) {
  RequestLog log = read_request_log(path);
  drop_time_outliers(log);
  std::vector<RequestFigures> figures;
  const TraceAccount a = account_trace(log, predictor, llama_on_h100(), h100_carbon(), options, &figures);
  write_request_csv(figures, csv);
  return a;
}

TraceAccount streamed(const std::filesystem::path& path, const Predictor& predictor, const TraceOptions& options,
                      int threads, const std::filesystem::path& csv) {
  TraceFileOptions file_options;
  file_options.threads = threads;
  file_options.requests_csv = csv;
  return account_trace_file(path, predictor, llama_on_h100(), h100_carbon(), options, file_options);
}

std::filesystem::path temp(const std::string& name) { return std::filesystem::path(testing::TempDir()) / name; }

TEST(ExactSum, DoesNotDependOnTheOrderOfItsTerms) {
  ExactSum tenth;
  double plain = 0;
  for (int i = 0; i < 10; ++i) tenth.add(0.1), plain += 0.1;
  // Ten times the double nearest 0.1 is 1 + 5.55e-17, whose nearest double is 1; adding in turn gives 1 - 1.1e-16.
  EXPECT_EQ(tenth.value(), 1.0);
  EXPECT_NE(plain, 1.0);
  ExactSum cancel;
  cancel.add(1e16);
  cancel.add(1.0);
  cancel.add(-1e16);
  EXPECT_EQ(cancel.value(), 1.0);  // plain doubles: 1e16 + 1 rounds back to 1e16, and the 1 is lost
  ExactSum grouped, one_by_one;
  grouped.add(0.3, 7);
  for (int i = 0; i < 7; ++i) one_by_one.add(0.3);
  EXPECT_EQ(grouped.value(), one_by_one.value());
  EXPECT_THROW(grouped.add(1e19), Error);  // beyond 2^62
}

TEST(TraceReport, FixedThreeDecimalsAsFmtWritesThem) {
  std::vector<double> values = {0,
                                0.0005,
                                0.0625,
                                0.1875,
                                1.0005,
                                999.9995,
                                1700158546.0625,
                                1700158546.1875,
                                1700158546.6805900,
                                253402300799.9999,
                                1e15,
                                -1.25};
  std::mt19937_64 random(17);
  for (int i = 0; i < 200000; ++i) {
    values.push_back(std::uniform_real_distribution<double>(0, 2.6e11)(random));
    values.push_back(static_cast<double>(random() % 4000000000) / 16.0);         // exact ties at the third decimal
    values.push_back(1.7e9 + static_cast<double>(random() % 100000000) * 1e-7);  // Azure's 7 decimals
  }
  for (double v : values) {
    std::string mine;
    append_fixed3(mine, v);
    ASSERT_EQ(mine, fmt::format("{:.3f}", v)) << fmt::format("{:.17g}", v);
  }
}

TEST(ShapeMap, CountsEveryKeyThroughItsRehashes) {
  ShapeMap map;
  for (uint64_t p = 1; p <= 300; ++p)
    for (uint64_t g = 1; g <= 40; ++g) map[p << 32 | g] += static_cast<long>(p + g);
  ++map[uint64_t{7} << 32 | 3];
  EXPECT_EQ(map.size(), 300u * 40u);
  EXPECT_EQ(*map.find(uint64_t{7} << 32 | 3), 7 + 3 + 1);
  EXPECT_EQ(*map.find(uint64_t{300} << 32 | 40), 340);
  EXPECT_EQ(map.find(uint64_t{301} << 32 | 1), nullptr);
  long sum = 0;
  map.for_each([&](uint64_t, long n) { sum += n; });
  EXPECT_EQ(sum, 40 * (300 * 301 / 2) + 300 * (40 * 41 / 2) + 1);  // sum of p + g over the grid, plus the one
}

TEST(TraceAccount, WeightedPercentilesEqualThoseOfTheExpandedList) {
  // [1, 1, 1, 2]: p50 at rank 1.5 -> 1; p90 at rank 2.7 -> 0.3 x 1 + 0.7 x 2 = 1.7; mean 1.25.
  const Distribution d = distribution_of({{2.0, 1}, {1.0, 3}});
  EXPECT_EQ(d.mean, 1.25);
  EXPECT_EQ(d.p50, 1.0);
  EXPECT_NEAR(d.p90, 1.7, 1e-15);
  EXPECT_EQ(d.max, 2.0);
  EXPECT_EQ(d.p10, 1.0);
}

TEST(RequestLog, ArrivalBinsFindTheBulkAsSortingWould) {
  constexpr double kDay = 86400;
  ArrivalBins bins;
  for (double t : {200 * kDay, 0.0, 10.0, 40 * kDay, 40 * kDay + 5, 41 * kDay}) bins.add(t);
  // Runs split at pauses over 30 days: {0, 10}, {40 d, 40 d + 5 s, 41 d}, {200 d}: the second is the largest.
  EXPECT_EQ(bins.bulk(), std::make_pair(40 * kDay, 41 * kDay));
  EXPECT_EQ(bins.count_within(40 * kDay, 41 * kDay), 3);
  ArrivalBins tie;
  for (double t : {0.0, 100 * kDay}) tie.add(t);
  EXPECT_EQ(tie.bulk(), std::make_pair(0.0, 0.0));  // the earliest on a tie
}

// What the scanner hands over, written out: each request and each skipped line with its reason.
struct Recorder final : LogRecordSink {
  std::string text;
  void request(const LoggedRequest& q) override {
    text += fmt::format("{} {} {} {}\n", q.line, q.prompt_tokens, q.gen_tokens, q.time_s ? *q.time_s : -1.0);
  }
  void skipped(long line, const std::string& reason) override { text += fmt::format("{} skip {}\n", line, reason); }
};

std::string scan_with(const std::filesystem::path& path, size_t workers, bool general) {
  const LogScanner scanner(path);
  std::vector<Recorder> recorders(workers);
  std::vector<LogRecordSink*> sinks;
  for (auto& r : recorders) sinks.push_back(&r);
  std::string out;
  if (general) {
    scanner.scan_general(recorders[0]);
    return recorders[0].text;
  }
  const bool scanned = scanner.scan(
      sinks,
      [&](size_t filled) {
        for (size_t k = 0; k < filled; ++k) out += recorders[k].text, recorders[k].text.clear();
      },
      false);
  return scanned ? out : "stopped at a quote";
}

// A log of several 1 MiB blocks with everything the reader must get right: CRLF and LF lines, blank lines, a '\r'
// inside a line, malformed lines, a request longer than the model serves, time outliers, no final newline.
std::filesystem::path messy_log(const std::string& name) {  // a name of its own per test: ctest runs them at once
  std::string text = "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n";
  for (int i = 0; i < 90000; ++i) {
    const int second = i % 3600, minute = second / 60;
    text += fmt::format("2023-11-16 {:02}:{:02}:{:02}.{:07},{},{}{}", 10 + i / 3600 % 12, minute, second % 60,
                        i * 7 % 10000000, 1 + i * 37 % 9000, 1 + i * 11 % 700, i % 2 ? "\r\n" : "\n");
    if (i % 9973 == 5) text += "\r\n";
    if (i % 7919 == 3) text += "2023-11-16 11:00:00,12\r3,4\n";
    if (i % 15013 == 7) text += "2023-11-16 11:00:00,abc,4\n2023-11-16 11:00:00,5\n";
    if (i == 45000) text += "2030-01-01 00:00:00,100,10\n2023-11-16 12:00:00,200000,10\n";
  }
  text += "2023-11-16 23:59:59,5,5";
  const auto path = temp(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(LogScanner, ReadsEveryRecordAsTheGeneralReaderDoes) {
  const auto path = messy_log("messy-scan.csv");
  const std::string general = scan_with(path, 1, true);
  EXPECT_NE(general.find("skip column 'ContextTokens'"), std::string::npos);
  EXPECT_EQ(scan_with(path, 1, false), general);
  EXPECT_EQ(scan_with(path, 3, false), general);
  const auto quoted = write_temp("quoted.csv", "ContextTokens,GeneratedTokens\n\"1\n2\",3\n4,5\n");
  EXPECT_EQ(scan_with(quoted, 2, false), "stopped at a quote");
  EXPECT_EQ(scan_with(quoted, 1, true),
            "2 skip column 'ContextTokens': expected a positive whole number of tokens, "
            "got '1\n2'\n4 4 5 -1\n");
}

TEST(TraceStream, EqualsThePlainPathOnAMessyLogWithAnyNumberOfThreads) {
  const auto path = messy_log("messy-trace.csv");
  const PowerLawPredictor predictor;
  TraceOptions options;
  const TraceAccount plain = reference(path, predictor, options, temp("plain.csv"));
  EXPECT_EQ(plain.skipped_shapes, 1);
  // Malformed: 2 lines at each i = 7 + 15013 k below 90,000 (6 of them); plus the one dated 2030.
  EXPECT_EQ(plain.skipped_lines, 6 * 2 + 1);
  for (int threads : {1, 3}) {
    const TraceAccount fast = streamed(path, predictor, options, threads, temp("fast.csv"));
    EXPECT_EQ(printed(fast), printed(plain)) << threads << " threads";
    EXPECT_EQ(read_all(temp("fast.csv")), read_all(temp("plain.csv"))) << threads << " threads";
  }
  const auto quoted = write_temp("quoted-log.csv",
                                 "TIMESTAMP,ContextTokens,\"GeneratedTokens\"\n"
                                 "2023-11-16 10:00:00,\"100\",10\n2023-11-16 10:01:00,50,5\n");
  EXPECT_EQ(printed(streamed(quoted, predictor, options, 2, temp("q.csv"))),
            printed(reference(quoted, predictor, options, temp("qp.csv"))));
}

// A dataset-format log (no timestamps): without a per-request CSV the survey's shape counts make the account alone.
TEST(TraceStream, EqualsThePlainPathOnALogWithoutTimestamps) {
  std::string text = "model,prompt_tokens,gen_tokens\n";
  for (int i = 0; i < 30000; ++i) {
    text += fmt::format("m,{},{}\n", 1 + i * 53 % 7000, 1 + i * 7 % 900);
    if (i % 4001 == 17) text += "m,99.6,7\nm,abc,3\n\nm,200000,5\n";
  }
  const auto path = write_temp("dataset-log.csv", text);
  const PowerLawPredictor predictor;
  const TraceAccount plain = reference(path, predictor, TraceOptions{}, temp("dataset-plain.csv"));
  EXPECT_EQ(plain.skipped_lines, 8);   // "abc" at each i = 17 + 4001 k below 30,000
  EXPECT_EQ(plain.skipped_shapes, 8);  // 200,000 tokens, beyond llama-3.1-8b's 131,072
  EXPECT_EQ(plain.skipped_examples.size(), 10u);
  for (int threads : {1, 3}) {
    EXPECT_EQ(printed(streamed(path, predictor, TraceOptions{}, threads, "")), printed(plain)) << threads;
    EXPECT_EQ(printed(streamed(path, predictor, TraceOptions{}, threads, temp("dataset-fast.csv"))), printed(plain));
    EXPECT_EQ(read_all(temp("dataset-fast.csv")), read_all(temp("dataset-plain.csv")));
  }
}

TEST(TraceStream, EqualsThePlainPathOnTheAzureTraces) {
  const SimParams params = load_sim_params(default_sim_params_path());
  const auto predictor = load_predictor(data_dir() / "predictors" / "llmco2.model", params);
  TraceOptions options;
  for (const char* name : {"AzureLLMInferenceTrace_code.csv", "AzureLLMInferenceTrace_conv.csv"}) {
    const auto path = data_dir() / "azure" / name;
    const TraceAccount plain = reference(path, *predictor, options, temp("azure-plain.csv"));
    const TraceAccount one = streamed(path, *predictor, options, 1, temp("azure-1.csv"));
    const TraceAccount four = streamed(path, *predictor, options, 4, temp("azure-4.csv"));
    EXPECT_EQ(printed(one), printed(plain)) << name;
    EXPECT_EQ(printed(four), printed(plain)) << name;
    EXPECT_EQ(read_all(temp("azure-1.csv")), read_all(temp("azure-plain.csv"))) << name;
    EXPECT_EQ(read_all(temp("azure-4.csv")), read_all(temp("azure-plain.csv"))) << name;
  }
}

TEST(TraceStream, CompareOverShapesEqualsCompareOverTheLog) {
  const auto path = messy_log("messy-compare.csv");
  const PowerLawPredictor predictor;
  RequestLog log = read_request_log(path);
  drop_time_outliers(log);
  TraceFileOptions file_options;
  file_options.threads = 2;
  const LogShapes shapes = survey_log_shapes(path, file_options, false);
  EXPECT_EQ(shapes.requests, static_cast<long>(log.requests.size()));
  EXPECT_EQ(shapes.file.time_outliers, 1);
  const PredictorInput base = llama_on_h100();
  const std::vector<Gpu> gpus = {*base.gpu};
  const CarbonFor carbon = [](const Gpu&, int n) {
    CarbonInputs c = h100_carbon();
    c.gpus = n;
    return c;
  };
  const SetupFor setup_for = [&](const Gpu& gpu, int n) {
    PredictorInput config = base;
    config.request.gpus = n;
    return ComparedSetup{config, carbon(gpu, n), {}};
  };
  const Comparison plain = compare_log(predictor, log, gpus, {1, 2, 4}, setup_for, 5.0, 1.1);
  const Comparison fast = compare_log_shapes(predictor, shapes.shapes, gpus, {1, 2, 4}, setup_for, 5.0, 1.1, 3);
  ASSERT_EQ(fast.rows.size(), plain.rows.size());
  for (size_t i = 0; i < plain.rows.size(); ++i) {
    EXPECT_EQ(fast.rows[i].unavailable, plain.rows[i].unavailable);
    EXPECT_EQ(fast.rows[i].energy_j, plain.rows[i].energy_j);
    EXPECT_EQ(fast.rows[i].latency_s, plain.rows[i].latency_s);
    EXPECT_EQ(fast.rows[i].total_g(), plain.rows[i].total_g());
  }
  EXPECT_EQ(fast.best, plain.best);
}

}  // namespace
}  // namespace llmco2
