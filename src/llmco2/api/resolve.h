// api/resolve.h - a public Request resolved against the catalogs: the model, the GPU, the internal request, the
// carbon inputs and the predictor. Internal to the core; the CLI's research commands (serve-sim, simulate, graph)
// resolve through it too, so every command reads a request the same way.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "carbon/footprint.h"
#include "graph/request.h"
#include "hardware/gpu.h"
#include "llmco2/api.h"
#include "model/model_spec.h"
#include "predictor/error_band.h"
#include "predictor/predictor.h"

namespace llmco2::api {

struct ResolvedRequest {
  ModelSpec model;
  Gpu gpu;
  llmco2::Request request;
  std::vector<std::string> notes;  // precision fallbacks and memory waves the user should know about
};

// Throws Error naming `field` when `value` names a file (a .json path) and paths are not allowed.
void refuse_file(const std::string& value, const char* field, bool allow_paths);

// Looks up the model (the catalog, a posted config or, with `allow_paths`, a file) and the GPU, parses the precision
// and checks the request against the model (and, with `check_fit`, that it fits the GPUs' memory). Throws Error.
ResolvedRequest resolve_request(const Request& request, bool allow_paths, bool check_fit = true);

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
  std::string file;                          // the model file read ("" for the simulator and LLMCarbon)
};

// The bundled model of `name` (or `settings.model_file`), bounded to the power envelope. Throws Error.
LoadedPredictor load_predictor(const std::string& name, const Settings& settings);

// The predictor names request.predictor may take.
const std::vector<std::string>& predictor_names();

}  // namespace llmco2::api
