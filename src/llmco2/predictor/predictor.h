// predictor/predictor.h - one interface for every energy/latency predictor: the LLMCO2 GNN, its baselines
// (LLMCarbon, DeepEn, NNLQP) and the calibrated simulator. Predictions are for what a configuration measures: the
// row's batch, all its GPUs.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dataset/record.h"
#include "predictor/input.h"
#include "predictor/module.h"

namespace llmco2::predictor {

struct Prediction {
  PhaseValues energy_j;  // all GPUs; phases unset when the predictor only knows totals
  PhaseValues latency_s;
  bool bounded = false;            // the predictor's energy fell outside the power envelope and was brought into it
  std::vector<std::string> notes;  // why, per phase
};

// The power envelope every prediction must respect: idle x GPUs x latency <= energy <= TDP x GPUs x latency, per
// phase and in total, for all GPUs drawing power in the configuration. Energies outside are clamped to the nearer
// end, with `bounded` set and a note naming the phase, the predictor's value and the bound.
Prediction bound_to_power_envelope(const PredictorInput& config, Prediction prediction);

class Predictor {
 public:
  virtual ~Predictor() = default;
  virtual std::string name() const = 0;
  virtual Prediction predict(const PredictorInput& config) const = 0;
  // Many at once (DeepEn batches its forest calls); the default loops.
  virtual std::vector<Prediction> predict_all(const std::vector<PredictorInput>& configs) const;
};

// The calibrated simulator as a predictor (noiseless).
std::unique_ptr<Predictor> make_sim_predictor(const SimParams& params);

// LLMCarbon: time = FLOPs / (GPUs x peak x utilisation), energy = time x GPUs x TDP.
std::unique_ptr<Predictor> make_llmcarbon_predictor(double utilisation);

// `inner` with every prediction brought into the power envelope (what the CLI, trace and compare serve).
std::unique_ptr<Predictor> make_bounded_predictor(std::unique_ptr<Predictor> inner);

// A trained predictor from its model file (kind gnn, llmcarbon or deepen). The GNN's physics offsets and features use
// `params`. Throws Error naming the file.
std::unique_ptr<Predictor> load_predictor(const std::filesystem::path& model_file, const SimParams& params);

// Prediction assembled from per-phase values; decode is 0 when the request has no decode step.
Prediction phase_prediction(double energy_prefill_j, double energy_decode_j, double latency_prefill_s,
                            double latency_decode_s);
Prediction total_prediction(double energy_j, double latency_s);

}  // namespace llmco2::predictor
