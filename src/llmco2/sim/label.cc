// sim/label.cc - dataset and plan rows to simulator configurations and back.
#include "sim/label.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/progress.h"
#include "dataset/architecture.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"

namespace llmco2::sim {

std::shared_ptr<const ModelSpec> CatalogCache::model(const std::string& name) {
  auto& slot = models_[name];
  if (!slot) slot = std::make_shared<const ModelSpec>(ModelCatalog::bundled().resolve(name));
  return slot;
}

std::shared_ptr<const Gpu> CatalogCache::gpu(const std::string& name) {
  auto& slot = gpus_[name];
  if (!slot) slot = std::make_shared<const Gpu>(GpuCatalog::bundled().resolve(name));
  return slot;
}

double window_busy_share(double run_s) {
  constexpr double kBefore_s = 2, kAfter_s = 2, kTrimmed = 0.1, kAveraging_s = 1;
  const double span_s = run_s + kBefore_s + kAfter_s;
  const double from_s = -kBefore_s + kTrimmed * span_s, to_s = run_s + kAfter_s - kTrimmed * span_s;
  // Each busy second s in [0, run_s] shows in the averaged readings over [s, s + 1 s]; count what the window keeps.
  constexpr int kSlices = 256;
  double busy_s = 0;
  for (int i = 0; i < kSlices; ++i) {
    const double s = run_s * (i + 0.5) / kSlices;
    busy_s += std::max(0.0, std::min(s + kAveraging_s, to_s) - std::max(s, from_s)) / kAveraging_s;
  }
  return busy_s * run_s / kSlices / (to_s - from_s);
}

double WindowMeter::energy_j(const SimResult& result, double idle_w) const {
  const double energy_j = result.energy_j.total(), latency_s = result.latency_s.total();
  if (!(run_scale > 0) || !(latency_s > 0)) return energy_j;
  const double idle_all_w = idle_w * result.gpus;
  const double mean_w = energy_j / latency_s;
  return (idle_all_w + (mean_w - idle_all_w) * window_busy_share(latency_s * run_scale)) * latency_s;
}

namespace {

// The cap on generated tokens of a row run to its longest response (note max_output_tokens). A mean estimated from the
// text (gen_tokens_estimated) may overshoot the cap a little: the batch then ran at least its mean.
long max_output_tokens(const DatasetRow& row) {
  const std::optional<long> cap = parse_long(row.note("max_output_tokens"));
  if (!cap || *cap < 2)
    fail("{}: batch_ran_to_cap needs a note max_output_tokens of at least 2, got '{}'", row.source_ref,
         row.note("max_output_tokens"));
  return std::max(*cap, std::lround(std::ceil(row.gen_tokens)));
}

}  // namespace

SimConfig config_for_row(const DatasetRow& row, CatalogCache& catalogs) {
  SimConfig c;
  c.model = catalogs.model(row.model);
  c.gpu = catalogs.gpu(row.gpu);
  const bool layer_split = row.parallelism == Parallelism::layer_split;
  const double replica_batch = row.batch / (layer_split ? 1 : row.data_parallel);
  Request& r = c.request;
  r.batch = std::max(1L, std::lround(replica_batch));
  r.prompt_tokens = std::max(1L, std::lround(row.prompt_tokens));
  r.gen_tokens = std::max(1L, std::lround(row.gen_tokens));
  r.gpus = layer_split ? 1 : row.tensor_parallel;
  r.pipeline_parallel = row.pipeline_parallel;
  r.engine = row.engine;
  // ML.ENERGY v3's expert-parallel rows: whole experts over the tensor-parallel group (note "expert_parallel N ...").
  r.expert_parallel = r.gpus > 1 && !row.note("expert_parallel").empty();
  // HF generate without a KV cache is its own engine class, so that its host costs do not bend those of HF with one.
  if (row.has_caveat("no_kv_cache") && row.engine == "hf-transformers") r.engine = "hf-transformers-no-kv-cache";
  r.precision = engine_precision(*c.gpu, c.model->precision_for(row.dtype), r.engine).precision;
  validate_request(r, *c.model);
  c.scenario.measures = row.measures;
  c.scenario.parallelism = row.parallelism;
  c.scenario.layer_split_gpus = layer_split ? row.gpus : 1;
  c.scenario.data_parallel = layer_split ? 1 : row.data_parallel;
  c.scenario.kv_cache = !row.has_caveat("no_kv_cache");
  if (row.measures == Measures::steady_state && row.gen_tokens_cv) c.scenario.gen_tokens_cv = *row.gen_tokens_cv;
  if (row.has_caveat("batch_ran_to_cap")) c.scenario.decode_steps = max_output_tokens(row) - 1;
  c.scenario.sampling.greedy = row.has_caveat("greedy_sampling");
  c.scenario.sampling.top_p = !row.has_caveat("temperature_sampling");
  c.scenario.sampling.penalties = row.has_caveat("sampling_penalties");
  c.batch_scale = replica_batch / static_cast<double>(r.batch);
  if (row.has_caveat("nvml_window_mean") && row.run_requests) c.meter.run_scale = *row.run_requests / row.batch;
  return c;
}

SimConfig default_config(const std::string& model, const std::string& gpu, CatalogCache& catalogs) {
  SimConfig c;
  c.model = catalogs.model(model);
  c.gpu = catalogs.gpu(gpu);
  c.request.precision = engine_precision(*c.gpu, c.model->precision_for(""), c.request.engine).precision;
  return c;
}

Measures plan_measures(long batch) { return batch > 1 ? Measures::fixed_batch : Measures::isolated; }

SimConfig config_for_plan(const PlanRow& row, CatalogCache& catalogs) {
  SimConfig c;
  c.model = catalogs.model(row.model);
  c.gpu = catalogs.gpu(row.gpu);
  Request& r = c.request;
  r.batch = row.batch;
  r.prompt_tokens = row.prompt;
  r.gen_tokens = row.gen;
  r.gpus = row.gpus;
  if (!row.engine.empty()) r.engine = row.engine;
  r.precision = engine_precision(*c.gpu, c.model->precision_for(row.dtype), r.engine).precision;
  validate_request(r, *c.model);
  c.scenario.measures = plan_measures(row.batch);
  return c;
}

PhaseValues simulated_energy(const SimResult& result, const SimConfig& c) {
  const double total_j = result.energy_j.total();
  const double metered = total_j > 0 ? c.meter.energy_j(result, c.gpu->idle_w) / total_j : 1.0;
  const double scale = c.batch_scale * metered;
  return {result.energy_j.prefill * scale, result.energy_j.decode * scale, total_j * scale};
}

PhaseValues simulated_latency(const SimResult& result, const SimConfig& c) {
  if (c.scenario.measures == Measures::steady_state) return {std::nullopt, std::nullopt, result.latency_s.total()};
  return {result.latency_s.prefill, result.latency_s.decode, result.latency_s.total()};
}

DatasetRow simulated_row(const SimConfig& c, const SimResult& result, std::string source_ref) {
  DatasetRow row = setup_row(c);
  row.source_ref = std::move(source_ref);
  set_simulated_values(row, c, result);
  return row;
}

DatasetRow setup_row(const SimConfig& c) {
  DatasetRow row;
  row.source = "sim";
  row.model = c.model->id;
  row.model_source_name = c.model->id;
  row.model_relation = "same";
  row.arch = architecture_fields(*c.model);
  row.dtype = c.request.precision.to_string();
  row.gpu = c.gpu->id;
  row.gpus = c.request.total_gpus();
  row.tensor_parallel = c.request.gpus;
  row.pipeline_parallel = c.request.pipeline_parallel;
  if (c.request.gpus > 1) row.interconnect = c.gpu->network_link(c.request.gpus).kind;
  row.engine = c.request.engine;
  return row;
}

void set_simulated_values(DatasetRow& row, const SimConfig& c, const SimResult& result) {
  row.batch = static_cast<double>(c.request.batch);
  row.prompt_tokens = static_cast<double>(c.request.prompt_tokens);
  row.gen_tokens = static_cast<double>(c.request.gen_tokens);
  row.measures = c.scenario.measures;
  row.energy_j = simulated_energy(result, c);
  row.latency_s = simulated_latency(result, c);
}

namespace {

// The row of a configuration simulated `repeats` times with noise (their mean and relative spread), on `row` (the
// configuration's setup_row).
DatasetRow repeated_row(DatasetRow row, const SimConfig& config, const SimResult& clean, const SimParams& params,
                        int repeats, uint64_t seed, std::string ref) {
  row.source_ref = std::move(ref);
  if (repeats <= 1) {
    set_simulated_values(row, config, clean);
    return row;
  }
  std::vector<SimResult> runs;
  SimResult mean;
  for (int i = 0; i < repeats; ++i) {
    runs.push_back(add_noise(clean, params, seed * 1000003u + static_cast<uint64_t>(i)));
    mean.energy_j.prefill += runs.back().energy_j.prefill / repeats;
    mean.energy_j.decode += runs.back().energy_j.decode / repeats;
    mean.latency_s.prefill += runs.back().latency_s.prefill / repeats;
    mean.latency_s.decode += runs.back().latency_s.decode / repeats;
  }
  double energy_var = 0, latency_var = 0;
  for (const auto& run : runs) {
    energy_var += std::pow(run.energy_j.total() - mean.energy_j.total(), 2) / (repeats - 1);
    latency_var += std::pow(run.latency_s.total() - mean.latency_s.total(), 2) / (repeats - 1);
  }
  set_simulated_values(row, config, mean);
  row.repeats = repeats;
  row.energy_spread = std::sqrt(energy_var) / mean.energy_j.total();
  row.latency_spread = std::sqrt(latency_var) / mean.latency_s.total();
  return row;
}

// What the rows of one setup (model, GPU, GPU count, dtype, engine) share: its configuration (counts and measures set
// per row), its prepared simulator and the setup's row fields. No simulator: the setup is invalid, and its rows go
// through config_for_plan, which names what is wrong (a row's own invalid count first, as it always did).
struct PlanSetup {
  SimConfig config;
  std::unique_ptr<SetupSimulator> simulator;
  DatasetRow prototype;
};

bool same_setup(const PlanRow& a, const PlanRow& b) {
  return a.gpus == b.gpus && a.model == b.model && a.gpu == b.gpu && a.dtype == b.dtype && a.engine == b.engine;
}

// The setups of a plan, each prepared the first time one of its rows comes.
class PlanSetups {
 public:
  explicit PlanSetups(const SimParams& params) : params_(params) {}
  PlanSetup& of(const PlanRow& row) {
    if (last_row_ && same_setup(row, *last_row_)) return *last_;
    const std::string key = fmt::format("{}\n{}\n{}\n{}\n{}", row.model, row.gpu, row.gpus, row.dtype, row.engine);
    auto [it, added] = setups_.try_emplace(key);
    if (added) prepare(it->second, row);
    last_row_ = &row, last_ = &it->second;
    return it->second;
  }
  CatalogCache& catalogs() { return catalogs_; }

