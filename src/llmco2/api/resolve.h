// api/resolve.h - a public Request resolved against the catalogs, in one place: the model, the setup on each GPU type
// (precision after the GPU's fallbacks, scope, node, carbon inputs, power cap), the one fit check, and the predictor.
// Internal to the core; the CLI's research commands (serve-sim, simulate, graph) resolve through it too, so every
// command reads a request the same way.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/module.h"
#include "carbon/footprint.h"
#include "evidence/evidence.h"
#include "evidence/intervals.h"
#include "graph/request.h"
#include "hardware/gpu.h"
#include "hardware/power_setting.h"
#include "llmco2/api.h"
#include "model/model_spec.h"
#include "predictor/error_band.h"
#include "predictor/input.h"
#include "predictor/predictor.h"
#include "serving/serve_sim.h"
#include "sim/site_profile.h"

namespace llmco2::api {

// A request's setup as it runs on one GPU type and count: the model, the GPU, the engine's precision after that GPU's
// fallbacks, the energy scope and node, the carbon inputs and the power limit and clock, with a sentence for every
// change the user should know about. Batch and tokens ride along in `request` as asked; they are not part of the setup.
struct ResolvedRequest {
  ModelSpec model;
  Gpu gpu;
  graph::Request request;          // GPUs, precision, engine, attention; batch and tokens as asked
  CarbonInputs carbon;             // energy scope and node, region, intensity, PUE, the GPU's embodied figure
  PowerSetting power;              // each GPU's power limit and locked SM clock
  std::vector<std::string> notes;  // the model's source, precision fallbacks, memory waves, ...
  // How the batch runs (check_request sets them): in `waves` one after the other when its KV cache does not fit at
  // once, `sequences_per_wave` at a time, the last wave `last_wave_sequences`.
  long waves = 1, sequences_per_wave = 0, last_wave_sequences = 0;
  Speculation speculation;  // speculative decoding (off unless the request names a method)
};

// Throws Error naming `field` when `value` names a file (a .json path) and paths are not allowed.
void refuse_file(const std::string& value, const char* field, bool allow_paths);

// The request's model: the catalog, a posted config or, with `allow_paths`, a file; `note` says where it came from
// when that is not obvious. Throws Error.
ModelSpec resolve_model(const Request& request, bool allow_paths, std::string* note);

// The one resolver: the setup of `request` on `gpus` x `gpu` (every command, the server and Python resolve through
// it; compare once per row). Checks the setup against the model (GPU count, engine, experts) and the carbon and power
// fields; token counts are neither checked nor used. Throws Error.
ResolvedRequest resolve_setup(const Request& request, const ModelSpec& model, const Gpu& gpu, int gpus,
                              bool allow_paths);

// The one fit check of a request on its setup: batch, tokens and the model's context window, and the GPUs' memory
// (a batch whose KV cache does not fit at once runs in waves: noted). Throws Error.
void check_request(ResolvedRequest& resolved);
// The fit check of a setup that serves a log (tokens from the log): the weights and the shortest request fit.
void check_serves_log(const ResolvedRequest& resolved);

// resolve_setup on the request's own GPU and count, then check_request.
ResolvedRequest resolve_request(const Request& request, bool allow_paths);
// resolve_setup on the request's own GPU and count for a log (its batch as given, tokens from the log), then
// check_serves_log.
ResolvedRequest resolve_log_setup(const Request& request, bool allow_paths);

// What the predictors and the serving simulation take: the resolved setup with its tokens, its power cap included.
PredictorInput input_for(const ResolvedRequest& resolved);
Deployment deployment(const ResolvedRequest& resolved);

// The energy scope for `gpu`: GPU scope, or its node (the request's, else the catalog's default for the GPU type;
// GPU scope with the reason in `fallback` when the catalog has none). Throws Error naming the field.
EnergyScope resolve_scope(const Request& request, const Gpu& gpu, bool allow_paths);

// The energy scope, region, intensity, PUE and the GPU's embodied carbon. Throws Error naming the field.
CarbonInputs resolve_carbon(const Request& request, const Gpu& gpu, int gpus, bool allow_paths);

// A predictor with the simulator parameters and its error bands.
struct LoadedPredictor {
  std::shared_ptr<const Predictor> predictor;
  SimParams params;
  std::optional<PredictorErrorBands> bands;  // absent for a model file, or when no evaluation measured it
  std::string bands_note;                    // where the bands come from, or why there are none
  double band_level = 0.8;
  std::string file;  // the model file read ("" for the simulator and LLMCarbon)
  // The measured setups a request's evidence label is judged against (data/evidence/index.csv; null when missing),
  // and, for the simulator, its intervals per label (data/evidence/intervals.json; null when missing: `bands` then).
  std::shared_ptr<const evidence::EvidenceIndex> evidence_index;
  std::shared_ptr<const evidence::EvidenceIntervals> evidence_intervals;
  // The session's site profile (Settings::site), whose rows calibrate the setups they cover; null: none.
  std::shared_ptr<const SiteProfile> site;
};

// The bundled model of `name` (or `settings.model_file`), bounded to the power envelope. Throws Error.
// `params`: the simulator parameters it runs with (Session::Impl::params).
LoadedPredictor load_predictor(const std::string& name, const Settings& settings, SimParams params);

}  // namespace llmco2::api
