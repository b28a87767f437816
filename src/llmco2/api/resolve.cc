// api/resolve.cc - requests, carbon inputs and predictors resolved against the bundled catalogs.
#include "api/resolve.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "carbon/region_catalog.h"
#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"
#include "engine/engine_profile.h"
#include "features/memory_fit.h"
#include "hardware/gpu_catalog.h"
#include "hardware/node.h"
#include "hardware/power_setting.h"
#include "model/hf_config.h"
#include "model/model_catalog.h"
#include "predictor/registry.h"

namespace llmco2::api {
namespace {

double check_range(double value, double low, double high, const char* field, const char* what) {
  if (!(value >= low && value <= high))
    fail("{}: expected {} between {} and {}, got {}", field, what, low, high, value);
  return value;
}

}  // namespace

ModelSpec resolve_model(const Request& r, bool allow_paths, std::string* note) {
  if (r.model_config) {
    if (!r.model_config->is_object()) fail("model_config: expected a config.json object");
    ModelSpec spec = model_from_hf_config(*r.model_config, "model_config");
    if (!r.model.empty()) spec.id = r.model;
    return spec;
  }
  if (!allow_paths && !ModelCatalog::bundled().find(r.model)) {
    std::vector<std::string> ids;
    for (const auto& entry : ModelCatalog::bundled().entries()) ids.push_back(entry.id);
    fail(
        "--model: unknown model '{}' (did you mean {}? here a model is a bundled id, or its config.json posted as "
        "model_config)",
        r.model, join_or(nearest_names(r.model, ids, 3)));
  }
  return ModelCatalog::bundled().resolve(r.model, note);
}

void refuse_file(const std::string& value, const char* field, bool allow_paths) {
  if (!allow_paths && value.ends_with(".json"))
    fail("{}: '{}' is a file name; here only catalog ids are accepted", field, value);
}

namespace {

// The request's speculative decoding on `model` at `precision`: a catalog method or draft:MODEL (a draft model
// resolved as --model is). Only the simulator runs it: the learned predictors and LLMCarbon never saw it.
Speculation resolve_spec(const Request& f, const ModelSpec& model, const Precision& precision, bool allow_paths) {
  if (f.spec.empty()) return resolve_speculation("", f.spec_tokens, f.spec_acceptance, model, precision);
  if (f.predictor != "sim")
    fail("--spec: speculative decoding is simulated by the physics (--predictor sim); {} was never fitted on it",
         f.predictor);
  if (!f.spec.starts_with("draft:"))
    return resolve_speculation(f.spec, f.spec_tokens, f.spec_acceptance, model, precision);
  Request draft_request;
  draft_request.model = f.spec.substr(6);
  if (draft_request.model.empty()) fail("--spec draft:MODEL: name the draft model after 'draft:'");
  const ModelSpec draft = resolve_model(draft_request, allow_paths, nullptr);
  return resolve_speculation("draft", f.spec_tokens, f.spec_acceptance, model, precision, &draft);
}

}  // namespace

ResolvedRequest resolve_setup(const Request& f, const ModelSpec& model, const Gpu& gpu, int gpus, bool allow_paths) {
  const auto& engines = offered_engines();
  if (std::find(engines.begin(), engines.end(), f.engine) == engines.end())
    fail("--engine '{}' is unknown (expected {})", f.engine, join_or(engines));
  ResolvedRequest out{model, gpu, {},      {},     checked_power_setting(gpu, f.power_cap_w, f.clock_mhz),
                      {},    1,   f.batch, f.batch};
  graph::Request& r = out.request;
  r.batch = f.batch;
  r.prompt_tokens = f.prompt_tokens;
  r.gen_tokens = f.gen_tokens;
  r.gpus = gpus;
  // The config's quantization_config sets the default; a type the GPU has no tensor-core path for runs as the engine
  // would fall back (e.g. fp8 on an A100: weight-only fp8, 16-bit compute), with a note.
  EnginePrecision precision = engine_precision(gpu, model.precision_for(f.dtype), f.engine);
  r.precision = precision.precision;
  r.flash_attention = f.flash_attention;
  r.engine = f.engine;
  r.expert_parallel = f.expert_parallel;
  r.pipeline_parallel = f.pipeline_parallel;
  validate_setup(r, model);
  if (r.pipeline_parallel > 1 && f.predictor != "sim")
    fail("--pp: pipeline stages are simulated by the physics (--predictor sim); {} was never fitted on them",
         f.predictor);
  out.notes = std::move(precision.notes);
  out.speculation = resolve_spec(f, model, r.precision, allow_paths);
  if (r.pipeline_parallel > 1 && out.speculation.active())
    fail("--pp {} with --spec {}: speculative decoding over pipeline stages is not simulated", r.pipeline_parallel,
         f.spec);
  if (r.expert_parallel && r.gpus == 1)
    out.notes.push_back("--expert-parallel on one GPU: every expert is on it already");
  if (out.power.clock_share < 1)
    out.notes.push_back(
        fmt::format("SM clock locked at {:g} MHz, {:.2f} of the {:g} MHz the peaks are quoted at: "
                    "compute-bound kernels slow by that share, memory-bound ones keep their pace",
                    f.clock_mhz, out.power.clock_share, *gpu.tensor_peak_clock()));
  out.carbon = resolve_carbon(f, gpu, r.total_gpus(), allow_paths);
  return out;
}

namespace {

// The draft's weights come out of the KV cache's memory: refused when nothing is left; the waves stay the target's
// plan (a note says when the draft's weights would leave the batch fewer sequences at once than priced).
void check_draft_memory(ResolvedRequest& r, const MemoryPlan& plan) {
  const Speculation& spec = r.speculation;
  if (!spec.active() || spec.draft_weight_bytes <= 0) return;
  const double draft_bytes = spec.draft_weight_bytes / r.request.gpus;
  if (draft_bytes >= plan.kv_capacity_bytes_per_gpu)
    fail("--spec {}: the draft's weights ({:.1f} GB per GPU) leave no room for a KV cache beside {} on {} x {}",
         spec.method, draft_bytes / 1e9, r.model.id, r.request.gpus, r.gpu.id);
  const double per_sequence = plan.kv_bytes_per_sequence_per_gpu;
  const long at_once = per_sequence > 0
                           ? static_cast<long>((plan.kv_capacity_bytes_per_gpu - draft_bytes) / per_sequence)
                           : r.request.batch;
  if (at_once < std::min(r.request.batch, plan.sequences_per_wave))
    r.notes.push_back(fmt::format(
        "the draft's weights ({:.1f} GB per GPU) leave room for {} sequences at once, not the {} priced; serve-sim "
        "counts them",
        draft_bytes / 1e9, at_once, std::min(r.request.batch, plan.sequences_per_wave)));
}

}  // namespace

void check_request(ResolvedRequest& resolved) {
  check_runs(resolved.model, resolved.request, resolved.gpu);
  const MemoryPlan plan = plan_memory(resolved.model, resolved.request, resolved.gpu);
  resolved.waves = plan.waves;
  resolved.sequences_per_wave = plan.sequences_per_wave;
  resolved.last_wave_sequences = plan.last_wave_sequences;
  if (plan.waves > 1) resolved.notes.push_back(plan.note);
  check_draft_memory(resolved, plan);
}

void check_serves_log(const ResolvedRequest& resolved) {
  graph::Request shortest = resolved.request;  // one prompt token and one generated: the least a log asks
  shortest.prompt_tokens = 1;
  shortest.gen_tokens = 1;
  check_runs(resolved.model, shortest, resolved.gpu);
}

namespace {

// resolve_setup on the request's own model, GPU type and count.
ResolvedRequest resolve_own_setup(const Request& f, bool allow_paths) {
  std::string model_note;
  const ModelSpec model = resolve_model(f, allow_paths, &model_note);
  refuse_file(f.gpu, "--gpu", allow_paths);
  ResolvedRequest r = resolve_setup(f, model, GpuCatalog::resolve_bundled(f.gpu, allow_paths), f.gpus, allow_paths);
  if (!model_note.empty()) r.notes.insert(r.notes.begin(), model_note);
  return r;
}

}  // namespace

ResolvedRequest resolve_request(const Request& f, bool allow_paths) {
  ResolvedRequest r = resolve_own_setup(f, allow_paths);
  check_request(r);
  return r;
}

ResolvedRequest resolve_log_setup(const Request& f, bool allow_paths) {
  ResolvedRequest r = resolve_own_setup(f, allow_paths);
  check_serves_log(r);
  return r;
}

PredictorInput input_for(const ResolvedRequest& r) {
  PredictorInput config = predictor_input(r.model, r.gpu, r.request);
  config.scenario.power = r.power;
  config.scenario.speculation = r.speculation;
  return config;
}

Deployment deployment(const ResolvedRequest& r) {
  Deployment d;
  d.model = r.model, d.gpu = r.gpu, d.setup = r.request;
  d.scope = r.carbon.scope;
  d.power = r.power;
  d.speculation = r.speculation;
  return d;
}

EnergyScope resolve_scope(const Request& f, const Gpu& gpu, bool allow_paths) {
  EnergyScope scope;
  if (f.scope != "gpu" && f.scope != "node") fail("--scope: expected node or gpu, got '{}'", f.scope);
  if (f.scope == "gpu") {
    if (!f.node.empty()) fail("--node {}: only used with --scope node", f.node);
    return scope;
  }
  if (!f.node.empty()) {
    refuse_file(f.node, "--node", allow_paths);
    scope.node = NodeCatalog::resolve_bundled(f.node);
    if (scope.node->gpu != gpu.id) fail("--node {}: that node holds {} GPUs, not {}", f.node, scope.node->gpu, gpu.id);
  } else if (auto node = NodeCatalog::bundled_default_for(gpu.id)) {
    scope.node = std::move(*node);
  } else {
    scope.fallback = fmt::format("no node in the catalog holds {}: GPU energy only; give --node FILE.json", gpu.id);
  }
  return scope;
}

CarbonInputs resolve_carbon(const Request& f, const Gpu& gpu, int gpus, bool allow_paths) {
  const RegionCatalog& catalog = RegionCatalog::bundled();
  CarbonInputs in;
  in.gpus = gpus;
  in.scope = resolve_scope(f, gpu, allow_paths);
  const Region& region = catalog.resolve(f.region.empty() ? "WORLD" : f.region);
  in.region = region.id;
  if (f.ci_g_per_kwh) {
    in.ci_g_per_kwh = check_range(*f.ci_g_per_kwh, 0, 2000, "--ci", "a carbon intensity in g/kWh");
    in.ci_label = in.ci_source = "given with --ci";
    if (f.region.empty()) in.region = "--ci";
  } else {
    in.ci_g_per_kwh = region.ci_g_per_kwh;
    in.ci_label = fmt::format("{} ({}), {}", region.name, region.id, region.year);
    if (f.region.empty()) in.ci_label = "default region, pass --region or --ci: " + in.ci_label;
    in.ci_source = in.ci_label + ": " + region.source;
  }
  if (!f.pue.empty()) {
    const PueEntry pue = catalog.resolve_pue(f.pue);
    in.pue = pue.pue;
    in.pue_label = pue.year ? fmt::format("{}, {}", pue.id, pue.year) : pue.source;
    in.pue_source = pue.year ? in.pue_label + ": " + pue.source : pue.source;
  } else if (const PueEntry* provider = catalog.find_pue(region.provider); provider && region.kind == "cloud") {
    in.pue = provider->pue;
    in.pue_label = fmt::format("{} fleet average, {}", provider->id, provider->year);
    in.pue_source = in.pue_label + ": " + provider->source;
  } else {
    in.pue = 1.0;
    in.pue_label = "unknown for this region: 1.0 assumed, IT energy only; pass --pue";
    in.pue_source = "unknown for this region: 1.0 assumed (IT energy only); pass --pue, e.g. --pue industry-average";
  }
  const EmbodiedParams& params = bundled_embodied_params();
  in.lifetime_years =
      f.lifetime_years ? check_range(*f.lifetime_years, 0.1, 30, "--lifetime", "years") : params.lifetime_years;
  if (f.embodied_kg) {
    const double kg = check_range(*f.embodied_kg, 0, 100000, "--embodied-kg", "kgCO2e per GPU");
    in.embodied = {kg, EmbodiedBasis::user, fmt::format("given with --embodied-kg: {:.4g} kg per GPU", kg), gpu.id};
  } else {
    in.embodied = gpu_embodied(gpu, parse_embodied_basis(f.embodied_basis), params);
  }
  return in;
}

const std::vector<std::string>& predictor_names() {
  // The bundled predictors (data/predictors) and the simulator (predictor/registry.h); llmco2 train makes the others
  // (llmco2-log, phases), which --model-file then reads.
  return offered_predictor_names();
}

const std::vector<std::string>& engine_names() { return offered_engines(); }

bool predictor_loads_library(std::string_view name) { return predictor_loads_xgboost(name); }

namespace {

std::unique_ptr<Predictor> choose_predictor(const std::string& name, const Settings& s, const SimParams& params,
                                            std::string& file) {
  if (!s.model_file.empty()) return file = s.model_file, predictor::load_predictor(s.model_file, params);
  if (name == "sim") return make_sim_predictor(params);
  const auto& names = predictor_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    fail("--predictor: expected {}, got '{}'", join_or(names), name);
  const auto bundled = data_dir() / "predictors" / (name + ".model");
  if (!std::filesystem::exists(bundled))
    fail(
        "no bundled model for --predictor {} ({} is missing); train one with llmco2 train --predictor {} and pass "
        "--model-file",
        name, bundled.string(), name);
  file = bundled.string();
  return predictor::load_predictor(bundled, params);
}

}  // namespace

LoadedPredictor load_predictor(const std::string& name, const Settings& s, SimParams params) {
  LoadedPredictor loaded;
  loaded.params = std::move(params);
  loaded.predictor = make_bounded_predictor(choose_predictor(name, s, loaded.params, loaded.file));
  if (const auto index = evidence::default_evidence_index_path(); std::filesystem::exists(index))
    loaded.evidence_index = std::make_shared<const evidence::EvidenceIndex>(evidence::read_evidence_index(index));
  if (const auto intervals = evidence::default_evidence_intervals_path();
      name == "sim" && s.model_file.empty() && std::filesystem::exists(intervals))
    loaded.evidence_intervals =
        std::make_shared<const evidence::EvidenceIntervals>(evidence::read_evidence_intervals(intervals));
  if (!s.model_file.empty()) {
    loaded.bands_note = "no interval: " + s.model_file + " was not evaluated on held-out measurements";
    return loaded;
  }
  const auto path = default_error_bands_path();
  if (!std::filesystem::exists(path)) {
    loaded.bands_note = "no interval: " + path.string() + " is missing (llmco2 eval writes it)";
    return loaded;
  }
  const ErrorBands bands = read_error_bands(path);
  loaded.band_level = bands.level;
  const auto it = bands.predictors.find(name);
  if (it == bands.predictors.end() || !it->second.energy || !it->second.latency) {
    loaded.bands_note = fmt::format("no interval: {} has no error band in {}", name, path.string());
    return loaded;
  }
  loaded.bands = it->second;
  const ErrorBand &energy = *it->second.energy, &latency = *it->second.latency;
  loaded.bands_note = fmt::format(
      "{:.0f}% intervals: {} was within x{:.2f} of the measured energy and x{:.2f} of the latency on {:.0f}% of the "
      "real rows of {}; median measured/predicted energy there: {:.2f}",
      100 * bands.level, name, energy.factor, latency.factor, 100 * bands.level, bands.evaluated_on,
      energy.median_ratio);
  return loaded;
}

}  // namespace llmco2::api
