// calibration/calibration.cc - preparing samples, the pattern-search fit and the accuracy figures.
#include "calibration/calibration.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "calibration/screening.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "features/memory_fit.h"
#include "sim/label.h"

namespace llmco2::calibration {

std::vector<std::string> CalibrationSet::sources() const {
  std::vector<std::string> out;
  for (const auto& row : rows)
    if (std::find(out.begin(), out.end(), row.source) == out.end()) out.push_back(row.source);
  return out;
}

namespace {

// Rows a GPU's physics cannot explain (calibration/screening.h) are not fitted: they go to the skipped rows, with why.
void drop_not_gpu_bound(CalibrationSet& set) {
  const std::vector<NotGpuBound> slow = not_gpu_bound(set);
  std::vector<bool> drop(set.samples.size(), false);
  for (const auto& s : slow) {
    drop[s.sample] = true;
    set.skipped.push_back({set.samples[s.sample].row, s.reason, true});
  }
  size_t kept = 0;
  for (size_t s = 0; s < set.samples.size(); ++s)
    if (!drop[s] && kept++ != s) set.samples[kept - 1] = std::move(set.samples[s]);
  set.samples.resize(kept);
}

}  // namespace

CalibrationSet prepare_calibration(std::vector<DatasetRow> rows) {
  CalibrationSet set;
  set.rows = std::move(rows);
  CatalogCache catalogs;
  for (size_t i = 0; i < set.rows.size(); ++i) {
    const DatasetRow& row = set.rows[i];
    try {
      if (!row.energy_j.total && !row.latency_s.total) fail("no total energy or latency to compare");
      if (const std::string why = row.why_not_a_label(); !why.empty()) fail("{}", why);
      const SimConfig config = config_for_row(row, catalogs);
      // A tensor-parallel row that does not fit the board describes a configuration the simulator does not (ML.ENERGY
      // v3's expert parallelism over data-parallel replicas, read as one-GPU replicas of the whole model).
      if (config.scenario.parallelism == Parallelism::tensor)
        check_memory_fit(*config.model, config.request, *config.gpu);
      CalibrationSample sample;
      sample.row = i;
      sample.workload = prepare_workload(*config.model, *config.gpu, config.request, config.scenario);
      sample.batch_scale = config.batch_scale;
      sample.meter = config.meter;
      sample.energy_j = row.energy_j.total;
      sample.latency_s = row.latency_s.total;
      set.samples.push_back(std::move(sample));
    } catch (const Error& e) {
      std::string reason = e.what();
      set.skipped.push_back({i, reason.substr(0, reason.find(" (did you mean"))});
    }
  }
  drop_not_gpu_bound(set);
  return set;
}

SimParams fit_params_without(const CalibrationSet& set, const std::function<bool(const DatasetRow&)>& held_out,
                             const SimParams& start, const FitOptions& options) {
  std::vector<size_t> train;
  for (size_t s = 0; s < set.samples.size(); ++s)
    if (!held_out(set.rows[set.samples[s].row])) train.push_back(s);
  return fit_params(set, train, start, options);
}

RowComparisons row_comparisons(const CalibrationSample& sample, const SimEstimate& p) {
  RowComparisons out;
  if (sample.energy_j && sample.latency_s && p.latency_s > 0)
    out.pairs[out.size++] = {p.energy_j / p.latency_s, *sample.energy_j / *sample.latency_s};
  else if (sample.energy_j) out.pairs[out.size++] = {p.energy_j, *sample.energy_j};
  if (sample.latency_s) out.pairs[out.size++] = {p.latency_s, *sample.latency_s};
  return out;
}

SimEstimate predict(const CalibrationSample& sample, const SimParams& params) {
  const SimResult r = run_workload(sample.workload, params);
  return {sample.meter.energy_j(r, sample.workload.idle_w) * sample.batch_scale, r.latency_s.total()};
}

namespace {

// One free parameter: a reference into SimParams and its bounds; the search moves an unbounded theta and the
// value is lo..hi through a sigmoid (in log space for scale-like parameters).
struct Knob {
  std::function<double&(SimParams&)> ref;
  double lo, hi;
  bool log_scale;
  std::string name;  // as the report names it

