// bench/bench_sim.cc - labelling rate of the simulator (issue 17: >= 1M configurations/s on one core), row by row
// (the reference) and through prepared setups.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "sim/label.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

// A plan like the training-data plans: several models, GPU counts, batches and lengths.
std::vector<PlanRow> sample_plan() {
  std::vector<PlanRow> plan;
  for (const char* model : {"llama-3.1-8b", "mixtral-8x7b", "gemma-2-9b", "qwen2-72b"})
    for (int gpus : {1, 2, 4, 8})
      for (long batch : {1L, 8L, 64L})
        for (long prompt : {128L, 1024L}) plan.push_back({0, model, "a100-80gb-sxm", gpus, batch, prompt, 256, "", ""});
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

// The same rows through their setup's prepared simulator (one SetupSimulator per model and GPU count, prepared before
// the loop): the per-row arithmetic that label_plan does for every row after the first of its setup.
void BM_SimulatePrepared(benchmark::State& state) {
  const std::vector<PlanRow> plan = sample_plan();
  const SimParams params = load_sim_params(default_sim_params_path());
  CatalogCache catalogs;
  std::vector<SimConfig> configs;
  std::map<std::pair<std::string, int>, std::unique_ptr<SetupSimulator>> setups;
  std::vector<SetupSimulator*> simulators;
  for (const PlanRow& row : plan) {
    configs.push_back(config_for_plan(row, catalogs));
    const SimConfig& c = configs.back();
    auto& slot = setups[{row.model, row.gpus}];
    if (!slot) slot = std::make_unique<SetupSimulator>(*c.model, *c.gpu, c.request, c.scenario, params);
    simulators.push_back(slot.get());
  }
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % plan.size();
    benchmark::DoNotOptimize(simulators[k]->simulate(configs[k].request));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SimulatePrepared);

// label_plan over 9,600 rows of the 16 setups above, each row with its own prompt and gen (the setups prepared once
// per call, the rows written as dataset rows): what `simulate --plan` does per row, without the file I/O.
void BM_LabelPlan(benchmark::State& state) {
  std::vector<PlanRow> plan;
  for (int copy = 0; copy < 100; ++copy)
    for (PlanRow row : sample_plan()) {
      row.prompt += 37 * copy, row.gen += 11 * copy, row.line = static_cast<long>(plan.size()) + 2;
      plan.push_back(row);
    }
  const SimParams params = load_sim_params(default_sim_params_path());
  for (auto _ : state) benchmark::DoNotOptimize(label_plan(plan, params, {}));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(plan.size()));
}
BENCHMARK(BM_LabelPlan)->Unit(benchmark::kMillisecond);

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
