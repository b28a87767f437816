// evaluation/scoring.h - accuracy of a predictor on a test set, per LLM family of the paper and their mean.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/accuracy.h"
#include "evaluation/module.h"
#include "predictor/predictor.h"

namespace llmco2::evaluation {

// The paper's six families in its table order: Gemma, Bloom, Gemma2, Qwen2, Mixtral, Llama3.1.
const std::vector<std::string>& paper_families();
// The family of a model id (data/eval/families.csv), or "other".
std::string family_of(const std::string& model);

struct Score {
  std::map<std::string, Accuracy> energy_by_family;  // families present in the test set, and "other"
  Accuracy energy_family_mean;             // each metric averaged over the paper families present (the paper's "Mean")
  Accuracy energy_all;                     // over all rows
  Accuracy latency_all;                    // over rows with a measured total latency
  Accuracy prefill_energy, decode_energy;  // rows with measured phases, when the predictor splits them
};

// `predictions` parallel to `rows`; compares total energy (and latency, and phases where both sides have them).
Score score(const std::vector<const DatasetRow*>& rows, const std::vector<Prediction>& predictions);

}  // namespace llmco2::evaluation
