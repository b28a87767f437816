// calibration/calibration.h - fitting the simulator's free parameters to measured rows, and scoring the fit.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibration/module.h"
#include "core/accuracy.h"
#include "dataset/record.h"
#include "sim/label.h"
#include "sim/simulator.h"

namespace llmco2::calibration {

// A measured row the simulator can label, with its workload prepared once.
struct CalibrationSample {
  size_t row = 0;  // index into CalibrationSet::rows
  SimWorkload workload;
  double batch_scale = 1;
  WindowMeter meter;                // how the row's energy was metered
  std::optional<double> energy_j;   // measured total energy
  std::optional<double> latency_s;  // measured total latency
};

struct SkippedRow {
  size_t row = 0;
  std::string reason;
  bool not_gpu_bound = false;  // simulatable, but slower than the same work on a weaker GPU (calibration/screening.h)
};

struct CalibrationSet {
  std::vector<DatasetRow> rows;
  std::vector<CalibrationSample> samples;
  std::vector<SkippedRow> skipped;           // rows the simulator cannot label, with the reason
  std::vector<std::string> sources() const;  // in first-seen order
};

// Resolves every row against the catalogs and prepares its workload; rows that cannot be simulated are skipped.
CalibrationSet prepare_calibration(std::vector<DatasetRow> rows);

struct SimEstimate {
  double energy_j = 0, latency_s = 0;
};
SimEstimate predict(const CalibrationSample& sample, const SimParams& params);

// What a fit compares for a row, each as (predicted, measured): its mean power (energy / latency) where it measured
// both and the prediction has a latency, else its energy; then its latency. Scoring energy as mean power keeps the
// power model fitted to power: it cannot absorb a latency error (a slow engine would otherwise push power up).
// fit_params and the site fit (calibration/site_fit.h) score the same comparisons.
struct RowComparisons {
  std::array<std::pair<double, double>, 2> pairs;
  size_t size = 0;
};
RowComparisons row_comparisons(const CalibrationSample& sample, const SimEstimate& predicted);

struct FitOptions {
  int max_evaluations = 2500;
  size_t min_rows_per_group = 20;  // an engine gets its own host costs from this many training rows
};

// Minimises the mean squared log error of mean power (energy / latency where a row measured both, else energy) and
// latency (each source weighted equally, errors beyond 3x
// capped) over the samples in `train` by a pattern search over bounded parameters.
SimParams fit_params(const CalibrationSet& set, const std::vector<size_t>& train, const SimParams& start,
                     const FitOptions& options);

// The parameters fitted (from `start`) on the samples of `set` whose rows `held_out` rejects: the parameters a study
// of the held-out rows may use without having seen them. The set is prepared once for any number of such fits.
SimParams fit_params_without(const CalibrationSet& set, const std::function<bool(const DatasetRow&)>& held_out,
                             const SimParams& start, const FitOptions& options);

// The fitted parameters of `params` that sit at an end of their range, as "name = value (range [lo, hi])".
std::vector<std::string> params_at_bounds(const SimParams& params, const CalibrationSet& set,
                                          const std::vector<size_t>& train, const FitOptions& options);

using AccuracyStats = Accuracy;
enum class Quantity { energy, latency };
// Accuracy of `predictions` (parallel to set.samples) over the chosen samples that measured `quantity`.
AccuracyStats accuracy(const CalibrationSet& set, const std::vector<size_t>& samples,
                       const std::vector<SimEstimate>& predictions, Quantity quantity);

}  // namespace llmco2::calibration
