// bench/bench_sim.cc - labelling rate of the reference simulator (issue: >= 10,000 configurations/s on one core).
#include <benchmark/benchmark.h>

#include "sim/label.h"

namespace llmco2 {
namespace {

// A plan like the training-data plans: several models, GPU counts, batches and lengths.
std::vector<PlanRow> sample_plan() {
  std::vector<PlanRow> plan;
  for (const char* model : {"llama-3.1-8b", "mixtral-8x7b", "gemma-2-9b", "qwen2-72b"})
    for (int gpus : {1, 2, 4, 8})
      for (long batch : {1L, 8L, 64L})
        for (long prompt : {128L, 1024L})
          plan.push_back({0, model, "a100-80gb-sxm", gpus, batch, prompt, 256, "", ""});
  return plan;
}

// Resolving a row (cached catalogs), building its kernel graph, pricing and simulating it: what `simulate --plan`
// does per row, without the file I/O.
void BM_LabelConfiguration(benchmark::State& state) {
  const std::vector<PlanRow> plan = sample_plan();
  const SimParams params = load_sim_params(default_sim_params_path());
  CatalogCache catalogs;
  size_t i = 0;
  for (auto _ : state) {
    const SimConfig c = config_for_plan(plan[i++ % plan.size()], catalogs);
    benchmark::DoNotOptimize(simulate(*c.model, *c.gpu, c.request, c.scenario, params));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LabelConfiguration);

// Re-timing a prepared workload under new parameters: the inner loop of `llmco2 calibrate`.
void BM_RunPreparedWorkload(benchmark::State& state) {
  CatalogCache catalogs;
  const SimConfig c = config_for_plan(sample_plan()[10], catalogs);
  const SimWorkload w = prepare_workload(*c.model, *c.gpu, c.request, c.scenario);
  const SimParams params = load_sim_params(default_sim_params_path());
  for (auto _ : state) benchmark::DoNotOptimize(run_workload(w, params));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RunPreparedWorkload);

}  // namespace
}  // namespace llmco2
