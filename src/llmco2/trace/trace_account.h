// trace/trace_account.h - the energy, latency and carbon of every request of a log on one setup, and what the log
// adds up to: totals, the per-request distribution, energy per token, a timeline and the prefill/decode shares.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "carbon/footprint.h"
#include "core/exact_sum.h"
#include "dataset/request_log.h"
#include "trace/module.h"
#include "trace/shape_table.h"

namespace llmco2::trace {

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

// A value that `count` requests share (every request of one shape has the same figures).
struct WeightedValue {
  double value = 0;
  long count = 1;
};

// Mean and percentiles exactly as over the list with each value repeated `count` times (percentile_of_sorted).
Distribution distribution_of(std::vector<WeightedValue> values);

struct TimelineBin {
  double start_s = 0;  // seconds since 1970-01-01 UTC
  long requests = 0;
  double energy_j = 0, co2_g = 0;
};

// The most bins a timeline lists with its empty ones (100,000: 11 years of hours, 69 days of minutes). A log whose
// span needs more (only possible with --keep-time-outliers) lists only the bins that hold requests.
inline constexpr long kMaxTimelineBins = 100000;

// Skipped lines named in a report, with the requests longer than the setup serves (after kSkippedExamples of lines
// that could not be read).
inline constexpr size_t kTooLongExamples = 10;

// One bin of a timeline while it is added up (exact sums: per-thread bins merge without rounding).
struct BinSums {
  long requests = 0;
  ExactSum energy_j, co2_g;
  void add(const RequestFigures& f);
  void add(const BinSums& other) {
    requests += other.requests;
    energy_j.add(other.energy_j);
    co2_g.add(other.co2_g);
  }
};

inline constexpr double kHour_s = 3600;

// The bin of an arrival: floor(time / bin).
long timeline_bin_index(double time_s, double bin_s);
// Every bin from the first to the last, empty ones included, or only those with requests when the span exceeds
// kMaxTimelineBins.
std::vector<TimelineBin> expand_timeline(const std::map<long, BinSums>& bins, double bin_s);

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
  // 80% intervals of the totals (set_intervals): the band of the setup's evidence applied to them (one setup's errors
  // are systematic, so they do not average out over requests); unset by the accounting itself.
  std::optional<Interval> energy_j_interval, total_g_interval;
  // Each distinct per-request CO2 with how many requests have it (the histogram; one entry per shape at most).
  std::vector<WeightedValue> co2_values_g;
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

// The 80% intervals of a log's totals from `bands` (none without them): its energy, and its total CO2 as the
// operational CO2's interval (the energy band) plus the embodied CO2's (the latency band).
void set_intervals(TraceAccount& a, const PredictorErrorBands* bands);

// What a log adds up to, added request by request or shape by shape (`count` requests of the same figures): sums are
// exact, so neither the order nor the grouping changes a digit.
class TraceTotals {
 public:
  void add(const RequestFigures& f, long count = 1);
  // Totals, shares and distributions into `a` (the timeline, skipped lines and intervals are the caller's).
  void finish(TraceAccount& a, long batch, int gpus) const;

 private:
  long requests_ = 0, prompt_tokens_ = 0, gen_tokens_ = 0;
  ExactSum energy_j_, latency_s_, operational_g_, embodied_g_, prefill_j_, decode_j_, prefill_g_;
  bool all_phases_ = true;
  std::vector<WeightedValue> energy_j_values_, co2_g_values_, latency_s_values_;
};

// The setup a log is scored on: `base` with the batch of `options` and its measurement kind.
PredictorInput trace_setup(const PredictorInput& base, const TraceOptions& options);
// The figures of one request of a shape, charged 1/batch of its batch's energy and embodied carbon.
RequestFigures figures_of(const LoggedRequest& q, const Prediction& p, const CarbonInputs& c, long batch);
// The bin width of a timeline over [first_s, last_s]: options' width, else an hour for spans over 6 hours, else a
// minute.
double timeline_bin_width(double first_s, double last_s, const TraceOptions& options);
// Why a request is longer than the setup serves.
std::string too_long_reason(const Shape& shape, const PredictorInput& base, long max_total_tokens);

// The plain path, one request at a time over a log held in memory (the reference the streaming path is tested
// against, and the path of logs given as columns). Scores every request of `log` on the setup of `base` (model, GPU,
// GPU count, precision; batch from options). `per_request` (optional) receives each scored request's figures in log
// order.
TraceAccount account_trace(const RequestLog& log, const Predictor& predictor, const PredictorInput& base,
                           const CarbonInputs& carbon, const TraceOptions& options,
                           std::vector<RequestFigures>* per_request = nullptr);

}  // namespace llmco2::trace
