// The llmco2 binary end to end: JSON/DOT output and one clear stderr line with exit code 2 for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/run_cli.h"

namespace {

using llmco2::testing_support::Result;

Result run(const std::string& args, const std::string& env = "") {
  return llmco2::testing_support::run_llmco2(args, env);
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
      for (const char* key :
           {"kernel", "type", "ops", "mem_bytes", "weight_bytes", "net_bytes", "perf_ops_per_s", "bound"})
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
  EXPECT_EQ(lines(models.out), 77);  // header + 76 configs
  const Result gpus = run("gpus --format json");
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  EXPECT_EQ(nlohmann::json::parse(gpus.out).size(), 30u);
}

TEST(Cli, BadInputIsOneLineAndExitCode2) {
  expect_clean_error("graph --model llama-3.1-9b", "did you mean llama-3.1-8b");
  expect_clean_error("predict --batc 4", "did you mean --batch");
  expect_clean_error("graph --gpu h1000", "unknown GPU 'h1000'");
  expect_clean_error("graph --model " + std::string(LLMCO2_TESTDATA) + "/configs/missing_hidden.json",
                     "missing_hidden.json: missing key 'hidden_size'");
  expect_clean_error("graph --model " + std::string(LLMCO2_TESTDATA) + "/configs/truncated.json", "malformed JSON");
  const std::string configs = std::string(LLMCO2_TESTDATA) + "/configs/";
  expect_clean_error("graph --model " + configs + "bad_hybrid_pattern.json",
                     "bad_hybrid_pattern.json: key 'hybrid_override_pattern' has 'E' at layer 2");
  expect_clean_error("graph --model " + configs + "mla_missing_rope_dim.json",
                     "mla_missing_rope_dim.json: missing key 'qk_rope_head_dim'");
  expect_clean_error("graph --model " + configs + "neox_bad_rotary_pct.json",
                     "neox_bad_rotary_pct.json: key 'rotary_pct' must be above 0 and at most 1, found 1.5");
  expect_clean_error("graph --model " + configs + "llama4_bad_no_rope_layers.json",
                     "llama4_bad_no_rope_layers.json text_config: key 'no_rope_layers' must list 4 flags, found 3");
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

// `calibrate --fit-only --rows-out`: a quick fit on a folder of two measured rows writes the fitted parameters and one
// CSV line per row with the measured values as given and a positive fitted prediction; no held-out fit ran, so the
// held-out columns are empty.
TEST(CliCalibrate, FitOnlyWritesEveryRowWithItsMeasuredAndFittedValues) {
  const std::string dir = testing::TempDir() + "/calibrate_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/mini.csv") << "source,model,gpu,gpus,engine,batch,prompt_tokens,gen_tokens,measures,"
                                      "energy_total_j,latency_total_s\n"
                                      "mini,llama-3.1-8b,h100-sxm,1,vllm,1,512,128,isolated,400,1.2\n"
                                      "mini,llama-3.1-8b,a100-80gb-sxm,1,vllm,4,256,64,fixed_batch,600,1.5\n";
  const Result r = run("calibrate --fit-only --max-evaluations 10 --data " + dir + " --params-out " + dir +
                       "/params.json --rows-out " + dir + "/rows.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/params.json"));
  std::ifstream in(dir + "/rows.csv");
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("source,source_ref,model,gpu,gpus,dtype,engine,measures,batch,prompt_tokens,gen_tokens,"
                         "energy_measured_j,energy_fit_j,energy_held_out_j,",
                         0),
            0u)
      << header;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream cells_in(line);
    for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][3], "h100-sxm");
  EXPECT_EQ(rows[0][11], "400");         // energy_measured_j as given
  EXPECT_GT(std::stod(rows[0][12]), 0);  // energy_fit_j
  EXPECT_TRUE(rows[0][13].empty());      // no leave-one-source-out fit ran
  EXPECT_EQ(rows[1][15], "1.5");         // latency_measured_s as given
  EXPECT_GT(std::stod(rows[1][16]), 0);  // latency_fit_s
  std::filesystem::remove_all(dir);
}

// A site whose H100 runs every request 1.25x slower than the global parameters say, at the same power: its profile
// (fitted on 8 rows) must make predict --site slower by most of that, the prior keeping it at or under 1.25x; a bad
// profile is one line and exit code 2.
TEST(CliCalibrate, SiteProfileFittedOnSlowerRowsSlowsPredictions) {
  const std::string dir = testing::TempDir() + "/site_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream csv(dir + "/site.csv");
  csv << "source,model,gpu,gpus,engine,batch,prompt_tokens,gen_tokens,measures,energy_total_j,latency_total_s\n";
  for (int batch : {1, 16})
    for (int prompt : {256, 2048})
      for (int gen : {64, 256}) {
        const std::string shape = fmt::format("--batch {} --prompt {} --gen {}", batch, prompt, gen);
        const Result sim = run("simulate --model llama-3.1-8b --gpu h100-sxm --engine vllm --format json " + shape);
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        const auto j = nlohmann::json::parse(sim.out);
        csv << fmt::format("lab,llama-3.1-8b,h100-sxm,1,vllm,{},{},{},{},{},{}\n", batch, prompt, gen,
                           batch == 1 ? "isolated" : "fixed_batch", 1.25 * j.at("energy_j").at("total").get<double>(),
                           1.25 * j.at("latency_s").at("total").get<double>());
      }
  csv.close();
  const Result fit = run("calibrate --site lab --data " + dir + "/site.csv --site-out " + dir + "/site-lab.json");
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("| h100-sxm | compute_scale |"), std::string::npos) << fit.out;
  const std::string request =
      "predict --model llama-3.1-8b --gpu h100-sxm --batch 4 --prompt 1024 --gen 128 --scope gpu --format json";
  const Result global = run(request), site = run(request + " --site " + dir + "/site-lab.json");
  ASSERT_EQ(site.exit_code, 0) << site.err;
  const double ratio = nlohmann::json::parse(site.out).at("latency_s").at("total").get<double>() /
                       nlohmann::json::parse(global.out).at("latency_s").at("total").get<double>();
  EXPECT_GT(ratio, 1.12);
  EXPECT_LE(ratio, 1.26);
  const auto said = nlohmann::json::parse(site.out).at("site");
  EXPECT_EQ(said.at("name"), "lab");
  EXPECT_EQ(said.at("corrections").size(), 4u);  // compute, memory and power of h100-sxm, host of vllm
  // Its rows pin the H100's corrections down: the setup is calibrated on the site, and the answer says so (issue 42).
  const auto evidence = nlohmann::json::parse(site.out).at("evidence");
  EXPECT_EQ(evidence.at("label"), "calibrated");
  EXPECT_EQ(evidence.at("site"), "lab");
  EXPECT_EQ(evidence.at("reason").get<std::string>().rfind("calibrated on site lab: 8 of its rows on h100-sxm", 0), 0u)
      << evidence.at("reason");
  EXPECT_TRUE(nlohmann::json::parse(global.out).at("evidence").at("site").is_null());
  // Another GPU under another engine: nothing of the profile applies, and the answer says so.
  const Result other = run("predict --model llama-3.1-8b --gpu a100-80gb-sxm --engine sglang --site " + dir +
                           "/site-lab.json --format json");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_TRUE(nlohmann::json::parse(other.out).at("site").at("corrections").empty());
  EXPECT_TRUE(nlohmann::json::parse(other.out).at("evidence").at("site").is_null());
  EXPECT_NE(other.err.find("site profile lab has no correction for a100-80gb-sxm or engine sglang"), std::string::npos)
      << other.err;
  std::ofstream(dir + "/bad.json") << R"({"site": "x", "corrections": [{"target": "h100-sxm",
    "parameter": "compute_scale", "value": 3}]})";
  const Result bad = run(request + " --site " + dir + "/bad.json");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.json: corrections[0]: value = 3 is outside [0.7, 1.3]"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
  std::filesystem::remove_all(dir);
}

