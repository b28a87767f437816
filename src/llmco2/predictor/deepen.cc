// predictor/deepen.cc - DeepEn's per-kernel rows and its forest predictor (XGBoost C API).
#include "predictor/deepen.h"

#include <cmath>

#include "core/error.h"
#include "features/features.h"
#include "graph/kernel_graph.h"
#include "predictor/encoding.h"
#include "predictor/forest_check.h"
#include "predictor/xgboost_library.h"

namespace llmco2::predictor {
namespace {

KernelRow kernel_row(const KernelNode& node, const NodeFeatures& roof, Phase phase, bool step, const PredictorInput& c,
                     int layers) {
  KernelRow row;
  row.prefill = phase == Phase::prefill;
  row.repeats = step ? 1.0 : layers;
  row.roofline_time_s = roof.at(phase).time_s;
  auto& f = row.features;
  for (int t = 0; t < kKernelTypeCount; ++t) f.push_back(static_cast<int>(node.type) == t ? 1.0f : 0.0f);
  const KernelCost& cost = node.cost(phase);
  const Request& r = c.request;
  for (double v : {static_cast<double>(node.d_in), static_cast<double>(node.d_out), cost.ops, cost.mem_bytes(),
                   cost.net_bytes, static_cast<double>(r.batch) * c.batch_scale, static_cast<double>(r.prompt_tokens),
                   static_cast<double>(r.gen_tokens), static_cast<double>(r.gpus)})
    f.push_back(log_feature(v));
  f.push_back(row.prefill ? 1.0f : 0.0f);
  f.push_back(step ? 1.0f : 0.0f);
  f.push_back(node.expert.empty() ? 0.0f : 1.0f);
  f.push_back(static_cast<float>(8 * dtype_bytes(r.precision.weights)));
  f.push_back(c.scenario.measures == Measures::steady_state ? 1.0f : 0.0f);
  f.push_back(c.scenario.kv_cache ? 0.0f : 1.0f);
  return row;
}

class DeepEnPredictor final : public Predictor {
 public:
  DeepEnPredictor(const std::string& energy, const std::string& latency) : energy_(energy), latency_(latency) {}
  std::string name() const override { return "deepen"; }
  Prediction predict(const PredictorInput& config) const override { return predict_all({config}).front(); }
  std::vector<Prediction> predict_all(const std::vector<PredictorInput>& configs) const override;

 private:
  Forest energy_, latency_;
};

std::vector<Prediction> DeepEnPredictor::predict_all(const std::vector<PredictorInput>& configs) const {
  std::vector<float> matrix;
  std::vector<std::vector<KernelRow>> rows;
  for (const auto& c : configs) {
    rows.push_back(deepen_kernel_rows(c));
    for (const auto& k : rows.back()) matrix.insert(matrix.end(), k.features.begin(), k.features.end());
  }
  const long count = static_cast<long>(matrix.size() / deepen_feature_count());
  const auto energy = energy_.predict(matrix, count, deepen_feature_count());
  const auto latency = latency_.predict(matrix, count, deepen_feature_count());
  std::vector<Prediction> out;
  size_t at = 0;
  for (const auto& kernels : rows) {
    double e[2] = {0, 0}, t[2] = {0, 0};
    for (const auto& k : kernels) {
      const int phase = k.prefill ? 0 : 1;
      e[phase] += k.repeats * std::exp(static_cast<double>(energy[at]));
      t[phase] += k.repeats * std::exp(static_cast<double>(latency[at]));
      ++at;
    }
    out.push_back(phase_prediction(e[0], e[1], t[0], t[1]));
  }
  return out;
}

}  // namespace

int deepen_feature_count() { return kKernelTypeCount + 9 + 6; }

std::vector<KernelRow> deepen_kernel_rows(const PredictorInput& c) {
  const KernelGraph graph = build_kernel_graph(*c.model, c.request);
  const GraphFeatures roof = compute_features(graph, *c.gpu, c.request);
  std::vector<KernelRow> rows;
  std::vector<Phase> phases = {Phase::prefill};
  if (c.request.gen_tokens > 1) phases.push_back(Phase::decode);
  for (Phase phase : phases) {
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      rows.push_back(kernel_row(graph.nodes[i], roof.nodes[i], phase, false, c, graph.layers));
    for (size_t i = 0; i < graph.step_nodes.size(); ++i)
      rows.push_back(kernel_row(graph.step_nodes[i], roof.step_nodes[i], phase, true, c, graph.layers));
  }
  return rows;
}

Forest::Forest(const std::string& raw_model) {
  const XgboostApi& xgb = xgboost_api();
  check_xgboost(xgb.booster_create(nullptr, 0, &handle_), "create booster");
  if (xgb.booster_load_model_from_buffer(handle_, raw_model.data(), raw_model.size()) != 0) {
    const std::string error = xgb.get_last_error();
    xgb.booster_free(handle_);
    fail("xgboost: cannot load the forest: {}", error);
  }
}

Forest::~Forest() { xgboost_api().booster_free(handle_); }

std::vector<float> Forest::predict(const std::vector<float>& rows, long row_count, int columns) const {
  const XgboostApi& xgb = xgboost_api();
  DMatrixHandle matrix = nullptr;
  check_xgboost(xgb.dmatrix_create_from_mat(rows.data(), static_cast<bst_ulong>(row_count),
                                            static_cast<bst_ulong>(columns), std::nanf(""), &matrix),
                "matrix");
  bst_ulong length = 0;
  const float* result = nullptr;
  const int status = xgb.booster_predict(handle_, matrix, 0, 0, 0, &length, &result);
  std::vector<float> out;
  if (status == 0) out.assign(result, result + length);
  xgb.dmatrix_free(matrix);
  check_xgboost(status, "predict");
  return out;
}

std::unique_ptr<Predictor> make_deepen_predictor(const ModelFile& file, const std::string& source) {
  const auto energy = file.blobs.find("energy_forest"), latency = file.blobs.find("latency_forest");
  if (energy == file.blobs.end() || latency == file.blobs.end())
    fail("{}: DeepEn model lacks its energy or latency forest", source);
  const auto count = file.header.find("feature_count");
  if (count == file.header.end() || !count->is_number_integer() || count->get<long>() != deepen_feature_count())
    fail("{}: DeepEn model has {} features, this build uses {} (retrain it)", source,
         count == file.header.end() ? "no" : count->dump(), deepen_feature_count());
  const int features = deepen_feature_count();
  std::string energy_model = checked_forest(energy->second, features, source, "energy_forest");
  return std::make_unique<DeepEnPredictor>(energy_model,
                                           checked_forest(latency->second, features, source, "latency_forest"));
}

}  // namespace llmco2::predictor
