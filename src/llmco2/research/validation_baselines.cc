// research/validation_baselines.cc - held-out baselines and ranking quality for `llmco2 validate`.
#include "research/validation_baselines.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "api/resolve.h"
#include "core/accuracy.h"
#include "core/error.h"
#include "features/features.h"
#include "graph/kernel_graph.h"
#include "predictor/predictor.h"
#include "predictor/registry.h"
#include "sim/sim_params.h"

namespace llmco2::research {
namespace {

const DatasetRow& row_of(const CalibrationSet& set, size_t sample) { return set.rows[set.samples[sample].row]; }

// Each sample's totals as `predictor` gives them, no fit; none where it cannot take the row (a model or GPU it lacks).
BaselineEstimates predictions_of(const CalibrationSet& set, const predictor::Predictor& predictor, std::string name,
                                 std::string description) {
  BaselineEstimates out{std::move(name), std::move(description), std::vector<std::optional<double>>(set.samples.size()),
                        std::vector<std::optional<double>>(set.samples.size())};
  CatalogCache catalogs;
  for (size_t k = 0; k < set.samples.size(); ++k) {
    try {
      const predictor::Prediction p =
          predictor.predict(predictor::predictor_input(config_for_row(row_of(set, k), catalogs)));
      out.energy_j[k] = p.energy_j.total_or_sum();
      out.latency_s[k] = p.latency_s.total_or_sum();
    } catch (const Error&) {
      // no figure, as EcoLogits has none without a parameter count
    }
  }
  return out;
}

BaselineEstimates llmcarbon(const CalibrationSet& set) {
  // At u = 1; energy and time scale as 1 / u.
  const BaselineEstimates unit = predictions_of(set, *predictor::make_llmcarbon_predictor(1.0), "", "");
  BaselineEstimates out{"llmcarbon",
                        "LLMCarbon's FLOP equation (time = FLOPs / (GPUs x peak x u), energy = time x GPUs x TDP), one "
                        "utilisation u fitted on the other sources' energies",
                        std::vector<std::optional<double>>(set.samples.size()),
                        std::vector<std::optional<double>>(set.samples.size())};
  for (const std::string& source : set.sources()) {
    double log_sum = 0;
    size_t n = 0;
    for (size_t k = 0; k < set.samples.size(); ++k) {
      const auto& e = unit.energy_j[k];
      if (row_of(set, k).source == source || !e || !(*e > 0) || !set.samples[k].energy_j) continue;
      log_sum += std::log(*e / *set.samples[k].energy_j);
      ++n;
    }
    const double u = n ? std::clamp(std::exp(log_sum / static_cast<double>(n)), 1e-4, 1.0) : 1.0;
    for (size_t k = 0; k < set.samples.size(); ++k) {
      if (row_of(set, k).source != source) continue;
      if (const auto& e = unit.energy_j[k]) out.energy_j[k] = *e / u;
      if (const auto& t = unit.latency_s[k]) out.latency_s[k] = *t / u;
    }
  }
  return out;
}

// LLM-Viewer (Yuan et al. 2024, "LLM Inference Unveiled: Survey and Roofline Model Insights", arXiv 2402.16363;
// github.com/hahnyuan/LLM-Viewer, its README's workflow), re-implemented from that description: each layer's
// operations and memory accesses (weights, activations, KV cache) priced at the GPU's peak compute and memory
// bandwidth, the Roofline bound of each, summed over the layers for the prefill and every decode step; no kernel
// efficiency, engine overhead or power model. The operations and bytes are llmco2's kernel graph (the same counts
// LLM-Viewer derives from the model's layers), a tensor-parallel all-reduce at the link's bandwidth. LLM-Viewer gives
// no energy: time x GPUs x TDP, as LLMCarbon assumes, stands in for it.
double roofline_time_s(const std::vector<NodeFeatures>& nodes, Phase phase, double times) {
  double t = 0;
  for (const NodeFeatures& n : nodes) t += n.at(phase).time_s * times;
  return t;
}

BaselineEstimates llm_viewer(const CalibrationSet& set) {
  CatalogCache catalogs;
  BaselineEstimates out{"llm-viewer",
                        "LLM-Viewer's Roofline (each kernel's operations and bytes at the GPU's peak compute and "
                        "bandwidth, summed over layers and steps; energy = time x GPUs x TDP), no fit",
                        std::vector<std::optional<double>>(set.samples.size()),
                        std::vector<std::optional<double>>(set.samples.size())};
  for (size_t k = 0; k < set.samples.size(); ++k) {
    const predictor::PredictorInput c = predictor::predictor_input(config_for_row(row_of(set, k), catalogs));
    const KernelGraph graph = build_kernel_graph(*c.model, c.request);
    const GraphFeatures f = compute_features(graph, *c.gpu, c.request);
    double time_s = 0;
    for (Phase phase : {Phase::prefill, Phase::decode})
      time_s += roofline_time_s(f.nodes, phase, graph.layers) + roofline_time_s(f.step_nodes, phase, 1);
    out.latency_s[k] = time_s;
    out.energy_j[k] = time_s * c.gpu->tdp_w * c.request.gpus * c.scenario.data_parallel;
  }
  return out;
}

// EcoLogits 0.9.1 (genai-impact/ecologits, docs/methodology/llm_inference.md and ecologits/impacts/llm.py,
// constants of commit 79e5b1f, 2025-10-09): per output token and GPU, energy f_E(P, B) = alpha e^(beta B) P + gamma
// Wh and latency f_L(P, B) = a P + b B + c s, P the active parameters in billions, B the batch; fitted on the ML.ENERGY
// leaderboard's H100 runs (vLLM, batch <= 512). Prompt tokens do not count.
constexpr double kEcoEnergyAlpha = 1.1665273170451914e-06, kEcoEnergyBeta = -0.011205921025579175,
                 kEcoEnergyGamma = 4.052928146734005e-05;
constexpr double kEcoLatencyAlpha = 0.0006785088094353663, kEcoLatencyBeta = 0.0003119310311688259,
                 kEcoLatencyGamma = 0.019473717579473387;
constexpr double kJoulesPerWh = 3600;

// The row's GPU energy (its `batch` requests on all its GPUs) and request latency by EcoLogits' formula at the row's
// batch; nothing for a row without a parameter count.
BaselineEstimates ecologits(const CalibrationSet& set) {
  BaselineEstimates out{"ecologits",
                        "EcoLogits 0.9.1's published formula (energy per output token and GPU alpha e^(beta B) P + "
                        "gamma, latency a P + b B + c; fitted on ML.ENERGY's H100 runs, so the mlenergy rows are not "
                        "held out from it), no fit here",
                        std::vector<std::optional<double>>(set.samples.size()),
                        std::vector<std::optional<double>>(set.samples.size())};
  for (size_t k = 0; k < set.samples.size(); ++k) {
    const DatasetRow& r = row_of(set, k);
    const auto p = r.arch.active_params_b ? r.arch.active_params_b : r.arch.params_b;
    if (!p || !(*p > 0) || !(r.gen_tokens > 0)) continue;
    const double b = std::max(1.0, r.batch);
    const double wh_per_token = kEcoEnergyAlpha * std::exp(kEcoEnergyBeta * b) * *p + kEcoEnergyGamma;
    out.energy_j[k] = wh_per_token * kJoulesPerWh * r.gen_tokens * r.gpus * b;
    out.latency_s[k] = (kEcoLatencyAlpha * *p + kEcoLatencyBeta * b + kEcoLatencyGamma) * r.gen_tokens;
  }
  return out;
}

}  // namespace

AskedPredictor asked_predictor(const std::string& name, const std::string& model_file) {
  api::Settings settings;
  settings.model_file = model_file;
  api::LoadedPredictor loaded = api::load_predictor(name, settings, load_sim_params_or_default(""));
  AskedPredictor out;
  out.name = model_file.empty() ? name : loaded.predictor->name();
  out.description =
      model_file.empty()
          ? fmt::format(
                "{} (data/predictors/{}.model as bundled, no refit; its training mix held these measured rows, "
                "so its figures are in-sample, not held out)",
                predictor::predictor_info(name).summary, name)
          : fmt::format("{} from {}, no refit (held out only where its training data left these rows out)", out.name,
                        model_file);
  out.predictor = std::move(loaded.predictor);
  return out;
}

BaselineEstimates predictor_estimates(const CalibrationSet& set, const AskedPredictor& asked) {
  return predictions_of(set, *asked.predictor, asked.name, asked.description);
}

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> out(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) out[order[k]] = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    i = j + 1;
  }
  return out;
}

