// calibration/calibration.cc - preparing samples, the pattern-search fit and the accuracy figures.
#include "calibration/calibration.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "core/error.h"
#include "sim/label.h"

namespace llmco2 {

std::vector<std::string> CalibrationSet::sources() const {
  std::vector<std::string> out;
  for (const auto& row : rows)
    if (std::find(out.begin(), out.end(), row.source) == out.end()) out.push_back(row.source);
  return out;
}

CalibrationSet prepare_calibration(std::vector<DatasetRow> rows) {
  CalibrationSet set;
  set.rows = std::move(rows);
  CatalogCache catalogs;
  for (size_t i = 0; i < set.rows.size(); ++i) {
    const DatasetRow& row = set.rows[i];
    try {
      if (!row.energy_j.total && !row.latency_s.total) fail("no total energy or latency to compare");
      const SimConfig config = config_for_row(row, catalogs);
      CalibrationSample sample;
      sample.row = i;
      sample.workload = prepare_workload(*config.model, *config.gpu, config.request, config.scenario);
      sample.batch_scale = config.batch_scale;
      sample.energy_j = row.energy_j.total;
      sample.latency_s = row.latency_s.total;
      set.samples.push_back(std::move(sample));
    } catch (const Error& e) {
      std::string reason = e.what();
      set.skipped.push_back({i, reason.substr(0, reason.find(" (did you mean"))});
    }
  }
  return set;
}

SimEstimate predict(const CalibrationSample& sample, const SimParams& params) {
  const SimResult r = run_workload(sample.workload, params);
  return {r.energy_j.total() * sample.batch_scale, r.latency_s.total()};
}

namespace {

// One free parameter: a reference into SimParams and its bounds; the search moves an unbounded theta and the
// value is lo..hi through a sigmoid (in log space for scale-like parameters).
struct Knob {
  std::function<double&(SimParams&)> ref;
  double lo, hi;
  bool log_scale;

  double value(double theta) const {
    const double s = 1 / (1 + std::exp(-theta));
    return log_scale ? std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * s) : lo + (hi - lo) * s;
  }
  double theta(double value) const {
    value = std::clamp(value, lo * 1.0001, hi * 0.9999);
    const double s = log_scale ? (std::log(value) - std::log(lo)) / (std::log(hi) - std::log(lo))
                               : (value - lo) / (hi - lo);
    return std::log(s / (1 - s));
  }
};

#define SHARED(field, lo, hi, log) Knob{[](SimParams& p) -> double& { return p.field; }, lo, hi, log}

std::vector<Knob> shared_knobs() {
  return {SHARED(matrix_efficiency, 0.2, 0.95, false),   SHARED(matrix_half_rows, 1, 2048, true),
          SHARED(attention_efficiency, 0.05, 0.9, false), SHARED(vector_efficiency, 0.02, 0.9, false),
          SHARED(memory_efficiency, 0.3, 0.95, false),   SHARED(memory_half_bytes, 1e4, 1e8, true),
          SHARED(kernel_gap_s, 1e-7, 5e-5, true),        SHARED(network_efficiency, 0.1, 0.95, false),
          SHARED(allreduce_hop_s, 1e-7, 1e-4, true),     SHARED(sync_wait_fraction, 0.0, 0.5, false),
          SHARED(power_active, 0.0, 1.0, false),         SHARED(power_compute, 0.0, 1.5, false),
          SHARED(power_memory, 0.0, 1.5, false),         SHARED(default_engine.step_overhead_s, 1e-5, 0.2, true),
          SHARED(default_engine.launch_overhead_s, 1e-7, 2e-4, true)};
}

#undef SHARED

// Per-GPU and per-engine knobs for groups with enough training rows.
std::vector<Knob> group_knobs(const CalibrationSet& set, const std::vector<size_t>& train, const FitOptions& options,
                              SimParams& start) {
  std::map<std::string, size_t> gpu_rows, engine_rows;
  for (size_t s : train) {
    ++gpu_rows[set.samples[s].workload.gpu_id];
    ++engine_rows[set.samples[s].workload.engine];
  }
  std::vector<Knob> knobs;
  for (const auto& [gpu, n] : gpu_rows) {
    if (n < options.min_rows_per_group) continue;
    start.gpus.try_emplace(gpu);
    knobs.push_back({[gpu](SimParams& p) -> double& { return p.gpus[gpu].power_scale; }, 0.4, 2.5, true});
    knobs.push_back({[gpu](SimParams& p) -> double& { return p.gpus[gpu].compute_scale; }, 0.4, 2.5, true});
  }
  for (const auto& [engine, n] : engine_rows) {
    if (n < options.min_rows_per_group || engine == "unknown") continue;
    start.engines.try_emplace(engine);
    knobs.push_back({[engine](SimParams& p) -> double& { return p.engines[engine].step_scale; }, 0.02, 50, true});
    knobs.push_back({[engine](SimParams& p) -> double& { return p.engines[engine].launch_scale; }, 0.02, 50, true});
  }
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
      const SimEstimate p = predict(sample, params);
      if (sample.energy_j) loss += weights_[i] * squared_log_error(p.energy_j, *sample.energy_j);
      if (sample.latency_s) loss += weights_[i] * squared_log_error(p.latency_s, *sample.latency_s);
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
  std::vector<Knob> knobs = shared_knobs();
  for (auto& knob : group_knobs(set, train, options, params)) knobs.push_back(std::move(knob));
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

}  // namespace llmco2
