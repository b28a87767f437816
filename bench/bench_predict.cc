// bench/bench_predict.cc - prediction speed: the Eigen GNN forward pass in process, and `llmco2 predict` as a user
// runs it, process start included (issue: under 50 ms of wall time for a default request).
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>

#include "core/paths.h"
#include "llmco2/api.h"
#include "predictor/gnn.h"
#include "predictor/predictor.h"
#include "sim/label.h"
#include "support/all_modules.h"

extern char** environ;

namespace llmco2 {
namespace {

// Encoding the kernel graph (build, Roofline, simulator offset) and the forward pass of the bundled model: from the
// second iteration on through the setup's prepared state (SetupEncoder, PreparedGnnPass), as a warm process runs.
void BM_PredictInProcess(benchmark::State& state) {
  const SimParams params = load_sim_params(default_sim_params_path());
  const auto predictor = load_predictor(data_dir() / "predictors" / "llmco2.model", params);
  CatalogCache catalogs;
  const PredictorInput c = predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
  for (auto _ : state) benchmark::DoNotOptimize(predictor->predict(c));
}
BENCHMARK(BM_PredictInProcess)->Unit(benchmark::kMicrosecond);

// The same request through the default predictor, `sim` (the calibrated simulator).
void BM_PredictInProcessSim(benchmark::State& state) {
  const auto predictor = make_sim_predictor(load_sim_params(default_sim_params_path()));
  CatalogCache catalogs;
  const PredictorInput c = predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
  for (auto _ : state) benchmark::DoNotOptimize(predictor->predict(c));
}
BENCHMARK(BM_PredictInProcessSim)->Unit(benchmark::kMicrosecond);

// What the first request of a setup costs a fresh predictor (a command's one prediction): the GNN's and sim's.
void BM_PredictFirstOfSetup(benchmark::State& state) {
  const SimParams params = load_sim_params(default_sim_params_path());
  CatalogCache catalogs;
  const PredictorInput c = predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
  for (auto _ : state) {
    state.PauseTiming();
    auto predictor = state.range(0) ? load_predictor(data_dir() / "predictors" / "llmco2.model", params)
                                    : make_sim_predictor(params);
    state.ResumeTiming();
    benchmark::DoNotOptimize(predictor->predict(c));
    state.PauseTiming();
    predictor.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_PredictFirstOfSetup)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// One request through the public API, as the HTTP server and the Python bindings answer it: resolving the model, GPU,
// node, region and embodied carbon, the prediction, the footprint and its JSON document.
void BM_ApiPredict(benchmark::State& state) {
  const api::Session session;
  const api::Request request;
  session.predict(request);  // loads the predictor
  for (auto _ : state) benchmark::DoNotOptimize(session.predict(request));
}
BENCHMARK(BM_ApiPredict)->Unit(benchmark::kMicrosecond);

// The whole command: exec, catalog and model loading, prediction, JSON output (to /dev/null). LLMCO2_BENCH_BIN
// names another llmco2 to time with the same harness (an earlier build, for before/after figures).
void BM_PredictCommand(benchmark::State& state) {
  const char* other = std::getenv("LLMCO2_BENCH_BIN");
  const std::string binary = other != nullptr && *other != '\0' ? other : LLMCO2_BIN;
  std::vector<std::string> args = {binary, "predict", "--format", "json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  for (auto _ : state) {
    pid_t pid = 0;
    if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
      state.SkipWithError("cannot start llmco2");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("llmco2 predict failed");
      break;
    }
  }
  posix_spawn_file_actions_destroy(&actions);
}
BENCHMARK(BM_PredictCommand)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace llmco2
