// cli/predictor_flags.cc - predictor selection shared by predict, trace and compare.
#include "cli/predictor_flags.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/paths.h"

namespace llmco2::cli {
namespace {

std::unique_ptr<Predictor> choose_predictor(const PredictorFlags& f, const SimParams& params) {
  if (!f.model_file.empty()) return load_predictor(f.model_file, params);
  if (f.predictor == "sim") return make_sim_predictor(params);
  const auto bundled = data_dir() / "predictors" / (f.predictor + ".model");
  if (!std::filesystem::exists(bundled))
    fail("no bundled model for --predictor {} ({} is missing); train one with llmco2 train --predictor {} and pass "
         "--model-file",
         f.predictor, bundled.string(), f.predictor);
  return load_predictor(bundled, params);
}

}  // namespace

void add_predictor_flags(CLI::App& c, PredictorFlags& f) {
  c.add_option("--predictor", f.predictor, "llmco2 (default), nnlqp, deepen, llmcarbon or sim")
      ->check(CLI::IsMember({"llmco2", "llmco2-log", "phases", "nnlqp", "deepen", "llmcarbon", "sim"}))
      ->capture_default_str();
  c.add_option("--model-file", f.model_file, "a model file written by llmco2 train (overrides --predictor)");
  c.add_option("--params", f.params, "simulator parameters (default: data/sim/params.json)");
}

LoadedPredictor load_predictor_from_flags(const PredictorFlags& f) {
  LoadedPredictor loaded;
  loaded.params = load_sim_params_or_default(f.params);
  loaded.predictor = make_bounded_predictor(choose_predictor(f, loaded.params));
  if (!f.model_file.empty()) {
    loaded.bands_note = "no interval: " + f.model_file + " was not evaluated on held-out measurements";
    return loaded;
  }
  const auto path = default_error_bands_path();
  if (!std::filesystem::exists(path)) {
    loaded.bands_note = "no interval: " + path.string() + " is missing (llmco2 eval writes it)";
    return loaded;
  }
  const ErrorBands bands = read_error_bands(path);
  loaded.band_level = bands.level;
  const auto it = bands.predictors.find(f.predictor);
  if (it == bands.predictors.end() || !it->second.energy || !it->second.latency) {
    loaded.bands_note = fmt::format("no interval: {} has no error band in {}", f.predictor, path.string());
    return loaded;
  }
  loaded.bands = it->second;
  const ErrorBand &energy = *it->second.energy, &latency = *it->second.latency;
  loaded.bands_note = fmt::format(
      "{:.0f}% intervals: {} was within x{:.2f} of the measured energy and x{:.2f} of the latency on {:.0f}% of the "
      "real rows of {}; median measured/predicted energy there: {:.2f}",
      100 * bands.level, f.predictor, energy.factor, latency.factor, 100 * bands.level, bands.evaluated_on,
      energy.median_ratio);
  return loaded;
}

}  // namespace llmco2::cli
