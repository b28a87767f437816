// research/validation_baselines.h - the baselines `llmco2 validate` scores beside the simulator on the same measured
// rows, each fitted without the held-out source (LLMCarbon's one utilisation; EcoLogits' published formula needs no
// fit), and how well each ranks the setups that answer the same request.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "predictor/predictor.h"
#include "research/module.h"

namespace llmco2::research {

// A baseline's held-out predictions, per sample of the set (nullopt where it has none).
struct BaselineEstimates {
  std::string name, description;
  std::vector<std::optional<double>> energy_j, latency_s;
};

// LLMCarbon (time = FLOPs / (GPUs x peak x u), energy = time x GPUs x TDP) with u fitted, for each source, on the
// other sources' energies (the geometric mean of its ratio, as `llmco2 train --predictor llmcarbon` fits it); and
// EcoLogits' published per-token formula at the row's batch (no fit).
std::vector<BaselineEstimates> held_out_baselines(const CalibrationSet& set);

// A predictor asked for by name (`llmco2 validate --predictor`), a bundled model or the one `model_file` holds,
// loaded (throws Error naming a bad name or file), to be scored as it is: no refit. The bundled learned predictors
// were trained on a mix that held the measured rows (data/predictors/README.md), so their figures are in-sample; the
// description says so.
struct AskedPredictor {
  std::string name, description;
  std::shared_ptr<const predictor::Predictor> predictor;
};
AskedPredictor asked_predictor(const std::string& name, const std::string& model_file = "");
// Its predictions of every sample (none where it cannot take the row).
BaselineEstimates predictor_estimates(const CalibrationSet& set, const AskedPredictor& asked);

// The ranking section of the report: for each group of rows of one source that answer the same request (model,
// precision, tokens, batch or concurrency, task) on at least two setups (GPU type, count, engine), whether each
// predictor picks the setup with the least energy per request (and the fastest), and Spearman's rank correlation
// where a group has three setups or more.
std::string ranking_markdown(const CalibrationSet& set, const std::vector<SimEstimate>& held_out,
                             const std::vector<BaselineEstimates>& baselines);

// Spearman's rank correlation of two equally long samples (ties take their mean rank); 0 when either is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace llmco2::research
