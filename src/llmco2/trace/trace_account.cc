// trace/trace_account.cc - scoring a request log.
#include "trace/trace_account.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/statistics.h"
#include "predictor/error_band.h"
#include "sim/label.h"

namespace llmco2::trace {
namespace {

constexpr double kMinute_s = 60;

// The value at 0-based rank `rank` of the expanded list (sorted by value).
double value_at(const std::vector<WeightedValue>& sorted, long rank) {
  for (const auto& v : sorted) {
    if (rank < v.count) return v.value;
    rank -= v.count;
  }
  return sorted.back().value;
}

// As percentile_of_sorted (core/statistics.h) over the expanded list of `n` values.
double weighted_percentile(const std::vector<WeightedValue>& sorted, long n, double q) {
  const double position = q * static_cast<double>(n - 1);
  const auto below = static_cast<long>(std::floor(position));
  const long above = std::min(below + 1, n - 1);
  const double weight = position - static_cast<double>(below);
  return value_at(sorted, below) * (1 - weight) + value_at(sorted, above) * weight;
}

// Bins of the figures' arrivals (the plain path).
std::vector<TimelineBin> bins(const std::vector<RequestFigures>& figures, double bin_s) {
  std::map<long, BinSums> by_index;
  for (const auto& f : figures)
    if (f.time_s) by_index[timeline_bin_index(*f.time_s, bin_s)].add(f);
  return expand_timeline(by_index, bin_s);
}

}  // namespace

Distribution distribution_of(std::vector<WeightedValue> values) {
  Distribution d;
  std::erase_if(values, [](const WeightedValue& v) { return v.count <= 0; });
  if (values.empty()) return d;
  std::sort(values.begin(), values.end(), [](const auto& x, const auto& y) { return x.value < y.value; });
  ExactSum sum;
  long n = 0;
  for (const auto& v : values) sum.add(v.value, v.count), n += v.count;
  d.mean = sum.value() / static_cast<double>(n);
  d.p10 = weighted_percentile(values, n, 0.1);
  d.p50 = weighted_percentile(values, n, 0.5);
  d.p90 = weighted_percentile(values, n, 0.9);
  d.p99 = weighted_percentile(values, n, 0.99);
  d.max = values.back().value;
  return d;
}

void BinSums::add(const RequestFigures& f) {
  ++requests;
  energy_j.add(f.energy_j);
  co2_g.add(f.total_g());
}

long timeline_bin_index(double time_s, double bin_s) {
  return static_cast<long>(std::clamp(std::floor(time_s / bin_s), -9e18, 9e18));
}

std::vector<TimelineBin> expand_timeline(const std::map<long, BinSums>& by_index, double bin_s) {
  const auto bin = [&](long index, const BinSums& b) {
    return TimelineBin{static_cast<double>(index) * bin_s, b.requests, b.energy_j.value(), b.co2_g.value()};
  };
  if (by_index.empty()) return {};
  std::vector<TimelineBin> out;  // every bin from the first to the last, empty ones included (up to the cap)
  const double span_bins = static_cast<double>(by_index.rbegin()->first) - static_cast<double>(by_index.begin()->first);
  if (span_bins >= static_cast<double>(kMaxTimelineBins)) {  // only the bins with requests: memory follows the log
    for (const auto& [index, b] : by_index) out.push_back(bin(index, b));
    return out;
  }
  for (long i = by_index.begin()->first; i <= by_index.rbegin()->first; ++i) {
    const auto it = by_index.find(i);
    out.push_back(it != by_index.end() ? bin(i, it->second) : TimelineBin{static_cast<double>(i) * bin_s, 0, 0, 0});
  }
  return out;
}

void TraceTotals::add(const RequestFigures& f, long count) {
  requests_ += count;
  prompt_tokens_ += f.prompt_tokens * count;
  gen_tokens_ += f.gen_tokens * count;
  energy_j_.add(f.energy_j, count);
  latency_s_.add(f.latency_s, count);
  operational_g_.add(f.operational_g, count);
  embodied_g_.add(f.embodied_g, count);
  if (!f.energy_prefill_j) all_phases_ = false;
  if (all_phases_) {
    prefill_j_.add(*f.energy_prefill_j, count);
    decode_j_.add(*f.energy_decode_j, count);
    prefill_g_.add(*f.co2_prefill_g, count);
  }
  energy_j_values_.push_back({f.energy_j, count});
  co2_g_values_.push_back({f.total_g(), count});
  latency_s_values_.push_back({f.latency_s, count});
}

void TraceTotals::finish(TraceAccount& a, long batch, int gpus) const {
  a.requests = requests_;
  a.prompt_tokens = prompt_tokens_;
  a.gen_tokens = gen_tokens_;
  a.energy_j = energy_j_.value();
  a.latency_s = latency_s_.value();
  a.operational_g = operational_g_.value();
  a.embodied_g = embodied_g_.value();
  if (all_phases_ && requests_ > 0) {
    a.energy_prefill_j = prefill_j_.value();
    a.energy_decode_j = decode_j_.value();
    a.co2_prefill_g = prefill_g_.value();
    a.co2_decode_g = a.total_g() - *a.co2_prefill_g;
  }
  a.gpu_busy_s = a.latency_s / static_cast<double>(batch) * gpus;
  a.energy_per_request_j = distribution_of(energy_j_values_);
  a.co2_per_request_g = distribution_of(co2_g_values_);
  a.latency_per_request_s = distribution_of(latency_s_values_);
  a.co2_values_g = co2_g_values_;
  std::sort(a.co2_values_g.begin(), a.co2_values_g.end(),
            [](const auto& x, const auto& y) { return x.value < y.value; });
}

void set_intervals(TraceAccount& a, const PredictorErrorBands* bands) {
  a.energy_j_interval.reset();
  a.total_g_interval.reset();
  if (!bands || !bands->energy || !bands->latency) return;
  const BandSpan energy = band_span(*bands->energy, a.energy_j);
  const BandSpan operational = band_span(*bands->energy, a.operational_g);
  const BandSpan embodied = band_span(*bands->latency, a.embodied_g);
  a.energy_j_interval = Interval{energy.low, energy.high};
  a.total_g_interval = Interval{operational.low + embodied.low, operational.high + embodied.high};
}

PredictorInput trace_setup(const PredictorInput& base, const TraceOptions& o) {
  PredictorInput setup = base;
  setup.request.batch = o.batch;
  setup.scenario.measures = plan_measures(o.batch);
  return setup;
}

double timeline_bin_width(double first_s, double last_s, const TraceOptions& o) {
  return o.timeline_bin_s > 0 ? o.timeline_bin_s : (last_s - first_s > 6 * kHour_s ? kHour_s : kMinute_s);
}

std::string too_long_reason(const Shape& s, const PredictorInput& base, long max_total_tokens) {
  return fmt::format("prompt + gen = {} tokens: more than {} serves ({} tokens)", s.prompt_tokens + s.gen_tokens,
                     base.model->id, max_total_tokens);
}

RequestFigures figures_of(const LoggedRequest& q, const Prediction& p, const CarbonInputs& c, long batch) {
  const double share = 1.0 / static_cast<double>(batch);  // of the batch's energy and embodied carbon
  const Footprint batch_footprint = footprint(p, c, nullptr);
  const auto shared = [&](const PhaseValues& v) { return v.total_or_sum().value_or(0) * share; };
  RequestFigures f;
  f.line = q.line;
  f.time_s = q.time_s;
  f.prompt_tokens = q.prompt_tokens;
  f.gen_tokens = q.gen_tokens;
  if (p.energy_j.prefill && p.energy_j.decode && batch_footprint.total_g.prefill) {
    f.energy_prefill_j = *batch_footprint.energy_j.prefill * share;
    f.energy_decode_j = *batch_footprint.energy_j.decode * share;
    f.co2_prefill_g = *batch_footprint.total_g.prefill * share;
  }
  f.energy_j = shared(batch_footprint.energy_j);
  f.latency_s = batch_footprint.latency_s.total_or_sum().value_or(0);
  f.operational_g = shared(batch_footprint.operational_g);
  f.embodied_g = shared(batch_footprint.embodied_g);  // 0 when unknown
  f.embodied_known = !batch_footprint.embodied_unknown;
  return f;
}

TraceAccount account_trace(const RequestLog& log, const Predictor& predictor, const PredictorInput& base,
                           const CarbonInputs& carbon, const TraceOptions& o,
                           std::vector<RequestFigures>* per_request) {
  ShapeTable table(predictor, trace_setup(base, o), o.grid_ratio);
  std::vector<Shape> shapes;
  shapes.reserve(log.requests.size());
  for (const auto& q : log.requests) shapes.push_back({q.prompt_tokens, q.gen_tokens});
  table.prepare(shapes, o.progress);

  TraceAccount a;
  a.skipped_lines = log.skipped;
  if (!carbon.embodied.known()) a.embodied_unknown = carbon.embodied.unknown_label();
  a.skipped_examples = log.examples;
  std::vector<RequestFigures> local;
  std::vector<RequestFigures>& figures = per_request ? *per_request : local;
  figures.clear();
  figures.reserve(log.requests.size());
  TraceTotals totals;
  for (size_t i = 0; i < log.requests.size(); ++i) {
    if (!table.valid(shapes[i])) {
      ++a.skipped_shapes;
      if (a.skipped_examples.size() < kTooLongExamples)
        a.skipped_examples.push_back(
            {log.requests[i].line, too_long_reason(shapes[i], base, table.max_total_tokens())});
      continue;
    }
    figures.push_back(figures_of(log.requests[i], table.at(shapes[i]), carbon, o.batch));
    totals.add(figures.back());
  }
  a.predictions_made = table.predictions_made();
  totals.finish(a, o.batch, carbon.gpus);
  if (log.has_time() && !figures.empty()) {
    double first = *figures.front().time_s, last = first;
    for (const auto& f : figures) {
      first = std::min(first, *f.time_s);
      last = std::max(last, *f.time_s);
    }
    a.timeline_bin_s = timeline_bin_width(first, last, o);
    a.hourly = bins(figures, kHour_s);
    a.timeline = bins(figures, a.timeline_bin_s);
  }
  return a;
}

}  // namespace llmco2::trace