// One setup of a ranking group: its measured and predicted (per predictor) values per request.
struct Member {
  std::string setup;
  double energy = 0, latency = 0;           // measured (geometric mean of its rows)
  std::vector<double> p_energy, p_latency;  // per predictor: 0 = the simulator, then the baselines
  size_t rows = 0;
};

std::string group_key(const DatasetRow& r) {
  const bool steady = r.measures == Measures::steady_state;
  return fmt::format("{}|{}|{}|{:.0f}|{:.0f}|{}|{:.3g}|{}", r.source, r.model, r.dtype, r.prompt_tokens, r.gen_tokens,
                     measures_name(r.measures), steady ? r.max_batch.value_or(r.batch) : r.batch, r.note("task"));
}

// Adds log values (geometric means are taken at the end).
void accumulate(Member& m, const DatasetRow& r, const CalibrationSample& sample, size_t k, const SimEstimate& sim,
                const std::vector<BaselineEstimates>& baselines) {
  const double per = r.batch > 0 ? r.batch : 1.0;
  const size_t predictors = 1 + baselines.size();
  if (m.p_energy.empty()) m.p_energy.assign(predictors, 0), m.p_latency.assign(predictors, 0);
  m.energy += std::log(*sample.energy_j / per);
  m.latency += std::log(*sample.latency_s);
  m.p_energy[0] += std::log(sim.energy_j / per);
  m.p_latency[0] += std::log(sim.latency_s);
  for (size_t b = 0; b < baselines.size(); ++b) {
    m.p_energy[b + 1] += std::log(baselines[b].energy_j[k].value_or(NAN) / per);
    m.p_latency[b + 1] += std::log(baselines[b].latency_s[k].value_or(NAN));
  }
  ++m.rows;
}

