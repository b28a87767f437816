// bench/bench_serving.cc - the serving replay: the whole Azure 2023 chat trace (19,366 requests, about an hour) through
// one H100 SXM running Llama-3.1-8B under vLLM v1's scheduler, every iteration priced (memoised) by the simulator,
// on one thread. The log is read once outside the timing; items are requests replayed.
#include <benchmark/benchmark.h>

#include "core/paths.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "serving/serve_sim.h"

namespace llmco2 {
namespace {

void BM_ServeSimAzureChat(benchmark::State& state) {
  const RequestLog log = read_request_log(data_dir() / "azure" / "AzureLLMInferenceTrace_conv.csv");
  const SimParams params = load_sim_params(default_sim_params_path());
  Deployment d;
  d.model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  d.gpu = GpuCatalog::bundled().resolve("h100-sxm");
  d.setup.precision = d.model.default_precision;
  long requests = 0;
  for (auto _ : state) {
    const ReplayTotals t = replay(log, d, params, {}, [](const ServedRequest&) {});
    benchmark::DoNotOptimize(t.busy_energy_j);
    requests += t.completed;
  }
  state.SetItemsProcessed(requests);
}
BENCHMARK(BM_ServeSimAzureChat)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace llmco2
