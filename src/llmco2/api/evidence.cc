// api/evidence.cc - a request's evidence label and the interval of its kind.
#include "api/evidence.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace llmco2::api {
namespace {

ErrorBand band_of(const evidence::RatioInterval& i) {
  ErrorBand b;
  b.n = i.n;
  b.lower = i.lower;
  b.upper = i.upper;
  b.low_ratio = i.lower;
  b.high_ratio = i.upper;
  b.median_ratio = i.median;
  b.factor = std::max(i.upper, 1.0 / i.lower);
  return b;
}

// "; held out, it covered 45% of 94 rows (2 sources) in this regime (...)", or "" where none was held out there.
std::string coverage_part(const evidence::RegimeCoverages& coverages, evidence::EvidenceLabel label,
                          const evidence::Regime& regime, std::optional<double>& covered) {
  const auto it = coverages.find({label, regime});
  if (it == coverages.end()) return "";
  covered = it->second.covered;
  return "; " + evidence::coverage_sentence(it->second, regime);
}

// The simulator's interval for the label, from its held-out residuals of that kind, with its held-out coverage in the
// request's regime.
void label_interval(RequestEvidence& out, const evidence::EvidenceIntervals& intervals, evidence::EvidenceLabel label,
                    const evidence::Regime& regime) {
  const auto energy = intervals.energy.find(label), latency = intervals.latency.find(label);
  out.level = intervals.level;
  if (energy == intervals.energy.end() || latency == intervals.latency.end()) {
    out.interval_note =
        fmt::format("no interval: no held-out residual labelled {} ({})", evidence::label_name(label), intervals.basis);
    return;
  }
  out.bands = PredictorErrorBands{band_of(energy->second), band_of(latency->second)};
  out.energy_bias = energy->second.median;
  out.latency_bias = latency->second.median;
  const std::string energy_coverage = coverage_part(intervals.energy_coverage, label, regime, out.energy_coverage);
  const std::string latency_coverage = coverage_part(intervals.latency_coverage, label, regime, out.latency_coverage);
  out.interval_note = fmt::format("energy: {}{}; latency: x{:.2f}-x{:.2f}, median measured/predicted {:.2f}{} ({})",
                                  evidence::interval_sentence(energy->second, intervals.level, label), energy_coverage,
                                  latency->second.lower, latency->second.upper, latency->second.median,
                                  latency_coverage, intervals.basis);
}

// A site profile calibrates a setup when the site's rows pin down (kIdentifiedDataShare) a correction of its GPU type:
// the label is then `calibrated`, said to be the site's, with what the public sources alone would have said.
void site_evidence(RequestEvidence& out, const SiteProfile& site, const Gpu& gpu) {
  std::vector<std::string> pinned;
  size_t rows = 0;
  for (const SiteCorrection& c : site.corrections)
    if (c.target == gpu.id && c.data_share >= kIdentifiedDataShare) {
      pinned.emplace_back(site_knob(c.knob).name);
      rows = std::max(rows, c.rows);
    }
  if (pinned.empty() || !out.evidence) return;
  out.site = site.name;
  out.evidence->reason = fmt::format(
      "calibrated on site {}: {} of its rows on {} pin down {}; against the public sources alone: {}: {}", site.name,
      rows, gpu.id, fmt::join(pinned, ", "), evidence::label_name(out.evidence->label), out.evidence->reason);
  out.evidence->label = evidence::EvidenceLabel::calibrated;
}

// No measured row (public or a site's) ran speculative decoding: its acceptance and draft work rest on the published
// figures of data/engines/speculation.json alone, so a speculative request is `extrapolated`.
void speculative_evidence(RequestEvidence& out, const Speculation& spec) {
  if (!spec.active() || !out.evidence) return;
  out.evidence->reason = fmt::format(
      "speculative decoding ({}, {} draft tokens): no measured row ran it, its {:.2f} tokens per step are {}; "
      "without it: {}: {}",
      spec.method, spec.draft_tokens, spec.tokens_per_step(), spec.acceptance_basis,
      evidence::label_name(out.evidence->label), out.evidence->reason);
  out.evidence->label = evidence::EvidenceLabel::extrapolated;
}

// The measured rows with pipeline stages (ML.ENERGY v2, vLLM 0.5.4, TP 8 x PP 2 over two nodes) are held out of every
// fit and the simulator misses them by more than the rows without (docs/serving.md, "Pipeline parallelism"): a
// request with stages is `extrapolated`.
void pipeline_evidence(RequestEvidence& out, int stages) {
  if (stages <= 1 || !out.evidence) return;
  out.evidence->reason = fmt::format(
      "{} pipeline stages: the 17 measured rows with stages (ML.ENERGY v2, vLLM 0.5.4, TP 8 x PP 2) are held out of "
      "every fit and simulated below their measured energy and time (docs/serving.md, Pipeline parallelism); "
      "without stages: {}: {}",
      stages, evidence::label_name(out.evidence->label), out.evidence->reason);
  out.evidence->label = evidence::EvidenceLabel::extrapolated;
}

// No measured energy of a disaggregated deployment is in ../shared: `extrapolated`, the reason saying what was
// compared.
void disaggregation_evidence(RequestEvidence& out) {
  if (!out.evidence) return;
  out.evidence->reason = fmt::format(
      "disaggregated prefill and decode: no measured energy of such a deployment; its latencies and goodput are "
      "compared with vLLM's disaggregation benchmark and DistServe's only (docs/serving.md, Disaggregated prefill and "
      "decode); co-located: {}: {}",
      evidence::label_name(out.evidence->label), out.evidence->reason);
  out.evidence->label = evidence::EvidenceLabel::extrapolated;
}

RequestEvidence setup_evidence(const LoadedPredictor& p, const Gpu& gpu, const std::string& engine,
                               const Precision& precision, const std::string& family, double batch,
                               double context_tokens, const Speculation& spec, int stages, bool disaggregated) {
  RequestEvidence out;
  const evidence::EvidenceKey key = evidence::evidence_key(gpu, engine, precision, family, batch, context_tokens);
  const evidence::Regime regime = evidence::regime_of(key);
  if (p.evidence_index) {
    out.evidence = p.evidence_index->assess(key);
    out.regime = evidence::regime_name(regime);
    if (p.site) site_evidence(out, *p.site, gpu);
    speculative_evidence(out, spec);
    pipeline_evidence(out, stages);
    if (disaggregated) disaggregation_evidence(out);
  }
  if (p.evidence_intervals && out.evidence) {
    label_interval(out, *p.evidence_intervals, out.evidence->label, regime);
    return out;
  }
  out.bands = p.bands;  // the predictor's one band (llmco2 eval), or none
  out.level = p.band_level;
  out.interval_note = p.bands_note;
  if (p.bands && p.bands->energy) out.energy_bias = p.bands->energy->median_ratio;
  if (p.bands && p.bands->latency) out.latency_bias = p.bands->latency->median_ratio;
  return out;
}

}  // namespace

