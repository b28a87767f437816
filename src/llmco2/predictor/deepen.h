// predictor/deepen.h - the DeepEn baseline: one row per kernel and phase, a random forest per quantity predicting
// each kernel's energy (latency), summed over kernels x layers. No hardware features and no phase-aware graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "predictor/model_file.h"
#include "predictor/module.h"
#include "predictor/predictor.h"

namespace llmco2::predictor {

struct KernelRow {
  std::vector<float> features;  // kDeepEnFeatures
  double repeats = 1;           // layers for layer kernels, 1 for step kernels
  double roofline_time_s = 0;   // ideal time on its GPU: only to attribute measured totals to kernels in training
  bool prefill = true;
};

int deepen_feature_count();
std::vector<KernelRow> deepen_kernel_rows(const PredictorInput& config);

// An XGBoost booster held by handle; loaded from the model file's blob.
class Forest {
 public:
  explicit Forest(const std::string& raw_model);  // throws Error
  Forest(const Forest&) = delete;
  Forest& operator=(const Forest&) = delete;
  ~Forest();
  std::vector<float> predict(const std::vector<float>& rows, long row_count, int columns) const;
  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
};

std::unique_ptr<Predictor> make_deepen_predictor(const ModelFile& file, const std::string& source);

}  // namespace llmco2::predictor
