// The research calls (llmco2/research.h) as the CLI's commands make them: one request through the graph and the
// simulator, plans sampled and labelled, outputs checked against their manifest, imports and validations refusing
// bad input with the key. Values are worked out by hand or checked against the public API's own answer.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>

#include <unistd.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/paths.h"
#include "evidence/intervals.h"
#include "llmco2/research.h"
#include "support/all_modules.h"
#include "support/error_of.h"
#include "support/temp_file.h"

namespace llmco2::research {
namespace {

using testing_support::error_of;
using testing_support::write_temp;

long lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  long n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

api::Request request(const std::string& gpu, int gpus, long batch) {
  api::Request r;
  r.model = "llama-3.1-8b", r.gpu = gpu, r.gpus = gpus, r.batch = batch;
  r.prompt_tokens = 1024, r.gen_tokens = 128;
  return r;
}

// Llama 3.1 8B, prompt 1024: the linear layers hold 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) =
// 6.98e9 weights, 2 operations each per token; causal attention adds 2 x hidden x T^2 per layer (QK^T and AV, each
// 2 x hidden x T^2 / 2). The graph's prefill operations are those within 1% (norms, activations, the last token's
// head).
TEST(Research, KernelGraphPrefillOperationsAreTheHandCount) {
  const api::Result g = kernel_graph(request("h100-sxm", 1, 1), "json");
  const double linear = 32.0 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336);
  const double tokens = 1024, attention = 32 * 2 * 4096.0 * tokens * tokens;
  const double expected = 2 * linear * tokens + attention;
  EXPECT_NEAR(g.json["phases"]["prefill"]["totals"]["ops"].get<double>() / expected, 1.0, 0.01);
  EXPECT_EQ(g.text, g.json.dump(2) + "\n");
  EXPECT_TRUE(kernel_graph(request("h100-sxm", 1, 1), "dot", "decode").text.starts_with("digraph"));
  EXPECT_NE(error_of([] { kernel_graph(request("h100-sxm", 1, 1), "svg"); }).find("format 'svg'"), std::string::npos);
}

// One request, one answer: the simulator through research::simulate and through the public API's predict with the
// simulator and the GPU energy scope (what NVML meters) give the same figures, with a power cap and over two GPUs too.
TEST(Research, SimulateIsPredictWithTheSimulatorAtGpuScope) {
  const api::Session session;
  for (api::Request r : {request("a100-80gb-sxm", 1, 4), request("h100-sxm", 2, 8), request("l40s", 1, 1)}) {
    if (r.gpu == "l40s") r.power_cap_w = 250;
    const api::Result simulated = simulate(r);
    r.predictor = "sim", r.scope = "gpu";
    const api::Result predicted = session.predict(r);
    for (const char* phase : {"prefill", "decode", "total"}) {
      EXPECT_DOUBLE_EQ(simulated.json["energy_j"][phase].get<double>(), predicted.json["energy_j"][phase].get<double>())
          << r.gpu << " " << phase;
      EXPECT_DOUBLE_EQ(simulated.json["latency_s"][phase].get<double>(),
                       predicted.json["latency_s"][phase].get<double>())
          << r.gpu << " " << phase;
    }
    const api::Json& energy = simulated.json["energy_j"];
    EXPECT_NEAR(energy["total"].get<double>(), energy["prefill"].get<double>() + energy["decode"].get<double>(),
                1e-9 * energy["total"].get<double>());
  }
}

// A sampled plan holds the configurations asked for (plus its header); labelling it writes one row each, a manifest
// that check_outputs accepts until a row is changed, and a plan row of an unknown model is rejected with its line.
TEST(Research, SampledPlanLabelledAndCheckedAgainstItsManifest) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "research-plan";
  std::filesystem::create_directories(dir);
  SampleOptions s;
  s.count = 12, s.seed = 7, s.out = (dir / "plan.csv").string();
  EXPECT_EQ(sample(s), 12);
  EXPECT_EQ(lines_of(s.out), 13);
  LabelOptions l;
  l.plan = s.out, l.out = (dir / "rows.csv").string();
  const LabelSummary labelled = label_plan(l);
  EXPECT_EQ(labelled.rows_written, 12);
  EXPECT_TRUE(labelled.rejects.empty());
  EXPECT_TRUE(check_outputs(l.out + ".manifest.json").empty());
  std::ofstream(l.out, std::ios::app) << "\n";
  ASSERT_EQ(check_outputs(l.out + ".manifest.json").size(), 1u);