RequestEvidence request_evidence(const LoadedPredictor& p, const ResolvedRequest& r,
                                 std::optional<double> context_tokens) {
  return setup_evidence(p, r.gpu, r.request.engine, r.request.precision, r.model.family,
                        static_cast<double>(r.request.batch),
                        context_tokens.value_or(static_cast<double>(r.request.prompt_tokens + r.request.gen_tokens)),
                        r.speculation, r.request.pipeline_parallel, false);
}

RequestEvidence replay_evidence(const LoadedPredictor& simulator, const ResolvedRequest& r, double mean_batch,
                                double context_tokens, bool disaggregated) {
  return setup_evidence(simulator, r.gpu, r.request.engine, r.request.precision, r.model.family,
                        std::max(1.0, mean_batch), context_tokens, r.speculation, r.request.pipeline_parallel,
                        disaggregated);
}

Json evidence_json(const RequestEvidence& e) {
  Json nearest = Json::array();
  if (e.evidence)
    for (const auto& n : e.evidence->nearest)
      nearest.push_back({{"source", n.source}, {"setup", n.setup}, {"rows", n.rows}});
  auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(); };
  return {
      {"label", e.evidence ? Json(std::string(evidence::label_name(e.evidence->label))) : Json()},
      {"reason", e.evidence ? e.evidence->reason
                            : std::string("no evidence index (data/evidence/index.csv; llmco2 validate writes it)")},
      {"nearest_sources", nearest},
      {"interval_basis", e.interval_note},
      {"bias", {{"energy", optional(e.energy_bias)}, {"latency", optional(e.latency_bias)}}},
      {"regime", e.regime.empty() ? Json() : Json(e.regime)},
      {"site", e.site.empty() ? Json() : Json(e.site)},
      {"regime_coverage", {{"energy", optional(e.energy_coverage)}, {"latency", optional(e.latency_coverage)}}}};
}

Json total_intervals_json(const RequestEvidence& e, double energy_j, double latency_s, double operational_g,
                          double embodied_g) {
  if (!e.bands || !e.bands->energy || !e.bands->latency) return nullptr;
  const BandSpan energy = band_span(*e.bands->energy, energy_j), latency = band_span(*e.bands->latency, latency_s);
  const BandSpan operational = band_span(*e.bands->energy, operational_g);
  const BandSpan embodied = band_span(*e.bands->latency, embodied_g);
  return {{"level", e.level},
          {"energy_j", {{"total", {energy.low, energy.high}}}},
          {"latency_s", {{"total", {latency.low, latency.high}}}},
          {"co2_g",
           {{"operational", {{"total", {operational.low, operational.high}}}},
            {"total", {{"total", {operational.low + embodied.low, operational.high + embodied.high}}}}}}};
}

std::string evidence_label_line(const RequestEvidence& e) {
  if (!e.evidence) return "  evidence: unknown (no evidence index: llmco2 validate writes data/evidence/index.csv)\n";
  return fmt::format("  evidence: {}: {}\n", evidence::label_name(e.evidence->label), e.evidence->reason);
}

std::string evidence_lines(const RequestEvidence& e) { return evidence_label_line(e) + "  " + e.interval_note + "\n"; }

}  // namespace llmco2::api
