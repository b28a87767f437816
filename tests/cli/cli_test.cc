// The llmco2 binary end to end: JSON/DOT output and one clear stderr line with exit code 2 for bad input.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

struct Result {
  int exit_code = -1;
  std::string out, err;
};

Result run(const std::string& args) {
  static int calls = 0;  // ctest runs tests in parallel processes: one stderr file per process and call
  const std::string err_path =
      testing::TempDir() + "/llmco2_stderr_" + std::to_string(getpid()) + "_" + std::to_string(++calls) + ".txt";
  const std::string command = std::string(LLMCO2_BIN) + " " + args + " 2>" + err_path;
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  result.err = err.str();
  std::remove(err_path.c_str());
  return result;
}

int lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

void expect_clean_error(const std::string& args, const std::string& fragment) {
  const Result r = run(args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
}

const std::string kRequest = "--model llama-3.1-8b --gpu h100-sxm --batch 1 --prompt 1024 --gen 128";

TEST(Cli, GraphJsonFollowsTheSchema) {
  const Result r = run("graph " + kRequest + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["layers"], 32);
  EXPECT_EQ(j["model"]["id"], "llama-3.1-8b");
  EXPECT_EQ(j["gpu"]["id"], "h100-sxm");
  EXPECT_EQ(j["request"]["prompt_tokens"], 1024);
  for (const char* phase : {"prefill", "decode"}) {
    const auto& p = j["phases"][phase];
    ASSERT_FALSE(p["nodes"].empty());
    for (const auto& node : p["nodes"])
      for (const char* key : {"kernel", "type", "ops", "mem_bytes", "weight_bytes", "net_bytes", "perf_ops_per_s",
                              "bound"})
        EXPECT_TRUE(node.contains(key)) << phase << " " << key;
    EXPECT_FALSE(p["edges"].empty());
    EXPECT_GT(p["totals"]["ops"].get<double>(), 0);
  }
  EXPECT_EQ(j["phases"]["prefill"]["nodes"][1]["kernel"], "q_proj");
  EXPECT_EQ(j["phases"]["prefill"]["nodes"][1]["ops"].get<double>(), 2.0 * 1024 * 4096 * 4096);
}

TEST(Cli, GraphDotAndSummary) {
  const Result dot = run("graph " + kRequest + " --format dot --phase decode");
  ASSERT_EQ(dot.exit_code, 0) << dot.err;
  EXPECT_EQ(dot.out.rfind("digraph", 0), 0u);
  EXPECT_NE(dot.out.find("n0 -> n1"), std::string::npos);
  const Result summary = run("graph " + kRequest + " --format summary");
  ASSERT_EQ(summary.exit_code, 0);
  EXPECT_NE(summary.out.find("decode:"), std::string::npos);
}

TEST(Cli, CatalogListings) {
  const Result models = run("models");
  ASSERT_EQ(models.exit_code, 0) << models.err;
  EXPECT_EQ(lines(models.out), 53);  // header + 52 configs
  const Result gpus = run("gpus --format json");
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  EXPECT_EQ(nlohmann::json::parse(gpus.out).size(), 15u);
}

TEST(Cli, BadInputIsOneLineAndExitCode2) {
  expect_clean_error("graph --model llama-3.1-9b", "did you mean llama-3.1-8b");
  expect_clean_error("graph --gpu h1000", "unknown GPU 'h1000'");
  expect_clean_error("graph --model " + std::string(LLMCO2_TESTDATA) + "/configs/missing_hidden.json",
                     "missing_hidden.json: missing key 'hidden_size'");
  expect_clean_error("graph --model " + std::string(LLMCO2_TESTDATA) + "/configs/truncated.json", "malformed JSON");
  expect_clean_error("graph --batch 0", "--batch must be at least 1");
  expect_clean_error("graph --batch abc", "--batch");
  expect_clean_error("graph --gen -4", "--gen");
  expect_clean_error("graph --gpus 3", "cannot split evenly");
  expect_clean_error("graph --model llama-3.1-70b --gpu h100-sxm", "needs --gpus 2 or more");
  expect_clean_error("graph --dtype fp64", "--dtype 'fp64'");
  expect_clean_error("graph --format xml", "--format");
  expect_clean_error("frobnicate", "frobnicate");
}

}  // namespace

