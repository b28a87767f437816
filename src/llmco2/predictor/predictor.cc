// predictor/predictor.cc - the simulator, LLMCarbon and GNN predictors, and loading a predictor from its file.
#include "predictor/predictor.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "graph/kernel_graph.h"
#include "predictor/deepen.h"
#include "predictor/gnn.h"
#include "predictor/gnn_prepared.h"
#include "predictor/setup_cache.h"

namespace llmco2::predictor {
namespace {

// The simulator, a SetupSimulator kept for each setup that comes again (the same results as simulate(), bit for
// bit); simulate() itself for a setup's first request and for a setup or counts the model rejects, whose errors it
// reports.
class SimPredictor final : public Predictor {
 public:
  explicit SimPredictor(SimParams params) : params_(std::move(params)) {}
  std::string name() const override { return "sim"; }
  Prediction predict(const PredictorInput& c) const override {
    const SimResult r = simulate_setup(c);
    return phase_prediction(r.energy_j.prefill * c.batch_scale, r.energy_j.decode * c.batch_scale, r.latency_s.prefill,
                            r.latency_s.decode);
  }

 private:
  SimResult simulate_setup(const PredictorInput& c) const {
    const std::optional<SimResult> r = cache_.with_state(
        c, [&] { return std::make_unique<SetupSimulator>(*c.model, *c.gpu, c.request, c.scenario, params_); },
        [&](SetupSimulator& s) -> std::optional<SimResult> { return s.simulate(c.request); });
    return r ? *r : simulate(*c.model, *c.gpu, c.request, c.scenario, params_);
  }

