// bench/bench_trace.cc - scoring request logs: both bundled Azure 2023 traces (28,185 requests) read, predicted with
// the bundled LLMCO2 model through the shape table, and accounted (energy, latency, CO2, timeline), on one thread.
// The issue asks for at least 100,000 requests per second on one core.
#include <benchmark/benchmark.h>

#include "carbon/embodied.h"
#include "core/paths.h"
#include "trace/trace_account.h"

namespace llmco2 {
namespace {

void score_azure_traces(benchmark::State& state, double grid_ratio) {
  const SimParams params = load_sim_params(default_sim_params_path());
  const auto predictor = load_predictor(data_dir() / "predictors" / "llmco2.model", params);
  CatalogCache catalogs;
  const SimConfig setup = default_config("llama-3.1-8b", "h100-sxm", catalogs);
  CarbonInputs carbon;
  carbon.ci_g_per_kwh = 369.5;
  carbon.embodied = gpu_embodied(*setup.gpu, EmbodiedBasis::llmcarbon, bundled_embodied_params());
  TraceOptions options;
  options.grid_ratio = grid_ratio;
  long requests = 0;
  for (auto _ : state) {
    for (const char* name : {"AzureLLMInferenceTrace_code.csv", "AzureLLMInferenceTrace_conv.csv"}) {
      const RequestLog log = read_request_log(data_dir() / "azure" / name);
      const TraceAccount a = account_trace(log, *predictor, setup, carbon, nullptr, options);
      benchmark::DoNotOptimize(a.energy_j);
      requests += a.requests;
    }
  }
  state.SetItemsProcessed(requests);
}

// The default: predictions on the token grid (ratio 1.1), interpolated (within 0.07% of exact on these traces).
void BM_ScoreAzureTraces(benchmark::State& state) { score_azure_traces(state, 1.1); }
BENCHMARK(BM_ScoreAzureTraces)->Unit(benchmark::kMillisecond);

// --grid 1: every distinct (prompt, gen) of a trace predicted exactly (7,981 + 14,027 shapes).
void BM_ScoreAzureTracesExact(benchmark::State& state) { score_azure_traces(state, 1.0); }
BENCHMARK(BM_ScoreAzureTracesExact)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace llmco2
