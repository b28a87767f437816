// predictor/registry.cc - the table of predictors.
#include "predictor/registry.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"

namespace llmco2::predictor {
namespace {

constexpr std::array kPredictors = {
    PredictorInfo{"llmcarbon",
                  "LLMCarbon's roofline: FLOPs and bytes at one fitted utilisation of the peaks",
                  PredictorFamily::analytic,
                  {},
                  true,
                  false},
    PredictorInfo{"deepen",
                  "DeepEn: XGBoost forests over per-kernel features, summed over the graph",
                  PredictorFamily::forest,
                  {},
                  true,
                  true},
    PredictorInfo{"nnlqp",
                  "NNLQP: a GNN over the kernel graph with prefill and decode merged, one output",
                  PredictorFamily::gnn,
                  {FeatureSet::merged, TargetScaling::log, false},
                  true,
                  false},
    PredictorInfo{"phases",
                  "a GNN with prefill and decode features and outputs apart, trained on log energy",
                  PredictorFamily::gnn,
                  {FeatureSet::phases, TargetScaling::log, true},
                  false,
                  false},
    PredictorInfo{"llmco2-log",
                  "the LLMCO2 GraphSAGE GNN trained on log energy and latency",
                  PredictorFamily::gnn,
                  {FeatureSet::llmco2, TargetScaling::log, true},
                  false,
                  false},
    PredictorInfo{"llmco2",
                  "the LLMCO2 GraphSAGE GNN (the paper's), predicting its ratio to the simulator",
                  PredictorFamily::gnn,
                  {FeatureSet::llmco2, TargetScaling::sim_ratio, true},
                  true,
                  false},
    PredictorInfo{"sim",
                  "the calibrated simulator (the default): kernel physics, engine and power model",
                  PredictorFamily::simulator,
                  {},
                  true,
                  false},
};

}  // namespace

std::span<const PredictorInfo> predictor_registry() { return kPredictors; }

const PredictorInfo& predictor_info(std::string_view name, std::string_view flag) {
  for (const PredictorInfo& p : kPredictors)
    if (p.name == name) return p;
  std::vector<std::string> names;
  for (const PredictorInfo& p : kPredictors) names.emplace_back(p.name);
  fail("{}: unknown predictor '{}' (expected {})", flag, name, join_or(names));
}

const std::vector<std::string>& offered_predictor_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out = {"sim"};
    for (const PredictorInfo& p : kPredictors)
      if (p.bundled && p.family != PredictorFamily::simulator) out.emplace_back(p.name);
    return out;
  }();
  return names;
}

bool predictor_loads_xgboost(std::string_view name) {
  return std::any_of(kPredictors.begin(), kPredictors.end(),
                     [&](const PredictorInfo& p) { return p.name == name && p.loads_xgboost; });
}

}  // namespace llmco2::predictor
