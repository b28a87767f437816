// One request, one answer: the same request asked through predict, a compare row, compare --trace on a one-request
// log, trace accounting of that log and the JSON form the HTTP API and Python take gives the same figures, on every
// bundled GPU type, for a dense GQA model, a dense multi-head model, a mixture of experts and quantised checkpoints,
// in both energy scopes. Where the same code runs the figures agree to 1e-9 relative; where a setup cannot serve,
// every path refuses it with the same reason.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "llmco2/api.h"

namespace llmco2::api {
namespace {

constexpr double kRelative = 1e-9;

// The four models of the issue (dense GQA, dense MHA, MoE, a quantised checkpoint) and an MXFP4 one.
const std::vector<std::string> kModels = {"llama-3.1-8b", "opt-6.7b", "mixtral-8x7b", "qwen3-30b-a3b-fp8",
                                          "gpt-oss-20b"};

std::vector<std::string> bundled_gpu_ids(const Session& session) {
  std::vector<std::string> ids;
  for (const Json& gpu : session.gpus()) ids.push_back(gpu["id"].get<std::string>());
  return ids;
}

// A one-request log in the Azure trace's layout.
std::string one_request_log(long prompt, long gen) {
  const auto path = std::filesystem::path(testing::TempDir()) /
                    ("one-request-" + std::to_string(prompt) + "-" + std::to_string(gen) + ".csv");
  std::ofstream(path) << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900," << prompt << "," << gen
                      << "\n";
  return path.string();
}

Request request_of(const std::string& model, const std::string& gpu, int gpus, const std::string& scope) {
  Request r;
  r.model = model, r.gpu = gpu, r.gpus = gpus, r.scope = scope;
  r.batch = 1, r.prompt_tokens = 512, r.gen_tokens = 64;
  r.region = "FRA";
  return r;
}

// The one row of a compare of `request` on its own GPU type and count.
Json compare_row(const Session& session, const Request& request, const std::string& trace = "") {
  CompareOptions o;
  o.gpu_types = {request.gpu};
  o.counts = {request.gpus};
  o.trace = trace;
  o.grid_ratio = 1;  // every distinct shape exactly
  o.threads = 1;
  const Json setups = session.compare(request, o).json["setups"];
  EXPECT_EQ(setups.size(), 1u);
  return setups.at(0);
}

void expect_same(double expected, double got, const std::string& what) {
  EXPECT_NEAR(got, expected, kRelative * std::abs(expected)) << what;
}

TEST(OneRequestOneAnswer, EveryInterfaceGivesPredictsFiguresOnEveryGpu) {
  const Session session;
  const std::string log = one_request_log(512, 64);
  int served = 0, refused = 0;
  for (const std::string& gpu : bundled_gpu_ids(session))
    for (const std::string& model : kModels)
      for (const char* scope : {"node", "gpu"}) {
        bool smallest_seen = false;
        for (int gpus : {1, 2, 4, 8}) {
          const Request request = request_of(model, gpu, gpus, scope);
          const std::string what = model + " on " + std::to_string(gpus) + " x " + gpu + ", scope " + scope;
          Result predicted;
          std::string why;
          try {
            predicted = session.predict(request);
          } catch (const Error& e) {
            why = e.what();
          }
          const Json row = compare_row(session, request);
          if (!why.empty()) {
            ++refused;
            EXPECT_EQ(row.value("unavailable", ""), why) << what;
            continue;
          }
          ++served;
          ASSERT_FALSE(row.contains("unavailable")) << what << ": " << row["unavailable"];
          const Figures& f = predicted.figures;
          expect_same(f.energy_j, row["energy_j"]["total"], what + ": compare energy");
          expect_same(f.latency_s, row["latency_s"]["total"], what + ": compare latency");
          expect_same(f.co2_total_g, row["co2_g"]["total"]["total"], what + ": compare CO2");
          EXPECT_EQ(row["energy_j"], predicted.json["energy_j"]) << what;  // the same schema, phase by phase
          EXPECT_EQ(row["dtype"], predicted.json["dtype"]) << what;
          EXPECT_EQ(row["energy_scope"], predicted.json["energy_scope"]) << what;
          EXPECT_EQ(row["node"], predicted.json["node"]) << what;
          // The JSON form (HTTP, Python) answers as the struct does.
          Json asked = {{"model", model}, {"gpu", gpu},    {"gpus", gpus}, {"scope", scope},
                        {"batch", 1},     {"prompt", 512}, {"gen", 64},    {"region", "FRA"}};
          expect_same(f.energy_j, session.predict(request_from_json(asked)).figures.energy_j, what + ": JSON");
          // Logs: compare --trace and trace accounting, on the smallest count that serves and on one GPU.
          if (smallest_seen && gpus != 1) continue;
          smallest_seen = true;
          const Json traced = compare_row(session, request, log);
          expect_same(f.energy_j, traced["energy_j"]["total"], what + ": compare --trace energy");
          expect_same(f.latency_s, traced["latency_s"]["total"], what + ": compare --trace latency");
          // A log's row is judged at the log's mean context: here predict's request's, so predict's evidence.
          EXPECT_EQ(traced["evidence"], predicted.json["evidence"]) << what;
          LogColumns columns;
          columns.prompt_tokens = {512}, columns.gen_tokens = {64};
          TraceOptions t;
          t.grid_ratio = 1;
          const Json scored = session.score_requests(columns, request, t).json;
          expect_same(f.energy_j, scored["energy_j"]["total"], what + ": trace energy");
        }
      }
  // Every GPU type serves some of these models, and some setups are too small: both paths are exercised.
  EXPECT_GT(served, 200);
  EXPECT_GT(refused, 20);
}

// compare ranks the bundled GPUs for llama-3.1-8b with predict's figures, row by row, at the default scope.
TEST(OneRequestOneAnswer, CompareRanksWithPredictsFigures) {
  const Session session;
  Request request;
  request.model = "llama-3.1-8b";
  CompareOptions o;
  o.counts = {1, 2};
  const Json rows = session.compare(request, o).json["setups"];
  ASSERT_GT(rows.size(), 40u);
  for (const Json& row : rows) {
    if (row.contains("unavailable")) continue;
    Request one = request;
    one.gpu = row["gpu"], one.gpus = row["gpus"];
    const Result predicted = session.predict(one);
    const Figures& f = predicted.figures;
    expect_same(f.energy_j, row["energy_j"]["total"], row.dump());
    expect_same(f.latency_s, row["latency_s"]["total"], row.dump());
    // The same evidence and the same intervals: one label per setup, one interval per label.
    const Json& p = predicted.json;
    EXPECT_EQ(row["evidence"]["label"], p["evidence"]["label"]) << row.dump();
    ASSERT_TRUE(row.contains("intervals")) << row.dump();
    for (const char* q : {"energy_j", "latency_s"})
      for (int end : {0, 1})
        expect_same(p["intervals"][q]["total"][end], row["intervals"][q]["total"][end], row.dump());
    expect_same(p["intervals"]["co2_g"]["total"]["total"][1], row["intervals"]["co2_g"]["total"]["total"][1],
                row.dump());
  }
}

}  // namespace
}  // namespace llmco2::api