// plan-site prints the runs as the commands of the engine's benchmark, and a tool that cannot measure the engine is
// one line and exit 2.
TEST(CliPlanSite, PrintsTheRunsAsBenchmarkCommands) {
  const Result r = run("plan-site --model llama-3.1-8b --gpu h100-sxm --engine trt-llm --minutes 10 --name lab");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("runs of trtllm-bench"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trtllm-bench --model meta-llama/Llama-3.1-8B throughput --dataset lab-data-c"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("llmco2 import-bench --gpu h100-sxm --gpus 1 --engine trt-llm --out lab.csv lab-c*.json"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("llmco2 calibrate --site lab --data lab.csv"), std::string::npos) << r.out;
  expect_clean_error("plan-site --model llama-3.1-8b --gpu h100-sxm --tool measure",
                     "llmco2 measure's reference runner runs --engine hf-transformers, not vllm");
  expect_clean_error("plan-site --model llama-3.1-8b --gpu h100-sxm --minutes 0.01", "no configuration fits");
}

TEST(CliPredict, DefaultModelJsonHasPhasesThatSum) {
  const Result r =
      run("predict --model llama-3.1-8b --gpu a100-80gb-sxm --batch 2 --prompt 512 --gen 64 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The default is the calibrated simulator (docs/predictor.md: closer than the GNN on held-out sources), so the
  // same request with --predictor sim is the same document.
  EXPECT_EQ(j.at("predictor"), "sim");
  const Result s =
      run("predict --model llama-3.1-8b --gpu a100-80gb-sxm --batch 2 --prompt 512 --gen 64 --format json "
          "--predictor sim");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(r.out, s.out);
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
  const auto p = nlohmann::json::parse(run("predict --predictor sim --scope gpu " + request).out);
  const auto s = nlohmann::json::parse(run("simulate " + request).out);
  EXPECT_DOUBLE_EQ(p.at("energy_j").at("total").get<double>(), s.at("energy_j").at("total").get<double>());
  EXPECT_DOUBLE_EQ(p.at("latency_s").at("decode").get<double>(), s.at("latency_s").at("decode").get<double>());
}

// Node scope on the round-number test node (tests/testdata/nodes/test_node.json, see host_power_test.cc): a phase of
// GPU energy E over t s on 1 of its 8 GPUs (p = E / t W) meters (8 p + host) / efficiency / 8 x t, where host = CPUs
// 200 + 8 busy cores x 4 W + DIMMs 10 x 5 W + 450 W fixed + fans max(100, 1000 (heat / 8000)^3) and the efficiency
// is interpolated on 90/94/96/92% at 10/20/50/100% of 10 kW.
TEST(CliPredict, NodeScopeMetersTheNodesWallPowerShare) {
  const std::string request = "--model llama-3.1-8b --gpu h100-sxm --batch 4 --prompt 512 --gen 64 --format json";
  const auto gpu = nlohmann::json::parse(run("predict --predictor sim --scope gpu " + request).out);
  const Result r = run("predict --predictor sim --scope node --node " + std::string(LLMCO2_TESTDATA) +
                       "/nodes/test_node.json " + request);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto node = nlohmann::json::parse(r.out);
  EXPECT_EQ(node.at("energy_scope").get<std::string>(), "node");
  EXPECT_EQ(node.at("node").get<std::string>(), "test-node");
  for (const char* phase : {"prefill", "decode"}) {
    const double e = gpu.at("energy_j").at(phase), t = gpu.at("latency_s").at(phase), p = e / t;
    const double rest = 200 + 8 * 4 + 10 * 5 + 450, heat = rest + 8 * p;
    const double dc = 8 * p + rest + std::max(100.0, 1000 * std::pow(heat / 8000, 3)), load = dc / 10000;
    const double eff = load <= 0.2   ? 0.90 + 0.4 * (load - 0.1)
                       : load <= 0.5 ? 0.94 + 0.02 * (load - 0.2) / 0.3
                                     : 0.96 - 0.08 * (load - 0.5);
    EXPECT_NEAR(node.at("energy_j").at(phase).get<double>(), dc / eff / 8 * t, 1e-9 * e) << phase;
  }
  EXPECT_DOUBLE_EQ(node.at("energy_j").at("total").get<double>(),
                   node.at("energy_j").at("prefill").get<double>() + node.at("energy_j").at("decode").get<double>());
  expect_clean_error("predict --scope node --node dgx-h100 --gpu a100-80gb-sxm",
                     "--node dgx-h100: that node holds h100-sxm GPUs, not a100-80gb-sxm");
  expect_clean_error("predict --scope gpu --node dgx-h100", "--node dgx-h100: only used with --scope node");
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
  ASSERT_EQ(
      run("sample --count 120 --models qwen2-0.5b,gemma-2b --gpus l4 --seed 3 --out " + dir + "-plan.csv").exit_code,
      0);
  ASSERT_EQ(run("simulate --plan " + dir + "-plan.csv --out " + dir + "-data.csv").exit_code, 0);
  const Result t = run("train --data " + dir + "-data.csv --out " + dir + ".model --epochs 2 --quiet");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const Result p = run("predict --model-file " + dir + ".model --model qwen2-0.5b --gpu l4 --format json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_GT(nlohmann::json::parse(p.out).at("energy_j").at("total").get<double>(), 0);
  expect_clean_error("train --data /no/such.csv --out " + dir + "-x.model", "/no/such.csv");
}

TEST(CliTrain, ShortensOpenMpSpinningUnlessTheUserChoseAPolicy) {
  // A copy of llmco2 beside a stand-in llmco2-train that prints the two variables libgomp reads.
  const std::filesystem::path dir = testing::TempDir() + "/llmco2_spin_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(LLMCO2_BIN, dir / "llmco2", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "llmco2-train") << "#!/bin/sh\necho \"$GOMP_SPINCOUNT|$OMP_WAIT_POLICY\"\n";
  std::filesystem::permissions(dir / "llmco2-train", std::filesystem::perms::owner_all);
  const auto train = [&](const std::string& env) {
    return llmco2::testing_support::run_command("env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY " + env + " " +
                                                (dir / "llmco2").string() + " train --data x.csv")
        .out;
  };
  EXPECT_EQ(train(""), "10000|\n");
  EXPECT_EQ(train("GOMP_SPINCOUNT=5"), "5|\n");
  EXPECT_EQ(train("OMP_WAIT_POLICY=active"), "|active\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmco2

TEST(CliCarbon, PredictJsonCarriesCarbonAndItsInputs) {
  const Result r = run("predict " + kRequest + " --region gcp:us-central1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ci_g_per_kwh").get<double>(), 430);  // Google's Council Bluffs figure
  EXPECT_EQ(j.at("pue").get<double>(), 1.10);          // Google's fleet PUE
  EXPECT_EQ(j.at("embodied_basis"), "llmcarbon");
  EXPECT_EQ(j.at("lifetime_years").get<double>(), 5);
  EXPECT_NEAR(j.at("embodied_kg_per_gpu").get<double>(), 46.652, 1e-9);
  for (const char* phase : {"prefill", "decode", "total"}) {
    const double energy = j["energy_j"][phase], latency = j["latency_s"][phase];
    EXPECT_NEAR(j["co2_g"]["operational"][phase].get<double>(), energy / 3.6e6 * 1.10 * 430, 1e-12) << phase;
    EXPECT_NEAR(j["co2_g"]["embodied"][phase].get<double>(), 46652.0 * latency / 157680000.0, 1e-15) << phase;
    EXPECT_NEAR(j["co2_g"]["total"][phase].get<double>(),
                j["co2_g"]["operational"][phase].get<double>() + j["co2_g"]["embodied"][phase].get<double>(), 1e-15);
    EXPECT_NEAR(j["energy_wh"][phase].get<double>(), energy / 3600, 1e-12);
  }
}

TEST(CliCarbon, CiOverridesTheRegionAndTheTableNamesTheBasis) {
  const Result r = run("predict " + kRequest + " --ci 100 --pue 1.5 --lifetime 4 --embodied-kg 200 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ci_g_per_kwh").get<double>(), 100);
  EXPECT_EQ(j.at("embodied_basis"), "user");
  const double energy = j["energy_j"]["total"], latency = j["latency_s"]["total"];
  EXPECT_NEAR(j["co2_g"]["operational"]["total"].get<double>(), energy / 3.6e6 * 1.5 * 100, 1e-12);
  EXPECT_NEAR(j["co2_g"]["embodied"]["total"].get<double>(), 200000.0 * latency / (4 * 365 * 86400.0), 1e-15);
  const Result table = run("predict " + kRequest + " --region FRA");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* text : {"operational CO2 (g)", "embodied CO2 (g)", "total CO2 (g)", "energy (Wh)",
                           "embodied basis llmcarbon", "France (FRA), 2023", "PUE 1 (unknown"})
    EXPECT_NE(table.out.find(text), std::string::npos) << text << "\n" << table.out;
}

TEST(CliCarbon, BadCarbonInputIsOneLine) {
  expect_clean_error("predict " + kRequest + " --region atlantis", "unknown region 'atlantis'");
  expect_clean_error("predict " + kRequest + " --pue -1", "--pue");
  expect_clean_error("predict " + kRequest + " --pue lots", "--pue");
  expect_clean_error("predict " + kRequest + " --ci -5", "--ci");
  expect_clean_error("predict " + kRequest + " --lifetime 0", "--lifetime");
  expect_clean_error("predict " + kRequest + " --embodied-basis vendor",
                     "no GPU file in the catalog carries a sourced vendor product carbon footprint");
}

// A GPU without a sourced embodied figure still predicts: energy, latency and operational CO2, embodied unknown.
TEST(CliCarbon, AGpuWithoutAnEmbodiedFigureStillPredicts) {
  const Result r = run("predict --gpu b200 --model llama-3.1-8b --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["energy_j"]["total"].get<double>(), 0);
  EXPECT_TRUE(j["co2_g"]["embodied"].is_null());
  EXPECT_TRUE(j.contains("co2_note"));
}

TEST(CliTrace, ScoresTheGoodLinesAndReportsTheBadOnes) {
  const std::string dir = testing::TempDir() + "/cli_trace";
  std::filesystem::create_directories(dir);
  {
    std::ofstream log(dir + "/log.csv");
    log << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.5,512,64\n2023-11-16 18:00:01,x,1\n"
           "2023-11-16 18:10:00,1024,128\n";
  }
  const Result r = run("trace " + dir + "/log.csv --out " + dir + "/report --by-request " + dir +
                       "/requests.csv --format json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("requests"), 2);
  EXPECT_EQ(j.at("skipped_lines"), 1);
  EXPECT_TRUE(std::filesystem::exists(dir + "/report/report.md"));
  std::ifstream report(dir + "/report/report.md");
  const std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("line 3: column 'ContextTokens'"), std::string::npos) << text;
  std::ifstream csv(dir + "/requests.csv");
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(csv), std::istreambuf_iterator<char>(), '\n'), 3);
  expect_clean_error("trace " + dir + "/missing.csv", "missing.csv");
  expect_clean_error("trace " + dir + "/log.csv --grid 3", "--grid");
}

// Issue 16: hostile inputs are one stderr line naming the file and key and exit code 2, never exit 3, a hang or a
// process killed for memory.
TEST(CliHostileInput, DevicesHugeNumbersAndHugeArchitecturesAreOneLineAndExitCode2) {
  const std::string dir = testing::TempDir() + "/cli_hostile";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  const auto llama = [](const std::string& layers, const std::string& hidden) {
    return R"({"model_type": "llama", "hidden_size": )" + hidden + R"(, "num_hidden_layers": )" + layers +
           R"(, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000})";
  };
  expect_clean_error("graph --model /dev/zero", "/dev/zero: not a regular file");
  expect_clean_error("graph --model " + write("overflow.json", llama("2", "1e999")),
                     "overflow.json: malformed JSON: a number too large for a double");
  expect_clean_error("graph --model " + write("deep.json", llama("1e9", "64")),
                     "deep.json: key 'num_hidden_layers' = 1000000000 is above the largest accepted, 1024");
  std::ifstream h100(std::string(LLMCO2_DATA) + "/gpus/h100-sxm.json");
  auto gpu = nlohmann::json::parse(h100);
  gpu["memory_bandwidth_gb_per_s"] = -3350;
  expect_clean_error("graph --gpu " + write("negative.json", gpu.dump()),
                     "negative.json: memory_bandwidth_gb_per_s = -3350 is outside [50, 20000]");
  // A file name that is not UTF-8 (bytes 0xff 0xfe) ended in exit code 3 when JSON output met it.
  expect_clean_error("predict --format json --model '" + write("\xff\xfe.json", llama("2", "64")) + "'",
                     ".json: the file name is not valid UTF-8");
  expect_clean_error("trace --format json '" + write("\xff.csv", "prompt_tokens,gen_tokens\n10,10\n") + "'",
                     ".csv: the file name is not valid UTF-8");
}

// Issue 16: one line dated years away made trace allocate 11-17 GB of timeline bins or write 1.5 GB of output.
TEST(CliTrace, ATimestampYearsAwayIsDroppedAndNamedOrKeptInBoundedBins) {
  const std::string dir = testing::TempDir() + "/cli_trace_outlier";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/log.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,512,64\n"
                                     "2023-11-16 18:10:00,1024,128\n2051-01-01 00:00:00,256,32\n"
                                     "2023-11-16 18:20:00,128,16\n";
  const Result dropped = run("trace " + dir + "/log.csv --out " + dir + "/dropped --format json --quiet");
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  const auto d = nlohmann::json::parse(dropped.out);
  EXPECT_EQ(d.at("requests"), 3);
  EXPECT_EQ(d.at("skipped_lines"), 1);
  EXPECT_EQ(d.at("hourly").size(), 1u);  // 18:00 to 18:20 on one day: one hour
  std::ifstream report(dir + "/dropped/report.md");
  const std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("line 4: timestamp"), std::string::npos) << text;
  EXPECT_NE(text.find("--keep-time-outliers keeps it"), std::string::npos) << text;
  // Kept: 27 years are 237,000 hours, above the 100,000-bin cap, so only the 2 hours with requests are listed.
  const Result kept =
      run("trace " + dir + "/log.csv --out " + dir + "/kept --format json --quiet --keep-time-outliers");
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const auto k = nlohmann::json::parse(kept.out);
  EXPECT_EQ(k.at("requests"), 4);
  EXPECT_EQ(k.at("hourly").size(), 2u);
}

