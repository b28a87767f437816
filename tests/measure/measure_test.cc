// The NVML harness end to end, with the fake libnvidia-ml.so.1 and the fake runner built beside this test: repeats,
// averaging and spread, the prefill/decode split, several GPUs, resuming after a kill, a runner crashing mid-plan, an
// out-of-memory configuration, power sampling without energy counters, and NVML being absent.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "core/json_io.h"
#include "dataset/dataset_csv.h"
#include "measure/campaign.h"
#include "support/all_modules.h"
#include "support/run_cli.h"

namespace llmco2 {
namespace {

using testing_support::run_llmco2;

// A fresh folder with a plan and the fake NVML state, and the environment the fakes read.
struct Campaign {
  std::filesystem::path dir, plan, out, state;

  explicit Campaign(const std::string& name, const std::string& plan_rows, int devices = 1) {
    dir = std::filesystem::path(testing::TempDir()) / ("measure_" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    plan = dir / "plan.csv";
    out = dir / "data.csv";
    state = dir / "nvml.state";
    std::ofstream(plan) << "model,gpu,gpus,batch,prompt,gen\n" << plan_rows;
    std::ofstream s(state);
    for (int d = 0; d < devices; ++d) s << "1000000 60000\n";  // 1 kJ on the counter, 60 W idle
    env = "FAKE_NVML_STATE=" + state.string() + " FAKE_NVML_DEVICES=" + std::to_string(devices) +
          " FAKE_RUNNER_POWER_W=400";
  }

  testing_support::Result measure(const std::string& extra_env = "", const std::string& flags = "--repeats 2") const {
    return run_llmco2("measure --plan " + plan.string() + " --out " + out.string() + " --runner " FAKE_RUNNER +
                          " --nvml " FAKE_NVML " --idle-s 0.05 --quiet " + flags,
                      env + " " + extra_env);
  }

  std::vector<DatasetRow> rows() const {
    const DatasetReadResult r = read_dataset(out);
    EXPECT_TRUE(r.rejects.empty()) << (r.rejects.empty() ? "" : r.rejects[0].message());
    return r.rows;
  }

  long runs() const {  // 'go' commands the fake runner received
    std::ifstream in(state.string() + ".runs");
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  }

  std::string text(const std::filesystem::path& path) const {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::string env;
};

TEST(Measure, RepeatStatsAreTheMeanAndRelativeSampleDeviation) {
  const RepeatStats s = repeat_stats({52.8, 43.2});
  EXPECT_NEAR(s.mean, 48.0, 1e-12);
  EXPECT_NEAR(s.spread, std::sqrt(2.0) * 0.1, 1e-12);  // sample std 4.8 x sqrt(2) over 48
  EXPECT_EQ(repeat_stats({5.0}).spread, 0.0);
}

TEST(Measure, RepeatsAverageAndPrefillDecodeSplit) {
  // batch 2, prompt 100, gen 11: prefill 1e-4 x 2 x 100 = 0.02 s, full 0.02 + 10 x 0.01 = 0.12 s, at 400 W.
  // Runs of a shape alternate x0.9 (warm-up), x1.1, x0.9: the two measured runs average to the nominal time.
  Campaign c("split", "llama-3.1-8b,h100-sxm,1,2,100,11\nllama-3.1-8b,h100-sxm,1,1,50,1\n");
  const auto r = c.measure("FAKE_RUNNER_JITTER=0.1", "--repeats 2 --warmup 1");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto rows = c.rows();
  ASSERT_EQ(rows.size(), 2u);
  const DatasetRow& a = rows[0];
  EXPECT_EQ(a.source, "nvml");
  EXPECT_EQ(a.source_ref, "plan.csv:2");
  EXPECT_EQ(a.gpu, "h100-sxm");
  EXPECT_EQ(a.engine, "hf-transformers");
  EXPECT_EQ(a.measures, Measures::fixed_batch);
  EXPECT_NEAR(*a.energy_j.prefill, 8.0, 1e-9);  // 400 W x 0.02 s
  EXPECT_NEAR(*a.energy_j.total, 48.0, 1e-9);   // 400 W x 0.12 s
  EXPECT_NEAR(*a.energy_j.decode, 40.0, 1e-9);  // full - prefill
  EXPECT_NEAR(*a.latency_s.prefill, 0.02, 1e-12);
  EXPECT_NEAR(*a.latency_s.decode, 0.10, 1e-12);
  EXPECT_EQ(*a.repeats, 2);
  EXPECT_NEAR(*a.energy_spread, std::sqrt(2.0) * 0.1, 1e-6);  // {52.8, 43.2} J
  EXPECT_NE(a.notes.find("999.99-fake"), std::string::npos) << a.notes;
  EXPECT_NE(a.notes.find("not subtracted"), std::string::npos) << a.notes;
  // gen 1: no decode phase, total = prefill (batch 1 x prompt 50 x 1e-4 s = 5 ms at 400 W = 2 J).
  EXPECT_NEAR(*rows[1].energy_j.total, 2.0, 1e-9);
  EXPECT_EQ(*rows[1].energy_j.decode, 0.0);
  EXPECT_EQ(rows[1].measures, Measures::isolated);
  // 3 runs x 2 (prefill, full) for the first, 3 prefill runs for the second.
  EXPECT_EQ(c.runs(), 9);
  const Json facts = read_json_file(c.out.string() + ".campaign.json");
  EXPECT_NEAR(facts["gpus"][0]["idle_w"].get<double>(), 60.0, 1e-9);
  EXPECT_NE(r.out.find("idle power before the campaign: 60.0 W"), std::string::npos) << r.out;
}

TEST(Measure, SeveralGpusSumTheirEnergyAndRecordTheParallelism) {
  Campaign c("two_gpus", "llama-3.1-8b,h100-sxm,2,1,100,11\n", 2);
  const auto r = c.measure();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = c.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(*rows[0].energy_j.total, 2 * 400 * (0.01 + 0.1), 1e-9);  // both GPUs at 400 W for 0.11 s
  EXPECT_EQ(rows[0].parallelism, Parallelism::layer_split);
  EXPECT_EQ(rows[0].tensor_parallel, 1);
  EXPECT_EQ(rows[0].interconnect, "nvlink4");
}

TEST(Measure, AKilledCampaignKeepsItsRowsAndResumes) {
  Campaign c("resume",
             "llama-3.1-8b,h100-sxm,1,1,100,11\nllama-3.1-8b,h100-sxm,1,1,200,11\n"
             "llama-3.1-8b,h100-sxm,1,1,300,11\n");
  // warm-up 0, 1 repeat: 2 runs per configuration; the harness is killed during the second configuration.
  const auto killed = c.measure("FAKE_RUNNER_KILL_PARENT_ON_RUN=3", "--repeats 1 --warmup 0");
  EXPECT_EQ(killed.exit_code, 128 + 9);  // the shell reports the SIGKILL
  ASSERT_EQ(c.rows().size(), 1u);
  const std::string first = c.text(c.out);
  { std::ofstream(c.out, std::ios::app) << "nvml,plan.csv:3,llama-3.1-8b,llama"; }  // a torn write
  const auto resumed = c.measure("", "--repeats 1 --warmup 0");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("measured 2 configurations, 1 already in"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.err.find("dropped a partial last line"), std::string::npos) << resumed.err;
  const auto rows = c.rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(c.text(c.out).substr(0, first.size()), first);  // the first row untouched
  EXPECT_EQ(rows[2].prompt_tokens, 300);
  // A third run has nothing left to do.
  const auto again = c.measure("", "--repeats 1 --warmup 0");
  EXPECT_NE(again.out.find("measured 0 configurations, 3 already in"), std::string::npos) << again.out;
}

TEST(Measure, ARunnerCrashFailsOneConfigurationAndTheCampaignGoesOn) {
  Campaign c("crash",
             "llama-3.1-8b,h100-sxm,1,1,100,11\nllama-3.1-8b,h100-sxm,1,1,200,11\n"
             "llama-3.1-8b,h100-sxm,1,1,300,11\n");
  const auto r = c.measure("FAKE_RUNNER_CRASH_ONCE_ON_RUN=3", "--repeats 1 --warmup 0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("1 failed"), std::string::npos) << r.out;
  const auto rows = c.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].prompt_tokens, 100);
  EXPECT_EQ(rows[1].prompt_tokens, 300);
  const std::string failures = c.text(c.out.string() + ".failures.csv");
  EXPECT_NE(failures.find("the runner exited with status 3"), std::string::npos) << failures;
  EXPECT_NE(failures.find("\n3,llama-3.1-8b,h100-sxm,1,1,200,11"), std::string::npos) << failures;
  const auto retry = c.measure("", "--repeats 1 --warmup 0");  // the crash happens once: the retry succeeds
  EXPECT_EQ(retry.exit_code, 0) << retry.err;
  EXPECT_EQ(c.rows().size(), 3u);
}

TEST(Measure, OutOfMemoryIsRecordedAndTheRunnerKeepsServing) {
  Campaign c("oom", "llama-3.1-8b,h100-sxm,1,1,4000,11\nllama-3.1-8b,h100-sxm,1,1,100,11\n");
  const auto r = c.measure("FAKE_RUNNER_OOM_PROMPT=2000");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(c.rows().size(), 1u);
  EXPECT_NE(c.text(c.out.string() + ".failures.csv").find("runner error (oom): CUDA out of memory"), std::string::npos);
}

TEST(Measure, WithoutEnergyCountersPowerIsSampledAndIntegrated) {
  // prompt 1000, gen 21: 0.1 s prefill and 0.3 s full run at 400 W, really slept: ~40 J and ~120 J.
  Campaign c("sampling", "llama-3.1-8b,h100-sxm,1,1,1000,21\n");
  const auto r = c.measure("FAKE_NVML_NO_ENERGY=1 FAKE_RUNNER_SLEEP=1", "--repeats 1 --warmup 0 --sample-ms 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = c.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(*rows[0].energy_j.prefill, 40, 0.2 * 40);
  EXPECT_NEAR(*rows[0].energy_j.total, 120, 0.2 * 120);
  EXPECT_TRUE(rows[0].has_caveat("short_run"));
  EXPECT_NE(rows[0].notes.find("power sampled and integrated"), std::string::npos);
}

TEST(Measure, AGpuOtherThanThePlansIsAFailureNamingBoth) {
  Campaign c("mismatch", "llama-3.1-8b,a100-80gb-sxm,1,1,100,11\n");
  const auto r = c.measure();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(c.text(c.out.string() + ".failures.csv")
                .find("the plan asks for a100-80gb-sxm, but GPU 0 is 'NVIDIA H100 "
                      "80GB HBM3'"),
            std::string::npos);
}

TEST(Measure, MissingOrBrokenNvmlIsOneClearLine) {
  Campaign c("no_nvml", "llama-3.1-8b,h100-sxm,1,1,100,11\n");
  const auto missing = run_llmco2("measure --plan " + c.plan.string() + " --out " + c.out.string() +
                                  " --runner true --nvml /nonexistent/libnvidia-ml.so.1 --quiet");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_NE(missing.err.find("cannot load NVML (/nonexistent/libnvidia-ml.so.1)"), std::string::npos) << missing.err;
  const auto broken = c.measure("FAKE_NVML_FAIL_INIT=1");
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find("nvmlInit_v2 failed"), std::string::npos) << broken.err;
  EXPECT_FALSE(std::filesystem::exists(c.out));
}

TEST(Measure, TornTailsAreRepairedAndAppendsAreWholeLines) {
  const auto path = std::filesystem::path(testing::TempDir()) / "torn.csv";
  { std::ofstream(path) << "a,b\n1,2\n3,"; }
  EXPECT_EQ(repair_torn_tail(path), 2u);
  append_atomically(path, "5,6\n");
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), "a,b\n1,2\n5,6\n");
  EXPECT_EQ(repair_torn_tail(path), 0u);
}

// Eight appenders to one file, 40 rows each, at once (two campaigns sharing an --out): every one of the 320 rows is
// there exactly once. Without the lock, two appenders read the same old contents and the later rename drops the
// earlier one's row.
TEST(Measure, ConcurrentAppendersLoseNoRow) {
  const auto path = std::filesystem::path(testing::TempDir()) / "shared_out.csv";
  std::filesystem::remove(path);
  std::vector<std::thread> appenders;
  for (int a = 0; a < 8; ++a)
    appenders.emplace_back([&path, a] {
      for (int r = 0; r < 40; ++r) append_atomically(path, std::to_string(a) + "," + std::to_string(r) + "\n");
    });
  for (auto& t : appenders) t.join();
  std::ifstream in(path);
  std::set<std::string> rows;
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) rows.insert(line);
  EXPECT_EQ(lines, 320u);
  EXPECT_EQ(rows.size(), 320u);
}

// The reference runner on a machine without torch (as here and in CI): it says so, each configuration fails with that
// line, nothing is written as measured, and the harness exits 1.
TEST(Measure, TheReferenceRunnerWithoutTorchFailsEachConfigurationClearly) {
  if (std::system("python3 -c 'import torch' 2>/dev/null") == 0) GTEST_SKIP() << "torch is installed here";
  if (std::system("python3 -c 'pass' 2>/dev/null") != 0) GTEST_SKIP() << "no python3";
  Campaign c("reference", "llama-3.1-8b,h100-sxm,1,1,100,11\n");
  const auto r = run_llmco2("measure --plan " + c.plan.string() + " --out " + c.out.string() + " --runner 'python3 " +
                                std::string(LLMCO2_SOURCE) +
                                "/tools/runners/hf_transformers.py' --nvml " FAKE_NVML " --idle-s 0.05 --quiet",
                            c.env);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(c.rows().empty());
  EXPECT_NE(c.text(c.out.string() + ".failures.csv").find("runner error (setup): the reference runner needs torch"),
            std::string::npos)
      << c.text(c.out.string() + ".failures.csv");
}

}  // namespace
}  // namespace llmco2