  const auto bad = write_temp("research-bad-plan.csv",
                              "model,gpu,gpus,batch,prompt,gen\nllama-3.1-8b,h100-sxm,1,1,"
                              "128,16\nno-such-model,h100-sxm,1,1,128,16\n");
  l.plan = bad.string(), l.out = (dir / "bad-rows.csv").string();
  const LabelSummary partly = label_plan(l);
  EXPECT_EQ(partly.rows_written, 1);
  ASSERT_EQ(partly.rejects.size(), 1u);
  EXPECT_NE(partly.rejects[0].find(":3"), std::string::npos) << partly.rejects[0];
}

TEST(Research, BadInputIsRefusedNamingTheKey) {
  EXPECT_NE(error_of([] { import_source("no-such-source", {}); }).find("no-such-source"), std::string::npos);
  ImportOptions missing;
  missing.from = "/nonexistent";
  EXPECT_NE(error_of([&] { import_source("splitwise", missing); }).find("not found"), std::string::npos);
  ServeValidateOptions v;
  v.held_out = "everything";
  EXPECT_NE(error_of([&] { serve_validate(v); }).find("held_out 'everything'"), std::string::npos);
  SampleOptions s;
  EXPECT_NE(error_of([&] { sample(s); }).find("--out"), std::string::npos);
  // Every source import knows names its folder and says what it measured.
  for (const SourceInfo& source : measurement_sources()) {
    EXPECT_FALSE(source.folder.empty()) << source.id;
    EXPECT_FALSE(source.summary.empty()) << source.id;
  }
}

// ---- plan-site: the benchmark runs of a site profile ----

SitePlanOptions site_plan(const std::string& tool, const std::string& engine, double minutes) {
  SitePlanOptions o;
  o.model = "llama-3.1-8b", o.gpu = "h100-sxm", o.engine = engine, o.tool = tool, o.minutes = minutes;
  o.plan_out = testing::TempDir() + "/site-plan-" + tool + ".csv";
  return o;
}

const SitePlanCorrection& correction(const SitePlan& plan, const std::string& name) {
  for (const SitePlanCorrection& c : plan.expected)
    if (c.name == name) return c;
  throw std::runtime_error("no correction " + name);
}

// vllm bench serve: closed loops at --max-concurrency N with max(32, 8N) requests, within the 15 minutes, each
// configuration once; they pin down the compute and host corrections (most of each from the runs) but record no
// energy, so the power correction keeps most of its prior.
TEST(PlanSite, ClosedLoopRunsFitTheBudgetAndPinDownComputeAndHost) {
  const SitePlan plan = plan_site(site_plan("", "vllm", 15));
  EXPECT_EQ(plan.tool, "vllm bench serve");
  ASSERT_GE(plan.runs.size(), 4u);
  double total_s = 0;
  std::set<std::tuple<long, long, long>> configurations;
  for (const SitePlanRun& r : plan.runs) {
    total_s += r.expected_s;
    EXPECT_EQ(r.requests, std::max(32L, 8 * r.batch));
    EXPECT_NE(r.command.find(fmt::format("--max-concurrency {} ", r.batch)), std::string::npos) << r.command;
    EXPECT_NE(r.command.find(fmt::format("--num-prompts {} ", r.requests)), std::string::npos) << r.command;
    EXPECT_NE(r.command.find("--model meta-llama/Llama-3.1-8B "), std::string::npos) << r.command;
    EXPECT_TRUE(configurations.insert({r.batch, r.prompt_tokens, r.gen_tokens}).second);
  }
  EXPECT_NEAR(plan.expected_s, total_s, 1e-9);
  EXPECT_LE(plan.expected_s, 15 * 60);
  EXPECT_GT(correction(plan, "compute_scale").data_share, 0.5);
  EXPECT_GT(correction(plan, "host_scale").data_share, 0.5);
  EXPECT_LT(correction(plan, "power_scale").data_share, 0.5);
  EXPECT_NE(plan.text.find("power_scale of h100-sxm stays global: no row measured energy"), std::string::npos);
  // Two minutes hold fewer runs, and no more than two minutes of them.
  const SitePlan short_plan = plan_site(site_plan("", "vllm", 2));
  EXPECT_LT(short_plan.runs.size(), plan.runs.size());
  EXPECT_LE(short_plan.expected_s, 120);
}

