// predictor/registry.h - every predictor llmco2 names, in one table (as xgboost registers its objectives): its name,
// what it is, how it is made (a GNN's recipe, a baseline's fit, or nothing: the simulator), whether a model of it
// ships in data/predictors, and whether answering with it loads libxgboost. --predictor (CLI, HTTP, Python), the API's
// loader, `llmco2 train` and `llmco2 eval` all read it, so a predictor is added in one place.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "predictor/encoding.h"
#include "predictor/gnn.h"
#include "predictor/module.h"

namespace llmco2::predictor {

enum class PredictorFamily {
  gnn,        // a graph network over the kernel graph (predictor/gnn.h), trained by llmco2 train
  forest,     // DeepEn's per-kernel XGBoost forests (predictor/deepen.h), trained by llmco2 train
  analytic,   // LLMCarbon's roofline with one fitted utilisation
  simulator,  // the calibrated simulator itself (sim/simulator.h): no model file
};

// What a GNN predictor is trained on and predicts.
struct GnnRecipe {
  FeatureSet features = FeatureSet::llmco2;
  TargetScaling scaling = TargetScaling::log;
  bool phase_outputs = true;  // separate prefill and decode outputs
};

struct PredictorInfo {
  std::string_view name;     // what --predictor takes
  std::string_view summary;  // one line for help texts and docs
  PredictorFamily family;
  GnnRecipe recipe;    // GNNs only
  bool bundled;        // answers without a --model-file: a model ships as data/predictors/<name>.model, or none
                       // is needed (the simulator)
  bool loads_xgboost;  // answering dlopens libxgboost (the static llmco2 hands such commands to llmco2-dynamic)
};

// Every predictor, in the evaluation's order: the baselines, the GNNs, the simulator.
std::span<const PredictorInfo> predictor_registry();
// The entry named `name`; throws Error naming the known ones (`flag`: the option in the message).
const PredictorInfo& predictor_info(std::string_view name, std::string_view flag = "--predictor");
// The names a request may give in --predictor: the bundled predictors (the simulator first, the default).
const std::vector<std::string>& offered_predictor_names();
// Whether `name` is a registered predictor whose answers load libxgboost.
bool predictor_loads_xgboost(std::string_view name);

}  // namespace llmco2::predictor
