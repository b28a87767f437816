// api/evidence.h - the evidence behind one answer: the request's label (calibrated, interpolated, extrapolated) with
// its nearest measured sources (evidence/evidence.h), and the interval of its kind with its basis and bias
// (evidence/intervals.h) for the simulator, or the predictor's own error band for a learned predictor. Every
// interface prints it beside the figures (predict, compare, trace, HTTP, Python, the web page).
#pragma once

#include <optional>
#include <string>

#include "api/module.h"
#include "api/resolve.h"
#include "core/json_io.h"
#include "evidence/evidence.h"

namespace llmco2::api {

struct RequestEvidence {
  std::optional<evidence::Evidence> evidence;  // absent when data/evidence/index.csv is missing
  std::optional<PredictorErrorBands> bands;    // the interval the figures carry; absent: none
  std::string interval_note;                   // its basis, or why there is none
  double level = 0.8;
  std::optional<double> energy_bias, latency_bias;  // median measured / predicted of the request's kind
  std::string regime;                               // "batch 1-3, context <1k"; "" without an index
  std::string site;  // the site profile whose own rows calibrate this setup (its GPU type); "" when none does
  // How often the interval covered held-out rows of the request's label in its regime; absent: none measured there.
  std::optional<double> energy_coverage, latency_coverage;
};

// The evidence of a resolved request: its GPU, engine and precision as it runs, its model's family and batch, at its
// prompt + output tokens or, for a log's requests, at `context_tokens`.
RequestEvidence request_evidence(const LoadedPredictor& predictor, const ResolvedRequest& r,
                                 std::optional<double> context_tokens = std::nullopt);

// A serving replay's: its setup at the batch it ran at (the mean running requests) and its requests' mean context;
// a disaggregated deployment's is `extrapolated` (no measured energy of one), its interval that label's.
RequestEvidence replay_evidence(const LoadedPredictor& simulator, const ResolvedRequest& r, double mean_batch,
                                double context_tokens, bool disaggregated = false);

// {"label", "reason", "nearest_sources": [{"source", "setup", "rows"}], "interval_basis", "bias": {"energy",
// "latency"}, "regime", "regime_coverage": {"energy", "latency"}, "site"} (docs/schema.md); the label null without an
// index.
Json evidence_json(const RequestEvidence& e);
// The intervals of totals (energy, latency, operational and total CO2) as `footprint_json` writes them, for answers
// that carry totals only (compare's rows); null without an interval.
Json total_intervals_json(const RequestEvidence& e, double energy_j, double latency_s, double operational_g,
                          double embodied_g);
// "  evidence: interpolated: <reason>\n"
std::string evidence_label_line(const RequestEvidence& e);
// The label line, then "  <interval basis>\n"
std::string evidence_lines(const RequestEvidence& e);

}  // namespace llmco2::api
