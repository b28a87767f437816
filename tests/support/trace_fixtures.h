// tests/support/trace_fixtures.h - what the trace tests share: a setup, and a predictor answering in closed form.
#pragma once

#include <cmath>
#include <string>

#include "predictor/predictor.h"
#include "sim/label.h"
#include "support/all_modules.h"

namespace llmco2::testing_support {

// Energy and latency as power laws of the tokens: log-log bilinear interpolation reproduces them exactly, and every
// shape gets figures of its own.
class PowerLawPredictor final : public Predictor {
 public:
  std::string name() const override { return "power-law"; }
  Prediction predict(const PredictorInput& c) const override {
    const double p = static_cast<double>(c.request.prompt_tokens), g = static_cast<double>(c.request.gen_tokens);
    const double b = static_cast<double>(c.request.batch);
    return phase_prediction(2.0 * b * std::pow(p, 0.9), 3.0 * b * std::pow(p, 0.2) * std::pow(g, 1.1),
                            1e-4 * std::pow(p, 0.8), 0.02 * std::pow(g, 0.95));
  }
};

inline PredictorInput llama_on_h100() {
  CatalogCache catalogs;
  return predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
}

}  // namespace llmco2::testing_support
