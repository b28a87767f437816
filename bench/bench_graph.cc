// bench/bench_graph.cc - how fast a request becomes a priced kernel graph (the hot path of simulate/predict/trace).
#include <benchmark/benchmark.h>

#include "features/features.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"

namespace {

void BM_BuildAndPriceGraph(benchmark::State& state, const char* model_id) {
  const auto model = llmco2::ModelCatalog::bundled().resolve(model_id);
  const auto gpu = llmco2::GpuCatalog::bundled().resolve("h100-sxm");
  llmco2::Request request;
  request.gpus = 2;
  request.prompt_tokens = 1024;
  request.gen_tokens = 128;
  for (auto _ : state) {
    const auto graph = llmco2::build_kernel_graph(model, request);
    benchmark::DoNotOptimize(llmco2::compute_features(graph, gpu, request));
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_BuildAndPriceGraph, llama_3_1_8b, "llama-3.1-8b");
BENCHMARK_CAPTURE(BM_BuildAndPriceGraph, gemma_2_9b, "gemma-2-9b");
BENCHMARK_CAPTURE(BM_BuildAndPriceGraph, mixtral_8x7b, "mixtral-8x7b");

}  // namespace

BENCHMARK_MAIN();
