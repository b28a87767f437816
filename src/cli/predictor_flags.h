// cli/predictor_flags.h - choosing a predictor (--predictor, --model-file, --params) and its error bands, shared by
// predict, trace and compare.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "predictor/error_band.h"
#include "predictor/predictor.h"

namespace llmco2::cli {

struct PredictorFlags {
  std::string predictor = "llmco2", model_file, params;
};

void add_predictor_flags(CLI::App& command, PredictorFlags& flags);

struct LoadedPredictor {
  std::unique_ptr<Predictor> predictor;
  SimParams params;
  std::optional<PredictorErrorBands> bands;  // absent for a model file, or when no evaluation measured it
  std::string bands_note;                    // where the bands come from, or why there are none
  double band_level = 0.8;
};

// Loads the bundled model of --predictor (or --model-file) with the simulator parameters and its error bands.
LoadedPredictor load_predictor_from_flags(const PredictorFlags& flags);

}  // namespace llmco2::cli
