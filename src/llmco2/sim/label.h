// sim/label.h - from dataset rows and plan rows to simulator inputs, and simulator results back to dataset rows.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dataset/plan.h"
#include "dataset/record.h"
#include "sim/module.h"
#include "sim/simulator.h"

namespace llmco2::sim {

// The meter of rows flagged nvml_window_mean (TokenPowerBench SingleNode/power_monitor.py@ec00f52): NVML power
// samples from 2 s before to 2 s after the run, 10% of them trimmed at each end, their mean times the run time. On
// Ampere (except GA100) and newer, nvmlDeviceGetPowerUsage returns power averaged over the last second (NVML API
// reference), so a short run's power is smeared into the window and diluted by the idle seconds around it.
struct WindowMeter {
  double run_scale = 0;  // the measured run's length over the row's latency (run requests / batch); 0: no meter
  // The energy such a meter reports for a simulated run of `result` on GPUs idling at `idle_w` each.
  double energy_j(const SimResult& result, double idle_w) const;
};
// Share of the window's seconds the run's 1-s-smeared busy power fills, for a run of `run_s` seconds.
double window_busy_share(double run_s);

// A dataset or plan row as the simulator runs it: its setup and request (what a predictor takes of it is a
// PredictorInput, predictor/input.h) and how the row's energy was metered.
struct SimConfig {
  std::shared_ptr<const ModelSpec> model;
  std::shared_ptr<const Gpu> gpu;
  Request request;
  SimScenario scenario;
  double batch_scale = 1;  // the row's (mean) batch over the integer batch simulated
  WindowMeter meter;       // how the row's energy was metered (nvml_window_mean rows)
};

// Resolves model and GPU names through the bundled catalogs once per name.
class CatalogCache {
 public:
  std::shared_ptr<const ModelSpec> model(const std::string& name);
  std::shared_ptr<const Gpu> gpu(const std::string& name);

 private:
  std::map<std::string, std::shared_ptr<const ModelSpec>> models_;
  std::map<std::string, std::shared_ptr<const Gpu>> gpus_;
};

// The simulation of what a dataset row measured. Throws Error when its model or GPU is not in the catalogs or the
// request is invalid for the model.
SimConfig config_for_row(const DatasetRow& row, CatalogCache& catalogs);

// The simulation of a plan row: an isolated run of its batch. Checks the request (throws Error).
SimConfig config_for_plan(const PlanRow& row, CatalogCache& catalogs);

// A catalog model on a catalog GPU with the default request (Request's defaults, the model's own precision).
SimConfig default_config(const std::string& model, const std::string& gpu, CatalogCache& catalogs);

// The simulated values comparable with the row's measured ones (energies scaled to the row's batch; for
// steady_state rows only the total latency, a request's generation time, is set).
PhaseValues simulated_energy(const SimResult& result, const SimConfig& config);
PhaseValues simulated_latency(const SimResult& result, const SimConfig& config);

// A dataset row (source "sim") for a simulated configuration: its setup_row with set_simulated_values.
DatasetRow simulated_row(const SimConfig& config, const SimResult& result, std::string source_ref);
// The fields of that row that only the configuration's setup decides (model, architecture, dtype, GPUs, engine).
DatasetRow setup_row(const SimConfig& config);
// The request's counts, measures and simulated energy and latency.
void set_simulated_values(DatasetRow& row, const SimConfig& config, const SimResult& result);

// What a plan row of `batch` sequences measures: isolated (one request) or fixed_batch.
Measures plan_measures(long batch);

// Labelling a plan: each configuration is simulated, then measured `repeats` times with the noise model (the row keeps
// the mean and the spread, like a real campaign's repeats). repeats = 1 keeps the noiseless value.
struct LabelOptions {
  int repeats = 1;
  uint64_t seed = 1;
  std::string plan_name = "plan";  // source_ref prefix: <plan_name>:<line>
  bool progress = false;
};
struct LabelledPlan {
  std::vector<DatasetRow> rows;
  std::vector<RowReject> rejects;  // configurations the simulator cannot run (unknown model, invalid request)
};
// Rows of the same setup (model, GPU, GPU count, dtype, engine) share one SetupSimulator, prepared when the first of
// them comes; rows and rejects as label_plan_by_row gives them, bit for bit (tests/sim/setup_simulator_test.cc).
LabelledPlan label_plan(const std::vector<PlanRow>& plan, const SimParams& params, const LabelOptions& options);
// The reference: each row resolved (config_for_plan) and simulated (simulate) on its own.
LabelledPlan label_plan_by_row(const std::vector<PlanRow>& plan, const SimParams& params, const LabelOptions& options);

}  // namespace llmco2::sim