  double value(double theta) const {
    const double s = 1 / (1 + std::exp(-theta));
    // exp(log(hi)) may round one ulp past hi, which loading params.json would then refuse: clamp.
    return std::clamp(log_scale ? std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * s) : lo + (hi - lo) * s, lo,
                      hi);
  }
  double theta(double value) const {
    value = std::clamp(value, lo * 1.0001, hi * 0.9999);
    const double s =
        log_scale ? (std::log(value) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (value - lo) / (hi - lo);
    return std::log(s / (1 - s));
  }
};

// The request-level parameters, each inside its documented physical range (sim_fields); the noise spreads are not
// fitted here.
std::vector<Knob> shared_knobs() {
  std::vector<Knob> knobs;
  for (const SimField& f : sim_fields()) {
    if (f.range.name == "energy_noise" || f.range.name == "latency_noise") continue;
    knobs.push_back(
        {[f](SimParams& p) -> double& { return f.ref(p); }, f.range.lo, f.range.hi, false, std::string(f.range.name)});
  }
  return knobs;
}

// Per-engine host costs, inside the ranges the engine catalog documents, for engines with enough training rows.
std::vector<Knob> engine_knobs(const CalibrationSet& set, const std::vector<size_t>& train, const FitOptions& options,
                               SimParams& start) {
  std::map<std::string, size_t> engine_rows;
  for (size_t s : train) ++engine_rows[set.samples[s].workload.engine];
  std::vector<Knob> knobs;
  for (const auto& [engine, n] : engine_rows) {
    if (n < options.min_rows_per_group || !start.engines.has(engine)) continue;
    const EngineProfile& profile = start.engines.get(engine);
    for (const char* field : kEngineFittedFields) {
      const auto range = profile.ranges.find(field);
      if (range == profile.ranges.end() || !(range->second.first > 0) || range->second.first >= range->second.second)
        continue;
      const std::string name = field;
      // engine = engine: clang before 16 cannot capture a structured binding itself.
      auto field_of = [engine = engine, name](SimParams& p) -> double& {
        return engine_field(p.engines.at(engine), name);
      };
      knobs.push_back({field_of, range->second.first, range->second.second, true, "engines." + engine + "." + name});
    }
  }
  return knobs;
}

// Every parameter a fit on `train` moves: the shared ones and the host costs of engines with enough rows.
std::vector<Knob> fitted_knobs(const CalibrationSet& set, const std::vector<size_t>& train, const FitOptions& options,
                               SimParams& start) {
  std::vector<Knob> knobs = shared_knobs();
  for (auto& knob : engine_knobs(set, train, options, start)) knobs.push_back(std::move(knob));
  return knobs;
}

constexpr double kCapSquaredLog = 1.2069;  // log(3)^2: one row's error counts at most as a factor of 3

double squared_log_error(double predicted, double measured) {
  if (!(predicted > 0) || !(measured > 0)) return kCapSquaredLog;
  const double d = std::log(predicted / measured);
  return std::min(d * d, kCapSquaredLog);
}

class Objective {
 public:
  Objective(const CalibrationSet& set, const std::vector<size_t>& train) : set_(set), train_(train) {
    std::map<std::string, double> per_source;
    for (size_t s : train) ++per_source[set.rows[set.samples[s].row].source];
    for (size_t s : train) weights_.push_back(1.0 / per_source[set.rows[set.samples[s].row].source]);
  }
  double operator()(const SimParams& params) const {
    double loss = 0;
    for (size_t i = 0; i < train_.size(); ++i) {
      const CalibrationSample& sample = set_.samples[train_[i]];
      const RowComparisons compared = row_comparisons(sample, predict(sample, params));
      for (size_t k = 0; k < compared.size; ++k)
        loss += weights_[i] * squared_log_error(compared.pairs[k].first, compared.pairs[k].second);
    }
    return loss;
  }

 private:
  const CalibrationSet& set_;
  const std::vector<size_t>& train_;
  std::vector<double> weights_;
};

}  // namespace

SimParams fit_params(const CalibrationSet& set, const std::vector<size_t>& train, const SimParams& start_params,
                     const FitOptions& options) {
  SimParams params = start_params;
  std::vector<Knob> knobs = fitted_knobs(set, train, options, params);
  std::vector<double> theta;
  for (auto& knob : knobs) theta.push_back(knob.theta(knob.ref(params)));
  const Objective objective(set, train);
  double best = objective(params);
  int evaluations = 1;
  // Pattern search: try +-step on each coordinate, keep improvements, halve the step when a sweep finds none.
  for (double step = 1.0; step > 0.02 && evaluations < options.max_evaluations;) {
    bool improved = false;
    for (size_t k = 0; k < knobs.size() && evaluations < options.max_evaluations; ++k) {
      for (double direction : {+1.0, -1.0}) {
        check_interrupt();  // a fit takes seconds to minutes: stoppable between evaluations (core/interrupt.h)
        SimParams trial = params;
        knobs[k].ref(trial) = knobs[k].value(theta[k] + direction * step);
        const double loss = objective(trial);
        ++evaluations;
        if (loss < best) {
          best = loss, params = trial, theta[k] += direction * step, improved = true;
          break;
        }
      }
    }
    if (!improved) step /= 2;
  }
  return params;
}

std::vector<std::string> params_at_bounds(const SimParams& params, const CalibrationSet& set,
                                          const std::vector<size_t>& train, const FitOptions& options) {
  SimParams copy = params;
  std::vector<std::string> out;
  for (const Knob& k : fitted_knobs(set, train, options, copy)) {
    const double value = k.ref(copy), span = k.hi - k.lo;
    if (value <= k.lo + 1e-3 * span || value >= k.hi - 1e-3 * span)
      out.push_back(fmt::format("{} = {:.4g} (range [{:g}, {:g}])", k.name, value, k.lo, k.hi));
  }
  return out;
}

AccuracyStats accuracy(const CalibrationSet& set, const std::vector<size_t>& samples,
                       const std::vector<SimEstimate>& predictions, Quantity quantity) {
  AccuracyCounter counter;
  for (size_t k : samples) {
    const bool energy = quantity == Quantity::energy;
    const auto& measured = energy ? set.samples[k].energy_j : set.samples[k].latency_s;
    if (measured) counter.add(energy ? predictions[k].energy_j : predictions[k].latency_s, *measured);
  }
  return counter.result();
}

}  // namespace llmco2::calibration