TEST(CliTrace, BothAzureTracesWriteTheirReportsAndPlots) {
  for (const std::string name : {"code", "conv"}) {
    const std::string out = testing::TempDir() + "/azure_" + name;
    std::filesystem::remove_all(out);
    const Result r = run("trace " + std::string(LLMCO2_DATA) + "/azure/AzureLLMInferenceTrace_" + name +
                         ".csv --region USA --out " + out + " --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(name == "code" ? "8819 requests" : "19366 requests"), std::string::npos) << r.out;
    for (const char* file : {"report.md", "summary.json", "histogram.png", "timeline.png"})
      EXPECT_TRUE(std::filesystem::exists(out + "/" + file)) << name << " " << file;
  }
}

// Issue 17: --threads splits the reading of the log; the summary and the per-request CSV do not change by a byte.
TEST(CliTrace, ThreadsDoNotChangeTheOutput) {
  // The code trace 8 times over (70,552 requests, 2.6 MB: 3 blocks of 1 MiB, so 3 workers have work).
  std::ifstream code(std::string(LLMCO2_DATA) + "/azure/AzureLLMInferenceTrace_code.csv");
  std::string lines((std::istreambuf_iterator<char>(code)), {});
  const std::string header = lines.substr(0, lines.find('\n') + 1);
  lines = lines.substr(header.size()) + "\n";
  const std::string dir = testing::TempDir() + "/cli_trace_threads";
  const std::string log = dir + "-log.csv";
  {
    std::ofstream out(log);
    out << header;
    for (int i = 0; i < 8; ++i) out << lines;
  }
  std::string outputs[2];
  for (int threads : {1, 3}) {
    const std::string csv = dir + "-" + std::to_string(threads) + ".csv";
    const Result r = run("trace " + log + " --region USA --quiet --format json --threads " + std::to_string(threads) +
                         " --out " + dir + " --by-request " + csv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(csv);
    outputs[threads == 3] = r.out + std::string(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_NE(outputs[0].find("\"requests\": 70552"), std::string::npos);
  const Result compare1 = run("compare --trace " + log +
                              " --gpu-types h100-sxm,l4 --quiet --format json --threads 1 "
                              "--plot " +
                              dir + "-plot");
  const Result compare2 = run("compare --trace " + log +
                              " --gpu-types h100-sxm,l4 --quiet --format json --threads 2 "
                              "--plot " +
                              dir + "-plot");
  ASSERT_EQ(compare1.exit_code, 0) << compare1.err;
  EXPECT_EQ(compare1.out, compare2.out);
  expect_clean_error("trace " + log + " --threads -2", "--threads");
}

TEST(CliCompare, MarksTheLowestCarbonSetupMeetingTheObjective) {
  const std::string plots = testing::TempDir() + "/cli_compare";
  const Result r =
      run("compare --model llama-3.1-8b --prompt 1024 --gen 128 --gpu-types h100-sxm,a100-80gb-sxm "
          "--slo-ms 2500 --plot " +
          plots + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("setups").size(), 8u);
  int best = 0;
  double best_co2 = 0;
  for (const auto& s : j["setups"]) {
    if (s.value("best", false)) {
      ++best;
      best_co2 = s["co2_g"]["total"]["total"];
      EXPECT_LE(s["latency_s"]["total"].get<double>(), 2.5);
    }
  }
  ASSERT_EQ(best, 1);
  for (const auto& s : j["setups"]) {
    if (s.contains("latency_s") && s["latency_s"]["total"].get<double>() <= 2.5) {
      EXPECT_GE(s["co2_g"]["total"]["total"].get<double>(), best_co2);
    }
  }
  EXPECT_TRUE(std::filesystem::exists(plots + "/co2-total.png"));
  EXPECT_TRUE(std::filesystem::exists(plots + "/co2-per-gpu.png"));
  // The plots cover what the table shows: every setup, one line each in setups.csv.
  EXPECT_TRUE(std::filesystem::exists(plots + "/setups.png"));
  std::ifstream setups(plots + "/setups.csv");
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(setups), std::istreambuf_iterator<char>(), '\n'), 9);
  expect_clean_error("compare --slo-ms -3", "--slo-ms");
  expect_clean_error("compare --gpu-types nosuchgpu", "nosuchgpu");
}

TEST(CliServeSim, ReplaysALogWithIdleGapsAndWritesEveryRequest) {
  const std::string dir = testing::TempDir() + "/cli_serve_sim";
  std::filesystem::create_directories(dir);
  {
    std::ofstream log(dir + "/log.csv");
    log << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,512,64\n2023-11-16 18:00:00,256,32\n"
           "2023-11-16 18:00:01,x,1\n2023-11-16 18:01:00,1024,128\n";
  }
  const Result r = run("serve-sim " + dir +
                       "/log.csv --model llama-3.1-8b --gpu h100-sxm --replicas 2 --router "
                       "least-loaded --requests-out " +
                       dir + "/requests.csv --format json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["requests"]["completed"], 3);
  // The window runs from the first arrival to the last finish (a minute and a few seconds): 2 GPUs, mostly idle.
  const double window_s = j["window_s"].get<double>();
  EXPECT_GT(window_s, 60.0);
  EXPECT_LT(window_s, 65.0);
  EXPECT_NEAR(j["gpu_hours"].get<double>(), 2 * window_s / 3600, 1e-9);
  EXPECT_LT(j["utilisation"].get<double>(), 0.1);
  const auto& e = j["energy_j"];
  EXPECT_NEAR(e["total"].get<double>(), e["busy"].get<double>() + e["idle"].get<double>(), 1e-6);
  EXPECT_LE(j["per_request"]["ttft_s"]["p50"].get<double>(), j["per_request"]["ttft_s"]["p99"].get<double>());
  std::ifstream csv(dir + "/requests.csv");
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(csv), std::istreambuf_iterator<char>(), '\n'), 4);
  for (const auto& entry : std::filesystem::directory_iterator(dir))  // no temporary file left behind
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
  expect_clean_error("serve-sim " + dir + "/missing.csv", "missing.csv");
  expect_clean_error("serve-sim " + dir + "/log.csv --router random", "--router");
  expect_clean_error("serve-sim " + dir + "/log.csv --replicas 0", "--replicas");
  expect_clean_error("serve-sim " + dir + "/log.csv --model llama-3.1-70b --gpu l4", "does not fit");
  // Disaggregated serving's flags: P:D counts, no --replicas beside them, no decode flags without them, a rate only
  // for generated requests.
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --disaggregate 2", "expected P:D");
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --disaggregate 1:0", "expected P:D");
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --disaggregate 1:x2", "expected P:D");
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --disaggregate 1:2 --replicas 2", "--replicas 2 with");
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --decode-gpus 2", "give --disaggregate P:D");
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --request-rate 4", "--request-rate paces");
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --disaggregate 1:1 --decode-gpu nosuchgpu", "nosuchgpu");
}

TEST(CliServeSim, PlotsTheTimelineChargesAnIntensityProfileAndRefusesAnUnsortedLog) {
  const std::string dir = testing::TempDir() + "/cli_serve_sim_plots";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/log.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:59:58,512,64\n"
                                     "2023-11-16 19:00:30,256,32\n";
  std::ofstream(dir + "/ci.csv") << "timestamp,g_per_kwh\n2023-11-16 18:00:00,500\n2023-11-16 19:00:00,0\n";
  const Result r = run("serve-sim " + dir + "/log.csv --model llama-3.1-8b --gpu h100-sxm --ci-profile " + dir +
                       "/ci.csv --plot " + dir + "/plots --bin-s 10 --format json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Only the first two seconds (before 19:00, at 500 g/kWh) emit: the rest of the window is at 0 g/kWh. They hold
  // the first request's iterations (under a second) and idle: at most 2 s at the TDP.
  const double first_two_s_max_j = 2.0 * 700;
  EXPECT_GT(j["co2_g"]["operational"]["total"].get<double>(), 0.0);
  EXPECT_LT(j["co2_g"]["operational"]["total"].get<double>(), first_two_s_max_j / 3.6e6 * 500 * 1.6 + 1e-9);
  EXPECT_EQ(j["ci_profile"], dir + "/ci.csv");
  std::ifstream timeline(dir + "/plots/timeline.csv");
  const std::string header((std::istreambuf_iterator<char>(timeline)), std::istreambuf_iterator<char>());
  EXPECT_EQ(header.substr(0, header.find('\n')), "start_s,power_w,running,waiting,kv_share,busy_share");
  EXPECT_GE(std::count(header.begin(), header.end(), '\n'), 4);  // 10 s bins over a window of about 40 s
  // The same window in one bin of 60 s: the timeline is written, and the run says to pass a smaller --bin-s.
  const Result coarse = run("serve-sim " + dir + "/log.csv --model llama-3.1-8b --gpu h100-sxm --plot " + dir +
                            "/coarse --bin-s 60 --quiet");
  ASSERT_EQ(coarse.exit_code, 0) << coarse.err;
  EXPECT_NE(coarse.err.find("1 bin(s) of --bin-s 60 s, too few points for a timeline; pass a smaller --bin-s"),
            std::string::npos)
      << coarse.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/coarse/timeline.csv"));
  std::ofstream(dir + "/unsorted.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 19:00:00,10,2\n"
                                          "2023-11-16 18:00:00,10,2\n";
  expect_clean_error("serve-sim " + dir + "/unsorted.csv --quiet", "sorted by TIMESTAMP");
  std::ofstream(dir + "/bad_ci.csv") << "timestamp,g_per_kwh\n2023-11-16 18:00:00,lots\n";
  expect_clean_error("serve-sim " + dir + "/log.csv --quiet --ci-profile " + dir + "/bad_ci.csv", "bad_ci.csv:2");
  expect_clean_error("serve-sim " + dir + "/unsorted.csv --quiet", "unsorted.csv:3");
  // One request dated years after the rest: refused (its idle gap would dominate), replayed with the flag.
  std::ofstream(dir + "/outlier.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,10,2\n"
                                         "2023-11-16 18:00:01,10,2\n2031-01-01 00:00:00,10,2\n";
  expect_clean_error("serve-sim " + dir + "/outlier.csv --model llama-3.1-8b --gpu h100-sxm --quiet",
                     "outlier.csv:4: TIMESTAMP lies");
  EXPECT_EQ(run("serve-sim " + dir + "/outlier.csv --model llama-3.1-8b --gpu h100-sxm --quiet --keep-time-outliers")
                .exit_code,
            0);
}

TEST(CliServeValidate, ReplaysMeasuredLoadTestsAndScoresThem) {
  const std::string dir = testing::TempDir() + "/cli_serve_validate";
  std::filesystem::create_directories(dir);
  {  // the header and two ML.ENERGY v3 rows of Llama-3.1-8B on one H100 (max_num_seqs 8 and 16)
    std::ifstream in(std::string(LLMCO2_DATA) + "/measured/mlenergy-v3.csv");
    std::filesystem::create_directories(dir + "/data");
    std::ofstream out(dir + "/data/mlenergy-v3.csv");
    std::string line;
    int kept = 0;
    for (int n = 0; std::getline(in, line); ++n)
      if (n == 0 || (line.find(",llama-3.1-8b,") != std::string::npos &&
                     line.find(",h100-sxm,1,") != std::string::npos && kept++ < 2))
        out << line << "\n";
  }
  const Result r =
      run("serve-validate --data " + dir + "/data --held-out none --quiet --rows-out " + dir + "/rows.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| h100-sxm | llama-3.1-8b | 2 |"), std::string::npos) << r.out;
  std::ifstream rows(dir + "/rows.csv");
  std::string header;
  std::getline(rows, header);
  EXPECT_EQ(header.find("source_ref,model,gpu,task"), 0u);
  expect_clean_error("serve-validate --data " + dir + "/data --held-out maybe", "--held-out");
}

TEST(CliServeValidate, ReplaysTheMlperfNodeRunsAtNodeScopeWithRowsOut) {
  const std::string dir = testing::TempDir() + "/cli_serve_validate_mlperf";
  std::filesystem::create_directories(dir + "/data");
  std::filesystem::copy_file(std::string(LLMCO2_DATA) + "/measured/mlperf-power.csv", dir + "/data/mlperf-power.csv",
                             std::filesystem::copy_options::overwrite_existing);
  long runs = -1;  // every data line of the imported file is one run at node scope, replayed unless its settings
  {                // are unknown
    std::ifstream in(dir + "/data/mlperf-power.csv");
    for (std::string line; std::getline(in, line);)
      runs += !line.empty() && line.find("run_settings_unknown") == std::string::npos;
  }
  ASSERT_GT(runs, 0);
  const Result r =
      run("serve-validate --data " + dir + "/data --source mlperf-power --quiet --rows-out " + dir + "/rows.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| **all** | **all** | " + std::to_string(runs) + " |"), std::string::npos) << r.out;
  std::ifstream rows(dir + "/rows.csv");
  std::string line;
  std::getline(rows, line);
  EXPECT_EQ(line.find("source_ref,node,gpu,model,benchmark,scenario"), 0u);
  long written = 0;
  while (std::getline(rows, line)) {
    ++written;
    const size_t node_at = line.find(',') + 1;  // the second column: the node, each one a file of data/nodes
    const std::string node = line.substr(node_at, line.find(',', node_at) - node_at);
    EXPECT_TRUE(std::filesystem::is_regular_file(std::string(LLMCO2_DATA) + "/nodes/" + node + ".json")) << line;
  }
  EXPECT_EQ(written, runs);
}

TEST(CliCompare, PlansCapacityForLatencyObjectivesOnATrace) {
  const std::string dir = testing::TempDir() + "/cli_capacity";
  std::filesystem::create_directories(dir);
  {
    std::ofstream log(dir + "/log.csv");
    log << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    for (int i = 0; i < 40; ++i) log << "2023-11-16 18:00:" << (10 + i / 4) << ",1500,200\n";
  }
  const Result r = run("compare --trace " + dir +
                       "/log.csv --model llama-3.1-8b --gpu h100-sxm --gpu-types "
                       "h100-sxm,a100-80gb-sxm --slo-ttft-ms 2000 --slo-tpot-ms 60 --tp-degrees 1,2 --plot " +
                       dir + "/plot --format json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["ranked"].size(), 2u);
  for (const auto& c : j["ranked"]) {
    EXPECT_TRUE(c["meets_slo"].get<bool>());
    EXPECT_LE(c["p95_ttft_s"].get<double>(), 2.0);
    EXPECT_LE(c["p95_tpot_s"].get<double>(), 0.060);
  }
  EXPECT_LE(j["ranked"][0]["energy_j"]["total"].get<double>(), j["ranked"][1]["energy_j"]["total"].get<double>());
  EXPECT_TRUE(std::filesystem::exists(dir + "/plot/capacity.csv"));
  // Prefix caching in the plan: 90% of every prompt one shared prompt costs less energy on each GPU type than none.
  const std::string plan = "compare --trace " + dir +
                           "/log.csv --model llama-3.1-8b --gpu h100-sxm --gpu-types h100-sxm,a100-80gb-sxm "
                           "--slo-ttft-ms 2000 --slo-tpot-ms 60 --tp-degrees 1 --format json --quiet";
  const Result shared = run(plan + " --prefix-share 0.9 --router session"), plain = run(plan + " --no-prefix-caching");
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto js = nlohmann::json::parse(shared.out), jp = nlohmann::json::parse(plain.out);
  ASSERT_EQ(js["ranked"].size(), jp["ranked"].size());
  for (const auto& s : js["ranked"])
    for (const auto& p : jp["ranked"])
      if (s["gpu"] == p["gpu"] && s["replicas"] == p["replicas"]) {
        EXPECT_LT(s["energy_j"]["total"].get<double>(), p["energy_j"]["total"].get<double>()) << s["gpu"];
      }
  expect_clean_error(plan + " --router nearest", "--router: expected round-robin, least-loaded or session");
  // Disaggregated deployments searched beside the co-located ones: every tried one names its pools, holds P + D GPUs
  // per unit, and the table writes them P:D.
  const Result split = run(plan + " --disaggregate 1:1");
  ASSERT_EQ(split.exit_code, 0) << split.err;
  const auto jd = nlohmann::json::parse(split.out);
  int disaggregated = 0;
  for (const auto& c : jd["tried"])
    if (c.contains("gpus") && c["decode_replicas"].get<int>() > 0) {
      ++disaggregated;
      EXPECT_EQ(c["replicas"], c["decode_replicas"]);
      EXPECT_EQ(c["gpus"].get<int>(), 2 * c["replicas"].get<int>());
    }
  EXPECT_GT(disaggregated, 0);
  const Result split_table = run(plan.substr(0, plan.find(" --format json")) + " --quiet --disaggregate 1:1");
  EXPECT_NE(split_table.out.find("replicas P:D = prefill:decode"), std::string::npos) << split_table.out;
  expect_clean_error(plan + " --disaggregate 1", "expected P:D");
  // Cloud list prices (data/prices): AWS's p5.48xlarge (55.04 $/h, 8 H100s) and p4de.24xlarge (27.44705 $/h, 8 A100
  // 80 GB) price each deployment's GPU-hours, unless the user prices a type; with no kWh price that is the whole bill.
  const Result priced = run(plan + " --cloud-prices aws --usd-per-gpu-hour a100-80gb-sxm=2 --rank-by usd");
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  const auto jprice = nlohmann::json::parse(priced.out);
  std::map<std::string, double> per_gpu_hour;
  for (const auto& p : jprice["prices"]) per_gpu_hour[p["gpu"]] = p["usd_per_gpu_hour"].get<double>();
  EXPECT_DOUBLE_EQ(per_gpu_hour.at("h100-sxm"), 55.04 / 8);
  EXPECT_DOUBLE_EQ(per_gpu_hour.at("a100-80gb-sxm"), 2.0);
  for (const auto& c : jprice["ranked"])
    EXPECT_NEAR(c["usd"].get<double>(), c["gpu_hours"].get<double>() * per_gpu_hour.at(c["gpu"]), 1e-9) << c["gpu"];
  expect_clean_error(plan + " --cloud-prices oracle", "--cloud-prices: expected one of aws, azure, gcp");
  expect_clean_error("compare --trace " + dir + "/log.csv --cloud-prices aws", "apply to capacity planning");
  expect_clean_error("compare --trace " + dir + "/log.csv --disaggregate 1:1", "apply to capacity planning");
  expect_clean_error("compare --trace " + dir + "/log.csv --prefix-share 0.5", "apply to capacity planning");
  expect_clean_error("compare --trace " + dir + "/log.csv --slo-ttft-ms 100 --tp-degrees 0", "--tp-degrees");
  // The same log with one request dated 2031: dropped as a time outlier and named, so the plan is the same one.
  std::filesystem::copy_file(dir + "/log.csv", dir + "/outlier.csv", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir + "/outlier.csv", std::ios::app) << "2031-01-01 00:00:00,1500,200\n";
  const Result o = run("compare --trace " + dir +
                       "/outlier.csv --model llama-3.1-8b --gpu h100-sxm --gpu-types "
                       "h100-sxm,a100-80gb-sxm --slo-ttft-ms 2000 --slo-tpot-ms 60 --tp-degrees 1,2 --plot " +
                       dir + "/plot2 --format json --quiet");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("1 request(s)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("line 42:"), std::string::npos) << o.err;  // header + 40 requests, then the outlier
  const auto jo = nlohmann::json::parse(o.out);
  ASSERT_EQ(jo["ranked"].size(), 2u);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(jo["ranked"][i]["energy_j"]["total"].get<double>(), j["ranked"][i]["energy_j"]["total"].get<double>());
}

// What `readelf -d` says of a program's dynamic section.
std::string dynamic_section(const std::string& program) {
  FILE* pipe = popen(("readelf -d " + program + " 2>&1").c_str(), "r");
  std::string dynamic;
  if (pipe == nullptr) return dynamic;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) dynamic.append(buffer.data(), n);
  pclose(pipe);
  return dynamic;
}

// Start-up: libxgboost is loaded only when a tree predictor is asked for (predictor/xgboost_library.h), by
// llmco2-dynamic, and the HTTP server's libraries only by llmco2-serve. llmco2 is static (no dynamic section) or
// needs neither; llmco2-dynamic needs neither (no DT_NEEDED entry), the GNN predicts with the library unloadable,
// and DeepEn then says what is missing in one line.
// --version prints the project's version (CMake's PROJECT_VERSION) and the checksums the answers rest on, as the API's
// versions() gives them.
TEST(CliStartup, VersionPrintsTheProjectVersionAndTheDataChecksum) {
  const Result r = run("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(std::string("llmco2 ") + LLMCO2_PROJECT_VERSION + "\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\ndata "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predictor llmco2 "), std::string::npos) << r.out;
}

TEST(CliStartup, XgboostIsLoadedOnlyForTreePredictors) {
  const std::string llmco2 = dynamic_section(LLMCO2_BIN), dynamic = dynamic_section(LLMCO2_DYNAMIC_BIN);
  EXPECT_TRUE(llmco2.find("There is no dynamic section") != std::string::npos ||
              (llmco2.find("(NEEDED)") != std::string::npos && llmco2.find("xgboost") == std::string::npos))
      << llmco2;
  ASSERT_NE(dynamic.find("(NEEDED)"), std::string::npos) << "readelf printed no dynamic section";
  EXPECT_EQ(dynamic.find("xgboost"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("httplib"), std::string::npos) << dynamic;  // serve runs in llmco2-serve
  EXPECT_EQ(dynamic.find("libssl"), std::string::npos) << dynamic;
  const std::string missing = "LLMCO2_XGBOOST_LIBRARY=/nonexistent/libxgboost.so";
  const Result gnn = run("predict --format json", missing);
  EXPECT_EQ(gnn.exit_code, 0) << gnn.err;
  const Result deepen = run("predict --predictor deepen", missing);
  EXPECT_EQ(deepen.exit_code, 2);
  EXPECT_NE(deepen.err.find("the tree predictors need libxgboost, which could not be loaded"), std::string::npos)
      << deepen.err;
  EXPECT_EQ(std::count(deepen.err.begin(), deepen.err.end(), '\n'), 1) << deepen.err;
  EXPECT_EQ(run("predict --predictor deepen --format json").exit_code, 0);
}

// llmco2 hands the commands that dlopen to llmco2-dynamic with the same arguments; both print the same bytes, for
// those and for the rest.
TEST(CliStartup, LlmcoTwoAndLlmcoTwoDynamicAnswerAlike) {
  const auto dynamic = [](const std::string& args) {
    return llmco2::testing_support::run_command(std::string(LLMCO2_DYNAMIC_BIN) + " " + args);
  };
  for (const std::string args :
       {"predict --format json", "predict --predictor deepen --format json", "predict --predictor=deepen",
        "predict --model-file " LLMCO2_DATA "/predictors/deepen.model --format json",
        "predict --model llama-3.1-70b --gpu h100-sxm --gpus 4 --predictor llmco2"}) {
    const Result mine = run(args), theirs = dynamic(args);
    EXPECT_EQ(mine.exit_code, 0) << args << ": " << mine.err;
    EXPECT_EQ(mine.out, theirs.out) << args;
    EXPECT_EQ(mine.err, theirs.err) << args;
  }
  const Result help = run("measure --help");  // run by llmco2-dynamic, under llmco2's own name
  EXPECT_NE(help.out.find("Usage: " + std::string(LLMCO2_BIN) + " measure"), std::string::npos) << help.out;
}

// docs/schema.md: in every command's JSON a quantity is an object with a numeric total (phases a number or null),
// the scope is stated, the carbon inputs are top-level keys and energy per token has one name.
void expect_quantity(const nlohmann::json& q, const std::string& what) {
  ASSERT_TRUE(q.is_object()) << what << ": " << q;
  EXPECT_TRUE(q.at("total").is_number()) << what;
  for (const char* phase : {"prefill", "decode"})
    EXPECT_TRUE(q.contains(phase) && (q[phase].is_null() || q[phase].is_number())) << what << " " << phase;
}

void expect_result_schema(const nlohmann::json& j, const std::string& what) {
  expect_quantity(j.at("energy_j"), what + ": energy_j");
  EXPECT_TRUE(j.at("energy_scope") == "gpu" || j.at("energy_scope") == "node") << what;
  EXPECT_TRUE(j.contains("node")) << what;
  if (j.contains("latency_s")) expect_quantity(j["latency_s"], what + ": latency_s");
  if (j.contains("co2_g"))
    for (const char* part : {"operational", "total"}) expect_quantity(j["co2_g"].at(part), what + ": co2_g " + part);
  for (const char* gone : {"energy_per_gen_token_j", "energy_per_token_j", "carbon_inputs"})
    EXPECT_FALSE(j.contains(gone)) << what << ": " << gone;
}

// compare and trace write files only when asked (--plot DIR): nothing appears in the working directory otherwise.
TEST(CliOutputs, NoFilesUnlessAsked) {
  const std::string dir = testing::TempDir() + "/cli_no_files";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/log.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,512,64\n";
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const std::string trace = "trace " + dir + "/log.csv --quiet";
  for (const std::string& args : {std::string("compare --gpu-types l4 --counts 1 --quiet"), trace})
    EXPECT_EQ(run(args).exit_code, 0) << args;
  std::filesystem::current_path(cwd);
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"log.csv"});
}

// A one-request log has one CO2 value: its histogram still draws (gnuplot refused the empty range and the warning
// blamed a missing gnuplot).
TEST(CliOutputs, AOneRequestLogDrawsItsReport) {
  const std::string dir = testing::TempDir() + "/cli_one_request";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/log.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,512,64\n";
  const Result r = run("trace " + dir + "/log.csv --plot " + dir + "/report --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("gnuplot"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/report/histogram.png"));
}

