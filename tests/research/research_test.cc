// The research calls (llmco2/research.h) as the CLI's commands make them: one request through the graph and the
// simulator, plans sampled and labelled, outputs checked against their manifest, imports and validations refusing
// bad input with the key. Values are worked out by hand or checked against the public API's own answer.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace llmco2::research