 private:
  void prepare(PlanSetup& setup, PlanRow row) {
    row.batch = 1, row.prompt = 1, row.gen = 2;  // counts every model accepts: only the setup is checked
    try {
      setup.config = config_for_plan(row, catalogs_);
      setup.simulator = std::make_unique<SetupSimulator>(*setup.config.model, *setup.config.gpu, setup.config.request,
                                                         setup.config.scenario, params_);
      setup.prototype = setup_row(setup.config);
    } catch (const Error&) {
      setup.simulator.reset();
    }
  }

  const SimParams& params_;
  CatalogCache catalogs_;
  std::unordered_map<std::string, PlanSetup> setups_;
  const PlanRow* last_row_ = nullptr;
  PlanSetup* last_ = nullptr;
};

// The labelled row of plan row `p` (the `index`-th of the plan), through its setup's simulator.
DatasetRow label_row(const PlanRow& p, size_t index, PlanSetups& setups, const SimParams& params,
                     const LabelOptions& o) {
  std::string ref = fmt::format("{}:{}", o.plan_name, p.line);
  PlanSetup& setup = setups.of(p);
  if (!setup.simulator) {
    const SimConfig config = config_for_plan(p, setups.catalogs());  // throws what is wrong with the row
    const SimResult clean = simulate(*config.model, *config.gpu, config.request, config.scenario, params);
    return repeated_row(setup_row(config), config, clean, params, o.repeats, o.seed + index, std::move(ref));
  }
  SimConfig& config = setup.config;
  config.request.batch = p.batch, config.request.prompt_tokens = p.prompt, config.request.gen_tokens = p.gen;
  config.scenario.measures = plan_measures(p.batch);
  const SimResult clean = setup.simulator->simulate(config.request);
  return repeated_row(setup.prototype, config, clean, params, o.repeats, o.seed + index, std::move(ref));
}

// Labels every row with `label(row, index)`, rejecting those it throws Error for.
template <typename Label>
LabelledPlan label_each(const std::vector<PlanRow>& plan, const LabelOptions& o, Label label) {
  LabelledPlan out;
  out.rows.reserve(plan.size());  // rows are large: growing the vector would move each of them again and again
  Progress progress("simulate", static_cast<long>(plan.size()), o.progress);
  for (size_t i = 0; i < plan.size(); ++i) {
    try {
      out.rows.push_back(label(plan[i], i));
    } catch (const Error& e) {
      out.rejects.push_back({o.plan_name, plan[i].line, e.what()});
    }
    progress.update(static_cast<long>(i + 1));
  }
  progress.finish();
  return out;
}

}  // namespace

LabelledPlan label_plan(const std::vector<PlanRow>& plan, const SimParams& params, const LabelOptions& o) {
  PlanSetups setups(params);
  return label_each(plan, o, [&](const PlanRow& p, size_t i) { return label_row(p, i, setups, params, o); });
}

LabelledPlan label_plan_by_row(const std::vector<PlanRow>& plan, const SimParams& params, const LabelOptions& o) {
  CatalogCache catalogs;
  return label_each(plan, o, [&](const PlanRow& p, size_t i) {
    const SimConfig config = config_for_plan(p, catalogs);
    const SimResult clean = simulate(*config.model, *config.gpu, config.request, config.scenario, params);
    return repeated_row(setup_row(config), config, clean, params, o.repeats, o.seed + i,
                        fmt::format("{}:{}", o.plan_name, p.line));
  });
}

}  // namespace llmco2::sim
