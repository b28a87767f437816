// trace/trace_account.cc - scoring a request log.
#include "trace/trace_account.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/statistics.h"
#include "predictor/error_band.h"

namespace llmco2 {
namespace {

constexpr double kHour_s = 3600, kMinute_s = 60;

Distribution distribution(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  std::sort(values.begin(), values.end());
  d.p10 = percentile_of_sorted(values, 0.1);
  d.p50 = percentile_of_sorted(values, 0.5);
  d.p90 = percentile_of_sorted(values, 0.9);
  d.p99 = percentile_of_sorted(values, 0.99);
  d.max = values.back();
  return d;
}

std::vector<TimelineBin> bins(const std::vector<RequestFigures>& figures, double bin_s) {
  std::map<long, TimelineBin> by_index;
  for (const auto& f : figures) {
    if (!f.time_s) continue;
    const auto index = static_cast<long>(std::clamp(std::floor(*f.time_s / bin_s), -9e18, 9e18));
    TimelineBin& b = by_index[index];
    b.start_s = static_cast<double>(index) * bin_s;
    ++b.requests;
    b.energy_j += f.energy_j;
    b.co2_g += f.total_g();
  }
  if (by_index.empty()) return {};
  std::vector<TimelineBin> out;  // every bin from the first to the last, empty ones included (up to the cap)
  const double span_bins = static_cast<double>(by_index.rbegin()->first) - static_cast<double>(by_index.begin()->first);
  if (span_bins >= static_cast<double>(kMaxTimelineBins)) {  // only the bins with requests: memory follows the log
    for (const auto& [index, bin] : by_index) out.push_back(bin);
    return out;
  }
  for (long i = by_index.begin()->first; i <= by_index.rbegin()->first; ++i) {
    const auto it = by_index.find(i);
    out.push_back(it != by_index.end() ? it->second : TimelineBin{static_cast<double>(i) * bin_s, 0, 0, 0});
  }
  return out;
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

void add_totals(TraceAccount& a, const std::vector<RequestFigures>& figures) {
  bool phases = !figures.empty();
  double prefill_j = 0, decode_j = 0, prefill_g = 0;
  for (const auto& f : figures) {
    a.prompt_tokens += f.prompt_tokens;
    a.gen_tokens += f.gen_tokens;
    a.energy_j += f.energy_j;
    a.latency_s += f.latency_s;
    a.operational_g += f.operational_g;
    a.embodied_g += f.embodied_g;
    if (!f.energy_prefill_j) phases = false;
    if (phases) {
      prefill_j += *f.energy_prefill_j;
      decode_j += *f.energy_decode_j;
      prefill_g += *f.co2_prefill_g;
    }
  }
  if (phases) {
    a.energy_prefill_j = prefill_j;
    a.energy_decode_j = decode_j;
    a.co2_prefill_g = prefill_g;
    a.co2_decode_g = a.total_g() - prefill_g;
  }
}

}  // namespace

TraceAccount account_trace(const RequestLog& log, const Predictor& predictor, const SimConfig& base,
                           const CarbonInputs& carbon, const PredictorErrorBands* bands, const TraceOptions& o,
                           std::vector<RequestFigures>* per_request) {
  SimConfig setup = base;
  setup.request.batch = o.batch;
  setup.scenario.measures = o.batch > 1 ? Measures::fixed_batch : Measures::isolated;
  ShapeTable table(predictor, setup, o.grid_ratio);
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
  for (size_t i = 0; i < log.requests.size(); ++i) {
    if (!table.valid(shapes[i])) {
      ++a.skipped_shapes;
      if (a.skipped_examples.size() < 10)
        a.skipped_examples.push_back({log.requests[i].line,
                                      fmt::format("prompt + gen = {} tokens: more than {} serves ({} tokens)",
                                                  shapes[i].prompt_tokens + shapes[i].gen_tokens, base.model->id,
                                                  table.max_total_tokens())});
      continue;
    }
    figures.push_back(figures_of(log.requests[i], table.at(shapes[i]), carbon, o.batch));
  }
  a.requests = static_cast<long>(figures.size());
  a.predictions_made = table.predictions_made();
  add_totals(a, figures);
  a.gpu_busy_s = a.latency_s / static_cast<double>(o.batch) * carbon.gpus;
  std::vector<double> energy, co2, latency;
  for (const auto& f : figures) {
    energy.push_back(f.energy_j);
    co2.push_back(f.total_g());
    latency.push_back(f.latency_s);
  }
  a.energy_per_request_j = distribution(std::move(energy));
  a.co2_per_request_g = distribution(std::move(co2));
  a.latency_per_request_s = distribution(std::move(latency));
  if (bands && bands->energy && bands->latency) {
    const double fe = bands->energy->factor, fl = bands->latency->factor;
    a.energy_j_interval = Interval{a.energy_j / fe, a.energy_j * fe};
    a.total_g_interval = Interval{a.operational_g / fe + a.embodied_g / fl, a.operational_g * fe + a.embodied_g * fl};
  }
  if (log.has_time() && !figures.empty()) {
    double first = *figures.front().time_s, last = first;
    for (const auto& f : figures) {
      first = std::min(first, *f.time_s);
      last = std::max(last, *f.time_s);
    }
    a.timeline_bin_s = o.timeline_bin_s > 0 ? o.timeline_bin_s : (last - first > 6 * kHour_s ? kHour_s : kMinute_s);
    a.hourly = bins(figures, kHour_s);
    a.timeline = bins(figures, a.timeline_bin_s);
  }
  return a;
}

}  // namespace llmco2