struct RankScore {
  size_t groups = 0, spearman_groups = 0;
  double top1 = 0, spearman = 0;
};

void score_group(const std::vector<Member>& members, bool energy, size_t p, RankScore& s) {
  std::vector<double> truth, predicted;
  for (const Member& m : members) {
    truth.push_back(energy ? m.energy : m.latency);
    predicted.push_back(energy ? m.p_energy[p] : m.p_latency[p]);
  }
  if (std::any_of(predicted.begin(), predicted.end(), [](double v) { return !std::isfinite(v); })) return;
  const auto best = [](const std::vector<double>& v) { return std::min_element(v.begin(), v.end()) - v.begin(); };
  ++s.groups;
  s.top1 += best(truth) == best(predicted) ? 1 : 0;
  if (members.size() >= 3) {
    ++s.spearman_groups;
    s.spearman += spearman(truth, predicted);
  }
}

std::string cells(const RankScore& s) {
  return fmt::format(
      "{} | {}", s.groups ? percent(s.top1 / static_cast<double>(s.groups)) : "-",
      s.spearman_groups ? fmt::format("{:.2f}", s.spearman / static_cast<double>(s.spearman_groups)) : "-");
}

}  // namespace

std::vector<BaselineEstimates> held_out_baselines(const CalibrationSet& set) {
  return {llmcarbon(set), ecologits(set), llm_viewer(set)};
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

std::string ranking_markdown(const CalibrationSet& set, const std::vector<SimEstimate>& held_out,
                             const std::vector<BaselineEstimates>& baselines) {
  // source -> group -> setup -> member
  std::map<std::string, std::map<std::string, std::map<std::string, Member>>> groups;
  for (size_t k = 0; k < set.samples.size(); ++k) {
    const DatasetRow& r = row_of(set, k);
    const CalibrationSample& sample = set.samples[k];
    if (!sample.energy_j || !sample.latency_s || !(*sample.energy_j > 0) || !(*sample.latency_s > 0)) continue;
    if (!(held_out[k].energy_j > 0) || !(held_out[k].latency_s > 0)) continue;
    const std::string setup = fmt::format("{} x {} {}", r.gpus, r.gpu, r.engine);
    Member& m = groups[r.source][group_key(r)][setup];
    m.setup = setup;
    accumulate(m, r, sample, k, held_out[k], baselines);
  }
  std::vector<std::string> names = {"llmco2 (simulator)"};
  for (const BaselineEstimates& b : baselines) names.push_back(b.name);
  std::string head = "| source | groups | setups per group | random pick top-1", rule = "|---|---:|---:|---:";
  for (const char* what : {"least energy", "fastest"})
    for (const std::string& n : names) {
      head += fmt::format(" | {}: {} top-1 | Spearman", what, n);
      rule += "|---:|---:";
    }
  std::string out = fmt::format(
      "## Ranking setups\n\nWhat a hardware buyer needs most is the right order. Rows of one source that answer the "
      "same request (model, precision, prompt and output tokens, batch or concurrency, task) on two setups or more "
      "(GPU type, count, engine) form a group; each setup's energy per request and latency (the geometric mean of its "
      "rows) are compared with the held-out predictions (leave one source out). top-1 = share of groups whose setup "
      "with the least measured energy (or latency) is the one predicted least, as published comparisons of energy "
      "predictors report it; Spearman = mean rank correlation over groups of three setups or more; random pick = the "
      "top-1 of choosing a setup at random.\n\n{} |\n{}|\n",
      head, rule);
  std::vector<RankScore> all_energy(names.size()), all_latency(names.size());
  size_t all_count = 0, all_setups = 0;
  double all_random = 0;
  const auto row = [&](const std::string& name, size_t count, size_t setups, double random,
                       const std::vector<RankScore>& energy, const std::vector<RankScore>& latency) {
    out += fmt::format("| {} | {} | {:.1f} | {}", name, count, static_cast<double>(setups) / static_cast<double>(count),
                       percent(random / static_cast<double>(count)));
    for (const auto* scores : {&energy, &latency})
      for (const RankScore& s : *scores) out += " | " + cells(s);
    out += " |\n";
  };
  for (const auto& [source, by_group] : groups) {
    std::vector<RankScore> energy(names.size()), latency(names.size());
    size_t count = 0, setups = 0;
    double random = 0;
    for (const auto& [key, by_setup] : by_group) {
      if (by_setup.size() < 2) continue;
      std::vector<Member> members;
      for (const auto& [setup, m] : by_setup) {
        Member g = m;
        const double n = static_cast<double>(m.rows);
        g.energy /= n, g.latency /= n;
        for (double& v : g.p_energy) v /= n;
        for (double& v : g.p_latency) v /= n;
        members.push_back(g);
      }
      ++count;
      setups += members.size();
      random += 1.0 / static_cast<double>(members.size());
      for (size_t p = 0; p < names.size(); ++p) {
        score_group(members, true, p, energy[p]);
        score_group(members, false, p, latency[p]);
      }
    }
    if (count == 0) continue;
    row(source, count, setups, random, energy, latency);
    all_count += count, all_setups += setups, all_random += random;
    for (size_t p = 0; p < names.size(); ++p)
      for (auto [from, into] : {std::pair{&energy[p], &all_energy[p]}, std::pair{&latency[p], &all_latency[p]}}) {
        into->groups += from->groups, into->spearman_groups += from->spearman_groups;
        into->top1 += from->top1, into->spearman += from->spearman;
      }
  }
  if (all_count > 0) row("all groups", all_count, all_setups, all_random, all_energy, all_latency);
  return out;
}

}  // namespace llmco2::research