namespace {

// The evidence block of docs/schema.md: a label from the three, its reason, the nearest sources, the interval's basis.
void expect_evidence(const nlohmann::json& j, const std::string& what) {
  ASSERT_TRUE(j.contains("evidence")) << what;
  const auto& e = j["evidence"];
  const std::string label = e.at("label").get<std::string>();
  EXPECT_TRUE(label == "calibrated" || label == "interpolated" || label == "extrapolated") << what << ": " << label;
  EXPECT_FALSE(e.at("reason").get<std::string>().empty()) << what;
  EXPECT_TRUE(e.at("nearest_sources").is_array() && !e["nearest_sources"].empty()) << what;
  EXPECT_FALSE(e.at("interval_basis").get<std::string>().empty()) << what;
  EXPECT_TRUE(e.at("bias").contains("energy")) << what;
}

}  // namespace

TEST(CliSchema, EveryCommandWritesTheOneSchema) {
  const std::string dir = testing::TempDir() + "/cli_schema";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/log.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,512,64\n"
                                     "2023-11-16 18:00:02,256,32\n";
  const std::string log = dir + "/log.csv", setup = " --model llama-3.1-8b --gpu h100-sxm --region FRA";
  auto json_of = [](const std::string& args) {
    const Result r = run(args + " --format json");
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
  };
  for (const char* predictor : {"sim", "nnlqp"}) {
    const auto j = json_of(std::string("predict --predictor ") + predictor + setup);
    expect_result_schema(j, std::string("predict ") + predictor);
    expect_evidence(j, std::string("predict ") + predictor);
    EXPECT_TRUE(j.at("energy_per_1k_output_tokens_j").is_number());
    EXPECT_EQ(j.at("region"), "FRA");
  }
  for (const std::string& args : {"compare --gpu-types h100-sxm,l4 --counts 1,2" + setup,
                                  "compare --trace " + log + " --gpu-types h100-sxm,l4 --counts 1 --quiet" + setup})
    for (const auto& row : json_of(args).at("setups"))
      if (!row.contains("unavailable")) {
        expect_result_schema(row, args);
        expect_evidence(row, args);
        EXPECT_TRUE(row.at("energy_per_1k_output_tokens_j").is_number()) << args;
      }
  for (const auto& c : json_of("compare --trace " + log +
                               " --gpu-types h100-sxm --tp-degrees 1 --slo-ttft-ms 5000 "
                               "--quiet" +
                               setup)
                           .at("ranked")) {
    expect_quantity(c.at("energy_j"), "capacity");
    expect_evidence(c, "capacity");
    EXPECT_GE(c.at("mean_batch").get<double>(), 1.0);
  }
  const auto traced = json_of("trace " + log + " --quiet" + setup);
  expect_result_schema(traced, "trace");
  expect_evidence(traced, "trace");
  EXPECT_TRUE(traced.at("energy_per_1k_output_tokens_j").is_number());
  EXPECT_EQ(traced.at("region"), "FRA");
  const auto served = json_of("serve-sim " + log + " --quiet" + setup);
  expect_result_schema(served, "serve-sim");
  EXPECT_EQ(served.at("region"), "FRA");
  EXPECT_TRUE(served.at("per_request").at("ttft_s").at("p50").is_number());
  expect_evidence(served, "serve-sim");
  expect_result_schema(json_of("simulate --model llama-3.1-8b --gpu h100-sxm"), "simulate");
}

