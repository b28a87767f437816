// trace/trace_account.h - the energy, latency and carbon of every request of a log on one setup, and what the log
// adds up to: totals, the per-request distribution, energy per token, a timeline and the prefill/decode shares.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "carbon/footprint.h"
#include "dataset/request_log.h"
#include "trace/shape_table.h"

namespace llmco2 {

struct RequestFigures {
  long line = 0;
  std::optional<double> time_s;
  long prompt_tokens = 0, gen_tokens = 0;
  std::optional<double> energy_prefill_j, energy_decode_j;  // unset when the predictor knows totals only
  std::optional<double> co2_prefill_g;                      // operational + embodied of the prefill phase
  double energy_j = 0, latency_s = 0, operational_g = 0, embodied_g = 0;
  bool embodied_known = true;  // false: embodied_g is 0 because the GPU has no embodied figure
  double total_g() const { return operational_g + embodied_g; }
};

struct Distribution {
  double mean = 0, p10 = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

struct TimelineBin {
  double start_s = 0;  // seconds since 1970-01-01 UTC
  long requests = 0;
  double energy_j = 0, co2_g = 0;
};

// The most bins a timeline lists with its empty ones (100,000: 11 years of hours, 69 days of minutes). A log whose
// span needs more (only possible with --keep-time-outliers) lists only the bins that hold requests.
inline constexpr long kMaxTimelineBins = 100000;

struct TraceAccount {
  long requests = 0;
  long skipped_lines = 0;   // not read (malformed)
  long skipped_shapes = 0;  // read, but longer than the setup serves (context window or memory)
  std::vector<SkippedLine> skipped_examples;
  long prompt_tokens = 0, gen_tokens = 0;
  double energy_j = 0, latency_s = 0, operational_g = 0, embodied_g = 0;
  double gpu_busy_s = 0;  // GPU-seconds: the batches' latencies x GPU count
  // Set when the GPU has no embodied figure ("unknown (no sourced embodied figure for b200)"): embodied_g is 0 and
  // every CO2 total is operational only.
  std::optional<std::string> embodied_unknown;
  std::optional<double> energy_prefill_j, energy_decode_j, co2_prefill_g, co2_decode_g;
  Distribution energy_per_request_j, co2_per_request_g, latency_per_request_s;
  double total_g() const { return operational_g + embodied_g; }
  // 80% intervals of the totals: the predictor's error band applied to them (one setup's errors are systematic, so
  // they do not average out over requests).
  std::optional<Interval> energy_j_interval, total_g_interval;
  std::vector<TimelineBin> hourly, timeline;  // timeline: bins of timeline_bin_s (empty without timestamps)
  double timeline_bin_s = 0;
  size_t predictions_made = 0;  // predictor calls (grid nodes)
};

struct TraceOptions {
  long batch = 1;           // requests served together: each is charged 1/batch of its batch's energy and embodied CO2
  double grid_ratio = 1.1;  // shape table grid (1: every distinct shape predicted exactly)
  double timeline_bin_s = 0;  // 0: an hour for spans over 6 hours, else a minute
  bool progress = false;
};

// Scores every request of `log` on the setup of `base` (model, GPU, GPU count, precision; batch from options).
// `per_request` (optional) receives each scored request's figures in log order.
TraceAccount account_trace(const RequestLog& log, const Predictor& predictor, const SimConfig& base,
                           const CarbonInputs& carbon, const PredictorErrorBands* bands, const TraceOptions& options,
                           std::vector<RequestFigures>* per_request = nullptr);

}  // namespace llmco2
