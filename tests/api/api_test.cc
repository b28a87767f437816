// tests/api/api_test.cc - the public API (include/llmco2/api.h): requests read from JSON, one answer whichever path
// asks (single, many, posted config), paths refused where not allowed, log partitions that add up.
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/paths.h"
#include "llmco2/api.h"
#include "support/all_modules.h"
#include "support/error_of.h"

namespace llmco2::api {
namespace {

using testing_support::error_of;

TEST(ApiRequest, KeysAreTheCliFlags) {
  const Request r = request_from_json(Json::parse(
      R"({"model":"qwen2-0.5b","gpu":"a100-80gb-sxm","gpus":2,"pp":3,"batch":4,"prompt":512,"gen":64,"dtype":"fp16",
          "flash":false,"engine":"sglang","expert_parallel":true,"power_cap":300,"clock_mhz":1200,
          "spec":"eagle","spec_tokens":2,"spec_acceptance":0.7,"scope":"gpu","region":"FRA","ci":50,"pue":1.2,
          "lifetime":4,"embodied_basis":"vendor","embodied_kg":100,"predictor":"sim"})"));
  EXPECT_EQ(r.model, "qwen2-0.5b");
  EXPECT_EQ(r.gpu, "a100-80gb-sxm");
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.pipeline_parallel, 3);
  EXPECT_EQ(r.batch, 4);
  EXPECT_EQ(r.prompt_tokens, 512);
  EXPECT_EQ(r.gen_tokens, 64);
  EXPECT_EQ(r.dtype, "fp16");
  EXPECT_FALSE(r.flash_attention);
  EXPECT_EQ(r.engine, "sglang");
  EXPECT_TRUE(r.expert_parallel);
  EXPECT_EQ(r.power_cap_w, 300);
  EXPECT_EQ(r.clock_mhz, 1200);
  EXPECT_EQ(r.spec, "eagle");
  EXPECT_EQ(r.spec_tokens, 2);
  EXPECT_EQ(*r.spec_acceptance, 0.7);
  EXPECT_EQ(r.scope, "gpu");
  EXPECT_EQ(r.region, "FRA");
  EXPECT_EQ(*r.ci_g_per_kwh, 50);
  EXPECT_EQ(r.pue, "1.2");
  EXPECT_EQ(*r.lifetime_years, 4);
  EXPECT_EQ(r.embodied_basis, "vendor");
  EXPECT_EQ(*r.embodied_kg, 100);
  EXPECT_EQ(r.predictor, "sim");
  EXPECT_EQ(request_keys().size(), 26u);  // the 25 flags above and model_config
}

TEST(ApiRequest, BadKeysAndTypesAreNamed) {
  EXPECT_EQ(error_of([] { request_from_json(Json::parse(R"({"batch":"4"})")); }),
            "request: key 'batch': expected an integer, got \"4\"");
  EXPECT_EQ(error_of([] { request_from_json(Json::parse(R"({"gpus":0})"), "requests[2]"); }),
            "requests[2]: key 'gpus': expected an integer between 1 and 2147483647, got 0");
  const std::string unknown = error_of([] { request_from_json(Json::parse(R"({"bacth":4})")); });
  EXPECT_NE(unknown.find("unknown key 'bacth' (did you mean batch"), std::string::npos) << unknown;
  EXPECT_EQ(error_of([] { request_from_json(Json::parse("[1]")); }),
            "request: expected a JSON object of request fields, got [1]");
  // null keeps the default
  EXPECT_EQ(request_from_json(Json::parse(R"({"batch":null})")).batch, 1);
}

TEST(ApiSession, PredictManyEqualsPredictOneByOne) {
  const Session session;
  std::vector<Request> requests(3);
  requests[1].batch = 8, requests[1].gen_tokens = 32;
  requests[2].model = "qwen2-0.5b", requests[2].gpu = "a100-80gb-sxm", requests[2].region = "FRA";
  const std::vector<Result> many = session.predict_many(requests, 2);
  ASSERT_EQ(many.size(), 3u);
  for (size_t i = 0; i < requests.size(); ++i) {
    const Result one = session.predict(requests[i]);
    EXPECT_EQ(many[i].json, one.json) << i;
    EXPECT_EQ(many[i].figures.energy_j, one.json["energy_j"]["total"].get<double>()) << i;
    EXPECT_EQ(many[i].figures.co2_total_g, one.json["co2_g"]["total"]["total"].get<double>()) << i;
  }
  // The key figures are the JSON's: energy = prefill + decode, TTFT = the prefill latency.
  const Figures& f = many[0].figures;
  EXPECT_NEAR(f.energy_j, f.energy_prefill_j + f.energy_decode_j, 1e-9 * f.energy_j);
  EXPECT_EQ(f.ttft_s, many[0].json["latency_s"]["prefill"].get<double>());
  requests[1].gpu = "no-such-gpu";
  const std::string error = error_of([&] { session.predict_many(requests, 2); });
  EXPECT_EQ(error.rfind("requests[1]: unknown GPU 'no-such-gpu'", 0), 0u) << error;
}

// An unknown GPU's message offers a GPU file only where a file would be read: the command line does, the server
// (allow_paths false) does not.
TEST(ApiSession, AnInterruptRequestStopsPredictManyUntilCleared) {
  const Session session;
  const std::vector<Request> requests(8);
  request_interrupt(true);
  const std::string message = error_of([&] { session.predict_many(requests, 2); });
  request_interrupt(false);
  EXPECT_EQ(message, "interrupted");
  EXPECT_EQ(session.predict_many(requests, 2).size(), 8u);  // cleared: answered as usual
}

TEST(ApiSession, AnUnknownGpuOffersAFileOnlyWherePathsAreAllowed) {
  Request request;
  request.gpu = "h100-sxn";
  const std::string with_paths = error_of([&] { Session().predict(request); });
  EXPECT_NE(with_paths.find("unknown GPU 'h100-sxn' (did you mean h100-sxm"), std::string::npos) << with_paths;
  EXPECT_NE(with_paths.find("a GPU JSON file path also works"), std::string::npos) << with_paths;
  Settings server;
  server.allow_paths = false;
  const std::string without = error_of([&] { Session(server).predict(request); });
  EXPECT_NE(without.find("unknown GPU 'h100-sxn' (did you mean h100-sxm"), std::string::npos) << without;
  EXPECT_EQ(without.find("file"), std::string::npos) << without;
  EXPECT_NE(without.find("here a GPU is a catalog id"), std::string::npos) << without;
}

TEST(ApiSession, APostedConfigAnswersAsTheBundledModel) {
  Json config;
  std::ifstream(data_dir() / "models" / "meta-llama-Llama-3.1-8B.json") >> config;
  Request posted;
  posted.model = "my-llama";
  posted.model_config = config;
  const Session server({.allow_paths = false});
  const Result a = server.predict(posted), b = server.predict(Request{});
  EXPECT_EQ(a.json["model"], "my-llama");
  EXPECT_EQ(a.json["energy_j"], b.json["energy_j"]);
  EXPECT_EQ(a.json["latency_s"], b.json["latency_s"]);
}

TEST(ApiSession, PathsAreRefusedWhereNotAllowed) {
  const Session server({.allow_paths = false});
  Request r;
  r.model = (data_dir() / "models" / "meta-llama-Llama-3.1-8B.json").string();
  EXPECT_NE(error_of([&] { server.predict(r); }).find("here a model is a bundled id"), std::string::npos);
  r = Request{};
  r.gpu = "/tmp/gpu.json";
  EXPECT_EQ(error_of([&] { server.predict(r); }),
            "--gpu: '/tmp/gpu.json' is a file name; here only catalog ids are accepted");
  EXPECT_NE(error_of([&] { server.score_trace("/etc/passwd", Request{}, {}); }).find("not allowed here"),
            std::string::npos);
}

TEST(ApiSession, PartitionsOfALogAddUpToTheWholeLog) {
  const Session session;
  LogColumns whole, first, second;
  for (long i = 0; i < 40; ++i) {
    const long prompt = 50 + 97 * i, gen = 10 + 13 * i;
    LogColumns& part = i < 17 ? first : second;
    for (LogColumns* c : {&whole, &part}) {
      c->prompt_tokens.push_back(prompt);
      c->gen_tokens.push_back(gen);
      c->time_s.push_back(1.7e9 + 3.0 * static_cast<double>(i));
    }
  }
  const Json w = session.score_requests(whole, Request{}, {}).json;
  const Json a = session.score_requests(first, Request{}, {}).json;
  const Json b = session.score_requests(second, Request{}, {}).json;
  EXPECT_EQ(w["requests"].get<long>(), 40);
  EXPECT_EQ(a["requests"].get<long>() + b["requests"].get<long>(), 40);
  for (const char* key : {"prompt_tokens", "gen_tokens", "gpu_busy_s"})
    EXPECT_NEAR(a[key].get<double>() + b[key].get<double>(), w[key].get<double>(), 1e-9 * w[key].get<double>()) << key;
  const double e_a = a["energy_j"]["total"], e_b = b["energy_j"]["total"], e_w = w["energy_j"]["total"];
  EXPECT_NEAR(e_a + e_b, e_w, 1e-9 * e_w);
  const double co2_a = a["co2_g"]["total"]["total"], co2_b = b["co2_g"]["total"]["total"];
  const double co2_w = w["co2_g"]["total"]["total"];
  EXPECT_NEAR(co2_a + co2_b, co2_w, 1e-9 * co2_w);
  EXPECT_EQ(error_of([] {
              LogColumns bad;
              bad.prompt_tokens = {1, 2};
              bad.gen_tokens = {1};
              Session().score_requests(bad, Request{}, {});
            }),
            "columns: 2 prompt token counts but 1 gen token counts");
}

TEST(ApiSession, ConcurrentCallsAnswerAsOneThreadDoes) {
  const Json expected = Session().predict(Request{}).json;
  const Session shared;  // threads race on its first predictor load, as a server's first requests do
  std::vector<std::thread> threads;
  std::vector<Json> answers(4);
  for (size_t t = 0; t < answers.size(); ++t)
    threads.emplace_back([&, t] { answers[t] = shared.predict(Request{}).json; });
  for (auto& t : threads) t.join();
  for (const Json& a : answers) EXPECT_EQ(a, expected);
}

}  // namespace
}  // namespace llmco2::api

