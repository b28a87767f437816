// predictor/predictor.cc - the simulator, LLMCarbon and GNN predictors, and loading a predictor from its file.
#include "predictor/predictor.h"

#include <cmath>

#include "core/error.h"
#include "graph/kernel_graph.h"
#include "predictor/deepen.h"
#include "predictor/gnn.h"

namespace llmco2 {
namespace {

class SimPredictor final : public Predictor {
 public:
  explicit SimPredictor(SimParams params) : params_(std::move(params)) {}
  std::string name() const override { return "sim"; }
  Prediction predict(const SimConfig& c) const override {
    const SimResult r = simulate(*c.model, *c.gpu, c.request, c.scenario, params_);
    return phase_prediction(r.energy_j.prefill * c.batch_scale, r.energy_j.decode * c.batch_scale, r.latency_s.prefill,
                            r.latency_s.decode);
  }

 private:
  SimParams params_;
};

class LlmCarbonPredictor final : public Predictor {
 public:
  explicit LlmCarbonPredictor(double utilisation) : utilisation_(utilisation) {}
  std::string name() const override { return "llmcarbon"; }
  Prediction predict(const SimConfig& c) const override {
    const KernelGraph graph = build_kernel_graph(*c.model, c.request);
    const double peak = c.gpu->matrix_peak(c.request.precision.compute_dtype()).ops_per_s;
    const double work = c.batch_scale * c.scenario.data_parallel;  // FLOPs of all replicas, at the row's batch
    double time_s[2], energy_j[2];
    int i = 0;
    for (Phase phase : {Phase::prefill, Phase::decode}) {
      const double ops = graph.totals(phase).ops;
      time_s[i] = ops * c.batch_scale / (c.request.gpus * peak * utilisation_);
      energy_j[i] = ops * work / (peak * utilisation_) * c.gpu->tdp_w;
      ++i;
    }
    return phase_prediction(energy_j[0], energy_j[1], time_s[0], time_s[1]);
  }

 private:
  double utilisation_;
};

class GnnPredictor final : public Predictor {
 public:
  GnnPredictor(GnnWeights weights, SimParams params) : weights_(std::move(weights)), params_(std::move(params)) {}
  std::string name() const override { return weights_.info.value("name", "llmco2"); }
  Prediction predict(const SimConfig& c) const override {
    const EncodedGraph g = encode_graph(c, weights_.features, params_);
    const auto y = gnn_forward(weights_, g);
    const double decode_e = g.has_decode ? std::exp(y[energy_decode]) : 0.0;
    const double decode_t = g.has_decode ? std::exp(y[latency_decode]) : 0.0;
    const double pre_e = std::exp(y[energy_prefill]), pre_t = std::exp(y[latency_prefill]);
    if (!weights_.phase_outputs) return total_prediction(pre_e + decode_e, pre_t + decode_t);
    return phase_prediction(pre_e, decode_e, pre_t, decode_t);
  }

 private:
  GnnWeights weights_;
  SimParams params_;
};

}  // namespace

std::vector<Prediction> Predictor::predict_all(const std::vector<SimConfig>& configs) const {
  std::vector<Prediction> out;
  out.reserve(configs.size());
  for (const auto& c : configs) out.push_back(predict(c));
  return out;
}

Prediction phase_prediction(double e_pre, double e_dec, double t_pre, double t_dec) {
  return {{e_pre, e_dec, e_pre + e_dec}, {t_pre, t_dec, t_pre + t_dec}};
}

Prediction total_prediction(double energy_j, double latency_s) {
  return {{std::nullopt, std::nullopt, energy_j}, {std::nullopt, std::nullopt, latency_s}};
}

std::unique_ptr<Predictor> make_sim_predictor(const SimParams& params) { return std::make_unique<SimPredictor>(params); }

std::unique_ptr<Predictor> make_llmcarbon_predictor(double utilisation) {
  if (!(utilisation > 0 && utilisation <= 1)) fail("LLMCarbon utilisation must be in (0, 1], got {}", utilisation);
  return std::make_unique<LlmCarbonPredictor>(utilisation);
}

std::unique_ptr<Predictor> load_predictor(const std::filesystem::path& path, const SimParams& params) {
  const ModelFile file = read_model_file(path);
  const std::string kind = file.header.value("kind", "");
  if (kind == "gnn") return std::make_unique<GnnPredictor>(gnn_from_file(file, path.string()), params);
  if (kind == "deepen") return make_deepen_predictor(file, path.string());
  if (kind == "llmcarbon") {
    if (!file.header.contains("utilisation") || !file.header["utilisation"].is_number())
      fail("{}: LLMCarbon model lacks a numeric 'utilisation'", path.string());
    return make_llmcarbon_predictor(file.header["utilisation"].get<double>());
  }
  fail("{}: unknown predictor kind '{}' (expected gnn, deepen or llmcarbon)", path.string(), kind);
}

}  // namespace llmco2
