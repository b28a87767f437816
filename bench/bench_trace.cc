// bench/bench_trace.cc - scoring request logs: both bundled Azure 2023 traces (28,185 requests) read, predicted with
// the bundled LLMCO2 model through the shape table, and accounted (energy, latency, CO2, timeline), on one thread:
// the plain path (the whole log in memory, one request at a time) and the streaming one (trace/trace_stream.h).
// For 10M rows and peak memory, bench/trace_long_log.sh runs the whole `llmco2 trace` process.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "carbon/embodied.h"
#include "core/paths.h"
#include "sim/label.h"
#include "support/all_modules.h"
#include "trace/trace_account.h"
#include "trace/trace_stream.h"

namespace llmco2 {
namespace {

// The bundled LLMCO2 model, llama-3.1-8b on one H100 SXM, 369.5 g/kWh, LLMCarbon's embodied figure.
struct BenchSetup {
  std::unique_ptr<Predictor> predictor =
      load_predictor(data_dir() / "predictors" / "llmco2.model", load_sim_params(default_sim_params_path()));
  CatalogCache catalogs;
  PredictorInput setup = predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
  CarbonInputs carbon = carbon_on(*setup.gpu);

  static CarbonInputs carbon_on(const Gpu& gpu) {
    CarbonInputs c;
    c.ci_g_per_kwh = 369.5;
    c.embodied = gpu_embodied(gpu, EmbodiedBasis::llmcarbon, bundled_embodied_params());
    return c;
  }
};

void score_azure_traces(benchmark::State& state, double grid_ratio, bool stream) {
  const BenchSetup b;
  const auto& [predictor, catalogs, setup, carbon] = b;
  TraceOptions options;
  options.grid_ratio = grid_ratio;
  long requests = 0;
  for (auto _ : state) {
    for (const char* name : {"AzureLLMInferenceTrace_code.csv", "AzureLLMInferenceTrace_conv.csv"}) {
      const auto path = data_dir() / "azure" / name;
      const TraceAccount a = stream ? account_trace_file(path, *predictor, setup, carbon, options, {})
                                    : account_trace(read_request_log(path), *predictor, setup, carbon, options);
      benchmark::DoNotOptimize(a.energy_j);
      requests += a.requests;
    }
  }
  state.SetItemsProcessed(requests);
}

// The default: predictions on the token grid (ratio 1.1), interpolated (within 0.07% of exact on these traces).
void BM_ScoreAzureTraces(benchmark::State& state) { score_azure_traces(state, 1.1, false); }
BENCHMARK(BM_ScoreAzureTraces)->Unit(benchmark::kMillisecond);

// The same through the streaming accountant (two passes over each file, one thread).
void BM_StreamAzureTraces(benchmark::State& state) { score_azure_traces(state, 1.1, true); }
BENCHMARK(BM_StreamAzureTraces)->Unit(benchmark::kMillisecond);

// --grid 1: every distinct (prompt, gen) of a trace predicted exactly (7,981 + 14,027 shapes).
void BM_ScoreAzureTracesExact(benchmark::State& state) { score_azure_traces(state, 1.0, false); }
BENCHMARK(BM_ScoreAzureTracesExact)->Unit(benchmark::kMillisecond);

// Both Azure traces, their lines repeated `copies` times (timestamps unchanged) into a temporary file: 28,185 x copies
// requests.
std::filesystem::path repeated_azure_log(int copies) {
  const auto path = std::filesystem::temp_directory_path() / fmt::format("llmco2-bench-azure-x{}.csv", copies);
  std::string lines;
  for (const char* name : {"AzureLLMInferenceTrace_code.csv", "AzureLLMInferenceTrace_conv.csv"}) {
    std::ifstream in(data_dir() / "azure" / name);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.erase(0, text.find('\n') + 1);  // the header
    if (!text.empty() && text.back() != '\n') text += '\n';
    lines += text;
  }
  std::ofstream out(path, std::ios::binary);
  out << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < copies; ++i) out << lines;
  return path;
}

// About a million requests (the Azure traces 36 times) through the streaming accountant on one thread, the timeline
// and the per-shape memo included: requests per second at scale without the long log's 343 MB.
void BM_StreamAzureMillion(benchmark::State& state) {
  static const std::filesystem::path path = repeated_azure_log(36);
  const BenchSetup b;
  long requests = 0;
  for (auto _ : state) {
    const TraceAccount a = account_trace_file(path, *b.predictor, b.setup, b.carbon, TraceOptions{}, {});
    benchmark::DoNotOptimize(a.energy_j);
    requests += a.requests;
  }
  state.SetItemsProcessed(requests);
}
BENCHMARK(BM_StreamAzureMillion)->Unit(benchmark::kMillisecond);

// A long log named by LLMCO2_LONG_LOG (bench/make_long_log.py), once, on one thread: the plain path (the whole log in
// memory, as `trace` read it before streaming) against the streaming one. Run each alone under /usr/bin/time -v for
// its peak memory (bench/trace_long_log.sh measures the streaming CLI the same way).
void score_long_log(benchmark::State& state, bool stream) {
  const char* path = std::getenv("LLMCO2_LONG_LOG");
  if (!path) return state.SkipWithError("set LLMCO2_LONG_LOG to a log (bench/make_long_log.py)");
  const BenchSetup b;
  const auto& [predictor, catalogs, setup, carbon] = b;
  long requests = 0;
  for (auto _ : state) {
    TraceAccount a;
    if (stream) {
      a = account_trace_file(path, *predictor, setup, carbon, TraceOptions{}, {});
    } else {
      RequestLog log = read_request_log(path);
      drop_time_outliers(log);
      a = account_trace(log, *predictor, setup, carbon, TraceOptions{});
    }
    benchmark::DoNotOptimize(a.energy_j);
    requests += a.requests;
  }
  state.SetItemsProcessed(requests);
}
void BM_PlainLongLog(benchmark::State& state) { score_long_log(state, false); }
BENCHMARK(BM_PlainLongLog)->Unit(benchmark::kMillisecond)->Iterations(1);
void BM_StreamLongLog(benchmark::State& state) { score_long_log(state, true); }
BENCHMARK(BM_StreamLongLog)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace llmco2