// One request at a time, 128 tokens in and out: each decode step reads the 16.06 GB of Llama 3.1 8B's bf16 weights
// (8.03e9 parameters) at no more than H100 SXM's 3.35 TB/s (4.79 ms), and an engine reaches at least 40% of that
// bandwidth with its host time (12 ms); the run is 32 requests of 127 steps plus the 15 s the client's start costs.
TEST(PlanSite, ABatchOneRunTakesItsRequestsAtTheBandwidthBound) {
  const SitePlan plan = plan_site(site_plan("", "vllm", 600));  // every candidate fits
  const auto run = std::find_if(plan.runs.begin(), plan.runs.end(), [](const SitePlanRun& r) {
    return r.batch == 1 && r.prompt_tokens == 128 && r.gen_tokens == 128;
  });
  ASSERT_NE(run, plan.runs.end());
  EXPECT_GE(run->expected_s, 15 + 32 * 127 * 16.06e9 / 3.35e12);
  EXPECT_LE(run->expected_s, 15 + 32 * 127 * 0.012);
}

// llmco2 measure records NVML energy: its plan (one CSV row per run, the header first) pins the power correction too.
TEST(PlanSite, AMeasurePlanIsWrittenAndItsEnergyPinsPower) {
  const SitePlanOptions o = site_plan("measure", "hf-transformers", 30);
  const SitePlan plan = plan_site(o);
  EXPECT_EQ(plan.plan_written, o.plan_out);
  EXPECT_EQ(lines_of(o.plan_out), static_cast<long>(plan.runs.size()) + 1);
  EXPECT_LT(correction(plan, "power_scale").sd, correction(plan, "power_scale").prior_sd / 2);
  EXPECT_NE(plan.text.find("llmco2 measure --plan " + o.plan_out), std::string::npos);
}

TEST(PlanSite, RefusesAToolThatCannotMeasureTheEngine) {
  EXPECT_EQ(error_of([] { plan_site(site_plan("measure", "vllm", 15)); }),
            "plan-site --tool measure: llmco2 measure's reference runner runs --engine hf-transformers, not vllm");
  EXPECT_EQ(error_of([] { plan_site(site_plan("ab", "vllm", 15)); }),
            "plan-site --tool: expected vllm, trtllm or measure, got 'ab'");
  EXPECT_EQ(error_of([] { plan_site(site_plan("", "vllm", 0)); }), "plan-site --minutes: expected 0-1440, got 0");
  EXPECT_EQ(error_of([] { plan_site(site_plan("", "vllm", 0.05)); }),
            "plan-site: no configuration fits 0.05 minutes: give more --minutes");
}

}  // namespace
}  // namespace llmco2::research

