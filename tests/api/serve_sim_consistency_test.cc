// One request, one answer through the serving simulation too: serve-sim replaying a log of one request, on the setup
// predict resolves (api::resolve_request, then api::deployment, as the serve-sim command does), gives predict's
// figures on every bundled GPU type, for a dense GQA, a dense multi-head, a mixture-of-experts and a quantised model,
// in both energy scopes. The two paths share the physics but not the code: the replay prices each iteration at its
// own context on the step grid (cells within 4%, a cell's representative kept on the step's side of the engine's
// CUDA-graph limit), where predict prices one prefill and one decode run at the run's mean context. Decode costs are
// close to linear in the context, so they agree to 0.5% on energy, latency, time to first token and time per output
// token. (Before the representative kept its side, a 512-token prefill on a B200 was priced as 524 tokens of eager
// launches: its time to first token came out 1.9x predict's.)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "api/resolve.h"
#include "dataset/request_log.h"
#include "llmco2/api.h"
#include "serving/serve_sim.h"
#include "sim/sim_params.h"
#include "support/all_modules.h"

namespace llmco2::api {
namespace {

const std::vector<std::string> kServeSimModels = {"llama-3.1-8b", "opt-6.7b", "mixtral-8x7b", "qwen3-30b-a3b-fp8"};

TEST(OneRequestOneAnswer, ServeSimOfOneRequestGivesPredictsFiguresOnEveryGpu) {
  const Session session;
  const SimParams params = load_sim_params_or_default("");
  int compared = 0;
  for (const Json& gpu : session.gpus()) {
    for (const std::string& model : kServeSimModels) {
      for (const std::string scope : {"gpu", "node"}) {
        Request r;
        r.model = model, r.gpu = gpu["id"].get<std::string>(), r.scope = scope;
        r.prompt_tokens = 512, r.gen_tokens = 64;
        for (int gpus : {1, 2, 4, 8}) {
          r.gpus = gpus;
          ResolvedRequest resolved;
          try {
            resolved = resolve_request(r, false);
          } catch (const Error&) {
            continue;  // does not fit: predict refuses it (tests/api/consistency_test.cc), try more GPUs
          }
          const Figures predicted = session.predict(r).figures;
          RequestLog log;
          log.format = "azure";
          log.requests.push_back({0.0, r.prompt_tokens, r.gen_tokens, 2});
          std::vector<ServedRequest> served;
          replay(log, deployment(resolved), params, {}, [&](const ServedRequest& q) { served.push_back(q); });
          const std::string what = r.gpu + " x" + std::to_string(gpus) + " " + model + " " + scope;
          ASSERT_EQ(served.size(), 1u) << what;
          const ServedRequest& q = served[0];
          EXPECT_NEAR(q.energy_j / predicted.energy_j, 1.0, 0.005) << what;
          EXPECT_NEAR(q.finish_s / predicted.latency_s, 1.0, 0.005) << what;
          EXPECT_NEAR(q.first_token_s / predicted.ttft_s, 1.0, 0.005) << what;
          ASSERT_TRUE(predicted.tpot_s) << what;
          const double tpot_s = (q.finish_s - q.first_token_s) / static_cast<double>(r.gen_tokens - 1);
          EXPECT_NEAR(tpot_s / *predicted.tpot_s, 1.0, 0.005) << what;
          ++compared;
          break;
        }
      }
    }
  }
  EXPECT_GE(compared, 30 * 2 * 3);  // every GPU type in both scopes for at least three of the four models
}

// The same through the public API (Session::serve_sim, what the serve-sim command calls): a one-request log file.
TEST(OneRequestOneAnswer, SessionServeSimOfOneRequestGivesPredictsFigures) {
  const auto path = std::filesystem::path(testing::TempDir()) / "serve-sim-one-request.csv";
  std::ofstream(path) << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,512,64\n";
  const Session session;
  for (const std::string gpu : {"h100-sxm", "l4"}) {
    for (const std::string scope : {"gpu", "node"}) {
      Request r;
      r.gpu = gpu, r.scope = scope, r.prompt_tokens = 512, r.gen_tokens = 64;
      const Figures predicted = session.predict(r).figures;
      ServeSimOptions o;
      o.log = path.string();
      const Result served = session.serve_sim(r, o);
      EXPECT_NEAR(served.json["energy_j"]["total"].get<double>() / predicted.energy_j, 1.0, 0.005) << gpu << scope;
      EXPECT_NEAR(served.json["per_request"]["ttft_s"]["mean"].get<double>() / predicted.ttft_s, 1.0, 0.005) << gpu;
      EXPECT_EQ(served.json["energy_scope"], scope);
      EXPECT_NE(served.text.find("latency (ms)"), std::string::npos);
    }
  }
  Settings no_paths;
  no_paths.allow_paths = false;
  ServeSimOptions o;
  o.log = path.string();
  EXPECT_THROW(Session(no_paths).serve_sim(Request{}, o), Error);
}

// One client of `vllm bench serve --max-concurrency 1` over its random dataset sends each request when the one
// before ends: the run is predict's request back to back, its energy and window predict's times the requests.
TEST(OneRequestOneAnswer, OneClientOfTheRandomDatasetGivesPredictsFiguresBackToBack) {
  const Session session;
  Request r;
  r.gpu = "h100-sxm", r.prompt_tokens = 512, r.gen_tokens = 64;
  const Figures predicted = session.predict(r).figures;
  ServeSimOptions o;
  o.num_prompts = 4, o.input_len = 512, o.output_len = 64, o.concurrency = 1;
  const Result served = session.serve_sim(r, o);
  EXPECT_NEAR(served.json["energy_j"]["total"].get<double>() / (4 * predicted.energy_j), 1.0, 0.005);
  EXPECT_NEAR(served.json["window_s"].get<double>() / (4 * predicted.latency_s), 1.0, 0.005);
  EXPECT_NEAR(served.json["per_request"]["ttft_s"]["p99"].get<double>() / predicted.ttft_s, 1.0, 0.005);
  EXPECT_EQ(served.json["load"]["loop"], "closed");
  EXPECT_EQ(served.json["load"]["source"], "random");
  EXPECT_NE(served.text.find("4 requests over"), std::string::npos) << served.text;
  EXPECT_NE(served.text.find("1 clients"), std::string::npos) << served.text;
  // Its evidence is predict's: one client runs at batch 1, every request at 512 + 64 tokens.
  EXPECT_EQ(served.json["evidence"], session.predict(r).json["evidence"]);
  EXPECT_NE(served.text.find("evidence: "), std::string::npos) << served.text;
}

// The random dataset: fixed lengths give exactly num_prompts x output_len tokens; a range ratio draws every length
// within it, the same draws for the same seed; bad settings are refused naming the flag.
TEST(ServeSimRandomDataset, LengthsAreFixedOrDrawnWithinTheRangeRatio) {
  const Session session;
  Request r;
  r.gpu = "h100-sxm";
  ServeSimOptions o;
  o.num_prompts = 50, o.input_len = 400, o.output_len = 40, o.concurrency = 16;
  const Result fixed = session.serve_sim(r, o);
  const double tokens =
      fixed.json["throughput"]["output_tokens_per_s"].get<double>() * fixed.json["window_s"].get<double>();
  EXPECT_NEAR(tokens, 50 * 40, 1e-6);
  o.range_ratio = 0.5, o.seed = 7;
  const auto csv = std::filesystem::path(testing::TempDir()) / "random-dataset-requests.csv";
  o.requests_csv = csv.string();
  const Result drawn = session.serve_sim(r, o);
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // line,arrival_s,prompt_tokens,gen_tokens,...
  long rows = 0, prompt_min = 1 << 30, prompt_max = 0, gen_min = 1 << 30, gen_max = 0;
  while (std::getline(in, line)) {
    long id = 0, prompt = 0, gen = 0;
    double arrival = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%ld,%lf,%ld,%ld", &id, &arrival, &prompt, &gen), 4) << line;
    ++rows;
    prompt_min = std::min(prompt_min, prompt), prompt_max = std::max(prompt_max, prompt);
    gen_min = std::min(gen_min, gen), gen_max = std::max(gen_max, gen);
  }
  EXPECT_EQ(rows, 50);
  EXPECT_GE(prompt_min, 200);  // [400 x 0.5, 400 x 1.5]
  EXPECT_LE(prompt_max, 600);
  EXPECT_GE(gen_min, 20);
  EXPECT_LE(gen_max, 60);
  EXPECT_LT(prompt_min, prompt_max);
  EXPECT_LT(gen_min, gen_max);
  EXPECT_EQ(session.serve_sim(r, o).json, drawn.json);  // the same seed, the same run
  o.seed = 8;
  EXPECT_NE(session.serve_sim(r, o).json["energy_j"], drawn.json["energy_j"]);
  for (auto [change, flag] : std::vector<std::pair<std::function<void(ServeSimOptions&)>, std::string>>{
           {[](ServeSimOptions& x) { x.range_ratio = 1; }, "--random-range-ratio"},
           {[](ServeSimOptions& x) { x.input_len = 0; }, "--random-input-len"},
           {[](ServeSimOptions& x) { x.output_len = 2'000'000'000; }, "--random-output-len must be 1 to 1000000000"},
           {[](ServeSimOptions& x) { x.range_ratio = std::nan(""); }, "--random-range-ratio"},
           {[](ServeSimOptions& x) { x.num_prompts = 100'000'001; }, "--num-prompts"},
           {[](ServeSimOptions& x) { x.log = "log.csv"; }, "not both"},
           {[](ServeSimOptions& x) { x.concurrency = -2; }, "--concurrency"},
           {[](ServeSimOptions& x) { x.num_prompts = 0; }, "a request log file, or --num-prompts"}}) {
    ServeSimOptions bad = o;
    bad.requests_csv.clear();
    change(bad);
    std::string message;
    try {
      session.serve_sim(r, bad);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(flag), std::string::npos) << flag << ": " << message;
  }
}

}  // namespace
}  // namespace llmco2::api