namespace llmco2::api {
namespace {

// The width of a result's 80% energy interval, as a ratio high / low.
double energy_interval_width(const Json& result) {
  const Json& total = result["intervals"]["energy_j"]["total"];
  return total[1].get<double>() / total[0].get<double>();
}

TEST(ApiEvidence, AnExtrapolatedRequestGetsAWiderIntervalThanACalibratedOne) {
  const Session session;
  Request surrounded;  // Llama 3.1 8B on an H100 under vLLM at batch 8, 1-4k tokens: ML.ENERGY v3 measured it
  surrounded.model = "llama-3.1-8b", surrounded.gpu = "h100-sxm", surrounded.engine = "vllm";
  surrounded.batch = 8, surrounded.prompt_tokens = 1024, surrounded.gen_tokens = 256;
  const Json calibrated = session.predict(surrounded).json;
  ASSERT_EQ(calibrated["evidence"]["label"], "calibrated") << calibrated["evidence"].dump();
  EXPECT_EQ(calibrated["evidence"]["nearest_sources"][0]["source"], "mlenergy-v3");
  Request alone = surrounded;  // an MI325X under DeepSpeed at a 100k context: nothing measured resembles it
  alone.gpu = "mi325x", alone.engine = "deepspeed", alone.batch = 1, alone.prompt_tokens = 100000;
  const Json extrapolated = session.predict(alone).json;
  ASSERT_EQ(extrapolated["evidence"]["label"], "extrapolated") << extrapolated["evidence"].dump();
  EXPECT_GT(energy_interval_width(extrapolated), energy_interval_width(calibrated));
  // Every answer names its interval's basis and the bias of its kind.
  for (const Json* j : {&calibrated, &extrapolated}) {
    EXPECT_NE((*j)["interval_note"].get<std::string>().find("held-out rows"), std::string::npos);
    EXPECT_GT((*j)["evidence"]["bias"]["energy"].get<double>(), 0);
  }
  // The interval brackets the prediction once the bias of its kind is applied: low <= P x median <= high.
  const double p = calibrated["energy_j"]["total"], median = calibrated["evidence"]["bias"]["energy"];
  EXPECT_LE(calibrated["intervals"]["energy_j"]["total"][0].get<double>(), p * median);
  EXPECT_GE(calibrated["intervals"]["energy_j"]["total"][1].get<double>(), p * median);
  // The regime (batch 8 is band 1; 1280 tokens band 1) and how the interval covered held-out rows there.
  EXPECT_EQ(calibrated["evidence"]["regime"], "batch 4-15, context 1k-4k");
  EXPECT_EQ(extrapolated["evidence"]["regime"], "batch 1-3, context 4k+");
  const Json& coverage = extrapolated["evidence"]["regime_coverage"]["energy"];
  ASSERT_TRUE(coverage.is_number()) << extrapolated["evidence"].dump();
  EXPECT_GE(coverage.get<double>(), 0.0);
  EXPECT_LE(coverage.get<double>(), 1.0);
  EXPECT_NE(extrapolated["interval_note"].get<std::string>().find("in this regime (batch 1-3, context 4k+)"),
            std::string::npos)
      << extrapolated["interval_note"];
}

}  // namespace
}  // namespace llmco2::api