namespace llmco2::research {
namespace {

// The first `rows` rows of a bundled source, as a dataset file of its own.
void copy_head(const std::string& source, long rows, const std::filesystem::path& dir) {
  std::ifstream in(data_dir() / "measured" / (source + ".csv"));
  std::ofstream out(dir / (source + ".csv"));
  std::string line;
  for (long n = 0; n <= rows && std::getline(in, line); ++n) out << line << "\n";
}

// Cells of one CSV line (the rows file quotes no field this test reads).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// validate on two small sources: every output written, three held-out predictions per row, the regime coverages
// shipped in intervals.json adding up to the rows the rows file says were judged, a bundled predictor scored beside
// the simulator and said to be in-sample; an unknown predictor refused before any fit.
TEST(Validate, WritesItsReportIntervalsAndRowsAndScoresAskedPredictors) {
  const auto dir = std::filesystem::temp_directory_path() / ("llmco2_validate_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "data");
  copy_head("splitwise", 40, dir / "data");
  copy_head("mlenergy-v2", 40, dir / "data");
  ValidateOptions o;
  o.data_dir = (dir / "data").string();
  o.report = (dir / "accuracy.md").string();
  o.index_out = (dir / "index.csv").string();
  o.intervals_out = (dir / "intervals.json").string();
  o.rows_out = (dir / "rows.csv").string();
  o.max_evaluations = 10, o.threads = 2;
  o.predictors = {"nnlqp"};
  const ValidateSummary s = validate(o);
  ASSERT_GT(s.rows, 20);
  std::ifstream report(dir / "accuracy.md");
  const std::string md((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  for (const char* part : {"## Energy, leave one source out", "| nnlqp MAPE", "in-sample", "llm-viewer",
                           "| energy | calibrated", "The same intervals by regime", "## Ranking setups"})
    EXPECT_NE(md.find(part), std::string::npos) << part;
  // Three held-out predictions per simulatable row; a row without a measured energy is not judged on energy.
  std::ifstream rows(dir / "rows.csv");
  std::string line;
  std::getline(rows, line);
  const std::vector<std::string> header = cells_of(line);
  const auto column = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  long instances = 0, judged = 0;
  while (std::getline(rows, line)) {
    const std::vector<std::string> c = cells_of(line);
    ++instances;
    if (c.at(column("energy_measured_j")).empty()) {
      EXPECT_TRUE(c.at(column("energy_covered")).empty()) << line;
    }
    judged += c.at(column("energy_covered")).empty() ? 0 : 1;
  }
  EXPECT_EQ(instances, 3 * s.rows);
  const evidence::EvidenceIntervals iv = evidence::read_evidence_intervals(dir / "intervals.json");
  size_t covered_rows = 0;
  for (const auto& [cell, c] : iv.energy_coverage) {
    covered_rows += c.n;
    EXPECT_GE(c.covered, 0.0);
    EXPECT_LE(c.covered, 1.0);
  }
  EXPECT_EQ(static_cast<long>(covered_rows), judged);
  EXPECT_FALSE(iv.energy.empty());
  ValidateOptions bad = o;
  bad.predictors = {"nope"};
  EXPECT_NE(error_of([&] { validate(bad); }).find("--predictor"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmco2::research

namespace llmco2::research {
namespace {

// make-log: every turn re-sends its conversation so far: its shared tokens are the previous turn's prompt plus answer,
// the first turn of each shares nothing, and its prompt adds a new message; the log is in time order and seeded.
TEST(ConversationLog, EachTurnResendsItsConversationSoFar) {
  ConversationLogOptions o;
  o.conversations = 20, o.turns = 4, o.rate_per_s = 2, o.think_s = 5, o.system_tokens = 300, o.seed = 3;
  const std::string csv = conversation_log_csv(o);
  EXPECT_EQ(csv, conversation_log_csv(o));
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "TIMESTAMP,ContextTokens,GeneratedTokens,SessionId,SharedPrefixTokens");
  std::map<std::string, std::pair<long, long>> last;  // per conversation: (turns seen, prompt + answer so far)
  std::string previous_time;
  long requests = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> c = cells_of(line);
    ASSERT_EQ(c.size(), 5u) << line;
    EXPECT_GE(c[0], previous_time);  // same-width timestamps: text order is time order
    previous_time = c[0];
    const long prompt = std::stol(c[1]), gen = std::stol(c[2]), shared = std::stol(c[4]);
    auto& [turns, context] = last[c[3]];
    EXPECT_EQ(shared, turns == 0 ? 0 : context) << line;
    EXPECT_GE(prompt - (turns == 0 ? o.system_tokens : context), 100) << line;  // a new message of 200 +- 50%
    EXPECT_LE(prompt - (turns == 0 ? o.system_tokens : context), 300) << line;
    ++turns;
    context = prompt + gen;
    ++requests;
  }
  EXPECT_EQ(requests, 80);
  EXPECT_EQ(last.size(), 20u);
  o.turns = 0;
  EXPECT_NE(error_of([&] { conversation_log_csv(o); }).find("--turns"), std::string::npos);
}

}  // namespace
}  // namespace llmco2::research