  SimParams params_;
  mutable SetupCache<SetupSimulator> cache_{16};
};

class LlmCarbonPredictor final : public Predictor {
 public:
  explicit LlmCarbonPredictor(double utilisation) : utilisation_(utilisation) {}
  std::string name() const override { return "llmcarbon"; }
  Prediction predict(const PredictorInput& c) const override {
    const KernelGraph graph = build_kernel_graph(*c.model, c.request);
    const double peak = c.gpu->matrix_peak(c.request.precision.compute_dtype()).ops_per_s;
    const double work = c.batch_scale * c.scenario.data_parallel;  // FLOPs of all replicas, at the row's batch
    double time_s[2] = {}, energy_j[2] = {};
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

// The GNN. The encoder and prepared forward pass of each setup that comes again are kept (SetupCache), so a request
// of a known setup costs its counts' arithmetic and the network; the plain path (encode_graph, gnn_forward) serves a
// setup's first request and what the prepared path cannot take: builds
// where the prepared pass cannot match Eigen, waves and the other requests the setup simulator leaves to simulate(),
// and invalid setups and counts, whose errors it reports.
class GnnPredictor final : public Predictor {
 public:
  GnnPredictor(GnnWeights weights, SimParams params)
      : weights_(std::move(weights)), params_(std::move(params)), by_input_(sage_weights_by_input(weights_)) {}
  std::string name() const override { return weights_.info.value("name", "llmco2"); }
  Prediction predict(const PredictorInput& c) const override {
    if (by_input_) {
      if (auto y = predict_prepared(c)) return prediction(*y);
    }
    const EncodedGraph g = encode_graph(c, weights_.features, params_);
    return prediction({gnn_forward(weights_, g), g.has_decode});
  }

 private:
  struct Prepared {
    Prepared(const PredictorInput& setup, FeatureSet set, const SimParams& params) : encoder(setup, set, params) {}
    SetupEncoder encoder;
    std::optional<PreparedGnnPass> pass;
  };
  struct Outputs {
    std::array<double, kOutputs> y;
    bool has_decode;
  };

  // The network's outputs through the setup's prepared state, or nullopt for the plain path.
  std::optional<Outputs> predict_prepared(const PredictorInput& c) const {
    return cache_.with_state(
        c, [&] { return std::make_unique<Prepared>(c, weights_.features, params_); },
        [&](Prepared& p) -> std::optional<Outputs> {
          if (const EncodedGraph* g = p.encoder.encode(c)) return forward(p, *g);
          return std::nullopt;
        });
  }

  Outputs forward(Prepared& p, const EncodedGraph& g) const {
    if (g.nodes < 2) return {gnn_forward(weights_, g), g.has_decode};
    if (!p.pass || !p.pass->fits(g)) p.pass.emplace(weights_, *by_input_, g, kSetupNodeColumns);
    return {p.pass->forward(weights_, g), g.has_decode};
  }

  Prediction prediction(const Outputs& o) const {
    const auto& y = o.y;
    const double decode_e = o.has_decode ? std::exp(y[energy_decode]) : 0.0;
    const double decode_t = o.has_decode ? std::exp(y[latency_decode]) : 0.0;
    const double pre_e = std::exp(y[energy_prefill]), pre_t = std::exp(y[latency_prefill]);
    if (!weights_.phase_outputs) return total_prediction(pre_e + decode_e, pre_t + decode_t);
    return phase_prediction(pre_e, decode_e, pre_t, decode_t);
  }

  GnnWeights weights_;
  SimParams params_;
  std::optional<SageWeightsByInput> by_input_;  // null: the prepared pass cannot reproduce gnn_forward here
  mutable SetupCache<Prepared> cache_{16};
};

class BoundedPredictor final : public Predictor {
 public:
  explicit BoundedPredictor(std::unique_ptr<Predictor> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  Prediction predict(const PredictorInput& c) const override { return bound_to_power_envelope(c, inner_->predict(c)); }
  std::vector<Prediction> predict_all(const std::vector<PredictorInput>& configs) const override {
    std::vector<Prediction> out = inner_->predict_all(configs);
    for (size_t i = 0; i < out.size(); ++i) out[i] = bound_to_power_envelope(configs[i], std::move(out[i]));
    return out;
  }

 private:
  std::unique_ptr<Predictor> inner_;
};

int gpus_drawing_power(const PredictorInput& c) {
  if (c.scenario.parallelism == Parallelism::layer_split) return c.scenario.layer_split_gpus;
  return c.request.total_gpus() * c.scenario.data_parallel;
}

// Clamps one energy into [idle, TDP] x GPUs x latency; returns a note when it moved.
std::string clamp_energy(std::optional<double>& energy_j, const std::optional<double>& latency_s, double idle_w,
                         double tdp_w, int gpus, std::string_view phase) {
  if (!energy_j || !latency_s || !(*latency_s > 0)) return "";
  const double lo = idle_w * gpus * *latency_s, hi = tdp_w * gpus * *latency_s;
  if (*energy_j >= lo && *energy_j <= hi) return "";
  const double mean_w = *energy_j / (gpus * *latency_s);
  const bool low = *energy_j < lo;
  std::string note = fmt::format("{} energy {:.4g} J implies {:.0f} W per GPU, {} the {} of {:.0f} W; set to {:.4g} J",
                                 phase, *energy_j, mean_w, low ? "below" : "above", low ? "idle power" : "TDP",
                                 low ? idle_w : tdp_w, low ? lo : hi);
  *energy_j = low ? lo : hi;
  return note;
}

}  // namespace

Prediction bound_to_power_envelope(const PredictorInput& c, Prediction p) {
  const int gpus = gpus_drawing_power(c);
  const double tdp_w = power_limit_w(c.scenario.power, *c.gpu);
  const double idle_w = c.gpu->idle_w;
  // Data-parallel and fractional batches: latency is one replica's wall time, energy covers row.batch requests.
  const double scale = c.batch_scale;
  auto clamp = [&](std::optional<double>& e, const std::optional<double>& t, std::string_view phase) {
    if (!e) return;
    std::optional<double> per_batch = *e / scale;
    const std::string note = clamp_energy(per_batch, t, idle_w, tdp_w, gpus, phase);
    if (note.empty()) return;
    *e = *per_batch * scale;
    p.bounded = true;
    p.notes.push_back(note);
  };
  clamp(p.energy_j.prefill, p.latency_s.prefill, "prefill");
  clamp(p.energy_j.decode, p.latency_s.decode, "decode");
  if (p.energy_j.prefill && p.energy_j.decode) p.energy_j.total = *p.energy_j.prefill + *p.energy_j.decode;
  clamp(p.energy_j.total, p.latency_s.total, "total");
  return p;
}

std::unique_ptr<Predictor> make_bounded_predictor(std::unique_ptr<Predictor> inner) {
  return std::make_unique<BoundedPredictor>(std::move(inner));
}

std::vector<Prediction> Predictor::predict_all(const std::vector<PredictorInput>& configs) const {
  std::vector<Prediction> out;
  out.reserve(configs.size());
  for (const auto& c : configs) out.push_back(predict(c));
  return out;
}

Prediction phase_prediction(double e_pre, double e_dec, double t_pre, double t_dec) {
  return {{e_pre, e_dec, e_pre + e_dec}, {t_pre, t_dec, t_pre + t_dec}, false, {}};
}

Prediction total_prediction(double energy_j, double latency_s) {
  return {{std::nullopt, std::nullopt, energy_j}, {std::nullopt, std::nullopt, latency_s}, false, {}};
}

std::unique_ptr<Predictor> make_sim_predictor(const SimParams& params) {
  return std::make_unique<SimPredictor>(params);
}

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

}  // namespace llmco2::predictor