namespace {

std::string temp_folder(const std::string& name) {
  const std::string dir = testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const char* kTinyLog =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,512,32\n2023-11-16 18:15:47.10,256,16\n";

}  // namespace

// Issue 41: an output that names one of the run's inputs is refused with exit 2 and the input is left as it was.
TEST(CliOutputs, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  const std::string dir = temp_folder("cli_output_input");
  std::ofstream(dir + "/log.csv") << kTinyLog;
  std::ofstream(dir + "/plan.csv") << "model,gpu,gpus,batch,prompt,gen\nllama-3.1-8b,h100-sxm,1,1,128,16\n";
  expect_clean_error("trace " + dir + "/log.csv --by-request " + dir + "/./log.csv", "refusing to overwrite an input");
  expect_clean_error("serve-sim " + dir + "/log.csv --requests-out " + dir + "/log.csv",
                     "is also this run's request log");
  expect_clean_error("simulate --plan " + dir + "/plan.csv --out " + dir + "/plan.csv", "is also this run's plan");
  EXPECT_EQ(file_text(dir + "/log.csv"), kTinyLog);
  EXPECT_EQ(file_text(dir + "/plan.csv"), "model,gpu,gpus,batch,prompt,gen\nllama-3.1-8b,h100-sxm,1,1,128,16\n");
}

// An output folder that cannot be made (a regular file stands where a folder should be) is the user's path: exit 2
// with the path and the reason, not an internal error.
TEST(CliOutputs, AnOutputFolderThatCannotBeMadeIsExit2WithThePath) {
  const std::string dir = temp_folder("cli_output_folder");
  std::ofstream(dir + "/log.csv") << kTinyLog;
  std::ofstream(dir + "/file") << "x";
  expect_clean_error("serve-sim " + dir + "/log.csv --plot " + dir + "/file/plots",
                     dir + "/file/plots: Not a directory");
}

// serve-sim lists its outputs in a manifest like every other command: check-outputs accepts a finished run and names
// a per-request CSV changed since.
TEST(CliOutputs, ServeSimWritesAManifest) {
  const std::string dir = temp_folder("cli_serve_sim_manifest");
  std::ofstream(dir + "/log.csv") << kTinyLog;
  const Result r = run("serve-sim " + dir + "/log.csv --requests-out " + dir + "/requests.csv --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Result ok = run("check-outputs " + dir + "/requests.csv.manifest.json");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  std::ofstream(dir + "/requests.csv", std::ios::app) << "1,0,1,1,0,,,,,,,0,completed\n";
  const Result stale = run("check-outputs " + dir + "/requests.csv.manifest.json");
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_NE(stale.out.find("requests.csv: differs from the manifest"), std::string::npos) << stale.out;
}

// Issue 41: counts have ranges (one replay scans every replica at each event), and a log of which no request can be
// served is an error, not a run of zeros.
TEST(CliBounds, ReplicaCountsHaveRangesAndAnUnservableLogIsExit2) {
  const std::string dir = temp_folder("cli_bounds");
  std::ofstream(dir + "/log.csv") << kTinyLog;
  expect_clean_error("serve-sim " + dir + "/log.csv --replicas 1025", "--replicas: Value 1025 not in range 1 to 1024");
  expect_clean_error("compare --trace " + dir + "/log.csv --slo-ttft-ms 500 --max-replicas 1000000",
                     "--max-replicas: Value 1000000 not in range 1 to 1024");
  // 2 and 3 million prompt tokens: more than an H100's whole KV cache for Llama 3.1 8B (26,211 blocks of 16 tokens).
  std::ofstream(dir + "/long.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,2000000,32\n"
                                      "2023-11-16 18:15:47.10,3000000,16\n";
  expect_clean_error("serve-sim " + dir + "/long.csv --quiet --requests-out " + dir + "/requests.csv",
                     "none of its 2 requests fits a replica's KV cache");
  EXPECT_FALSE(std::filesystem::exists(dir + "/requests.csv"));
}