namespace llmco2 {
namespace {

TEST(CliSimulate, JsonHasEnergyAndLatencyPerPhase) {
  const Result r = run("simulate " + kRequest + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"energy_j", "latency_s"}) {
    const auto& v = j.at(key);
    EXPECT_GT(v.at("prefill").get<double>(), 0) << key;
    EXPECT_GT(v.at("decode").get<double>(), 0) << key;
    EXPECT_NEAR(v.at("total").get<double>(), v.at("prefill").get<double>() + v.at("decode").get<double>(), 1e-9);
  }
}

TEST(CliSimulate, PlanLabelsGoodRowsAndRejectsBadOnesByLine) {
  const std::string dir = testing::TempDir();
  const std::string plan = dir + "/plan_" + std::to_string(getpid()) + ".csv";
  const std::string out = dir + "/labelled_" + std::to_string(getpid()) + ".csv";
  std::ofstream(plan) << "model,gpu,gpus,batch,prompt,gen\nllama-3.1-8b,h100,1,1,128,16\nno-such-model,h100,1,1,8,8\n"
                         "llama-3.1-8b,a100-80gb-sxm,2,8,512,32\n";
  const Result r = run("simulate --plan " + plan + " --out " + out + " --repeats 3 --seed 5");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(plan + ":3: unknown model 'no-such-model'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wrote 2 rows"), std::string::npos) << r.err;
  std::ifstream in(out);
  std::string header, first, second;
  std::getline(in, header), std::getline(in, first), std::getline(in, second);
  EXPECT_EQ(header.rfind("source,source_ref,model,", 0), 0u);
  EXPECT_EQ(first.rfind("sim,", 0), 0u);
  EXPECT_NE(second.find(",a100-80gb-sxm,2,nvlink3,"), std::string::npos) << second;
  std::remove(plan.c_str()), std::remove(out.c_str());
}

TEST(CliSimulate, BadPlanAndUnknownSourceAreCleanErrors) {
  expect_clean_error("simulate --plan /no/such/plan.csv --out /tmp/x.csv", "/no/such/plan.csv: cannot open file");
  expect_clean_error("import mlenergy-v2 --from /no/such/dir", "source folder /no/such/dir/mlenergy_leaderboard_v2");
}

TEST(CliPredict, DefaultModelJsonHasPhasesThatSum) {
  const Result r = run("predict --model llama-3.1-8b --gpu a100-80gb-sxm --batch 2 --prompt 512 --gen 64 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("predictor"), "llmco2");
  for (const char* q : {"energy_j", "latency_s"}) {
    const auto& v = j.at(q);
    EXPECT_GT(v.at("prefill").get<double>(), 0);
    EXPECT_GT(v.at("decode").get<double>(), 0);
    EXPECT_NEAR(v.at("total").get<double>(), v.at("prefill").get<double>() + v.at("decode").get<double>(),
                1e-9 * v.at("total").get<double>());
  }
}

TEST(CliPredict, SimPredictorIsTheNoiselessSimulator) {
  const std::string request = "--model qwen2-7b --gpu l4 --gpus 2 --batch 1 --prompt 300 --gen 20 --format json";
  const auto p = nlohmann::json::parse(run("predict --predictor sim " + request).out);
  const auto s = nlohmann::json::parse(run("simulate " + request).out);
  EXPECT_DOUBLE_EQ(p.at("energy_j").at("total").get<double>(), s.at("energy_j").at("total").get<double>());
  EXPECT_DOUBLE_EQ(p.at("latency_s").at("decode").get<double>(), s.at("latency_s").at("decode").get<double>());
}

TEST(CliPredict, BadModelFilesAreCleanErrors) {
  const std::string garbage = testing::TempDir() + "/garbage.model";
  std::ofstream(garbage) << "not a model";
  expect_clean_error("predict --model-file " + garbage, garbage + ": not an llmco2 model file");
  expect_clean_error("predict --model-file /no/such.model", "/no/such.model");
}

TEST(CliTrain, TrainsAModelThatPredictAnswersWith) {
  // Sample, label, train two epochs in llmco2-train (exec'd by llmco2 train), then predict with the file.
  const std::string dir = testing::TempDir() + "/llmco2_train_" + std::to_string(getpid());
  ASSERT_EQ(run("sample --count 120 --models qwen2-0.5b,gemma-2b --gpus l4 --seed 3 --out " + dir + "-plan.csv").exit_code, 0);
  ASSERT_EQ(run("simulate --plan " + dir + "-plan.csv --out " + dir + "-data.csv").exit_code, 0);
  const Result t = run("train --data " + dir + "-data.csv --out " + dir + ".model --epochs 2 --quiet");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const Result p = run("predict --model-file " + dir + ".model --model qwen2-0.5b --gpu l4 --format json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_GT(nlohmann::json::parse(p.out).at("energy_j").at("total").get<double>(), 0);
  expect_clean_error("train --data /no/such.csv --out " + dir + "-x.model", "/no/such.csv");
}

}  // namespace
}  // namespace llmco2
