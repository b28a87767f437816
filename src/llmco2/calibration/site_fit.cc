// calibration/site_fit.cc - the site profile's knobs, residuals, damped Gauss-Newton steps and the rows a short
// benchmark should run.
#include "calibration/site_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/interrupt.h"

namespace llmco2::calibration {
namespace {

constexpr double kCapLog = 1.0986;  // log(3): one row's error counts at most as a factor of 3, as in fit_params

// One correction the fit moves: its knob, target and rows, in log scale theta = log(value).
struct FitKnob {
  SiteKnob knob;
  std::string target;
  size_t rows = 0;
  const SiteKnobInfo& info() const { return site_knob(knob); }
};

std::vector<FitKnob> knobs_of(const CalibrationSet& set, const std::vector<size_t>& train) {
  std::set<std::string> gpus, engines;
  for (size_t s : train) gpus.insert(set.samples[s].workload.gpu_id), engines.insert(set.samples[s].workload.engine);
  std::vector<FitKnob> knobs;
  auto count = [&](const FitKnob& k) {
    size_t n = 0;
    for (size_t s : train) {
      const CalibrationSample& sample = set.samples[s];
      const bool mine = k.info().per_gpu ? sample.workload.gpu_id == k.target : sample.workload.engine == k.target;
      n += mine && (k.knob != SiteKnob::power || sample.energy_j);
    }
    return n;
  };
  for (const auto& gpu : gpus)
    for (SiteKnob knob : {SiteKnob::compute, SiteKnob::memory, SiteKnob::power}) knobs.push_back({knob, gpu});
  for (const auto& engine : engines) knobs.push_back({SiteKnob::host, engine});
  for (FitKnob& k : knobs) k.rows = count(k);
  return knobs;
}

SiteProfile profile_at(const std::string& name, const std::vector<FitKnob>& knobs, const std::vector<double>& theta) {
  SiteProfile site;
  site.name = name;
  for (size_t k = 0; k < knobs.size(); ++k)
    site.corrections.push_back({knobs[k].target, knobs[k].knob, std::exp(theta[k]), 0, 0, knobs[k].rows});
  return site;
}

// The rows' log errors (row_comparisons: as fit_params scores them), each over the residual spread. A row has as
// many entries as it measured quantities (energy, latency), whatever the parameters.
std::vector<double> residuals(const CalibrationSet& set, const std::vector<size_t>& rows, const SimParams& params,
                              double sd) {
  std::vector<double> r;
  for (size_t s : rows) {
    const RowComparisons compared = row_comparisons(set.samples[s], predict(set.samples[s], params));
    for (size_t k = 0; k < compared.size; ++k) {
      const auto [predicted, measured] = compared.pairs[k];
      const double error =
          predicted > 0 && measured > 0 ? std::clamp(std::log(predicted / measured), -kCapLog, kCapLog) : kCapLog;
      r.push_back(error / sd);
    }
  }
  return r;
}

size_t residual_count(const CalibrationSample& sample) {
  return (sample.energy_j ? 1 : 0) + (sample.latency_s ? 1 : 0);
}

using Matrix = std::vector<std::vector<double>>;  // row-major, small (knobs x knobs)

// Cholesky factor L of a symmetric positive definite matrix (false when it is not).
bool cholesky(const Matrix& a, Matrix& l) {
  const size_t n = a.size();
  l.assign(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j) {
      double sum = a[i][j];
      for (size_t k = 0; k < j; ++k) sum -= l[i][k] * l[j][k];
      if (i == j) {
        if (!(sum > 0)) return false;
        l[i][i] = std::sqrt(sum);
      } else {
        l[i][j] = sum / l[j][j];
      }
    }
  return true;
}

// Solves L L^T x = b.
std::vector<double> cholesky_solve(const Matrix& l, std::vector<double> b) {
  const size_t n = l.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < i; ++k) b[i] -= l[i][k] * b[k];
    b[i] /= l[i][i];
  }
  for (size_t i = n; i-- > 0;) {
    for (size_t k = i + 1; k < n; ++k) b[i] -= l[k][i] * b[k];
    b[i] /= l[i][i];
  }
  return b;
}

double log_det(const Matrix& l) {
  double sum = 0;
  for (size_t i = 0; i < l.size(); ++i) sum += 2 * std::log(l[i][i]);
  return sum;
}

// The prior's precision: 1 / prior_sd^2 on the diagonal.
Matrix prior_precision(const std::vector<FitKnob>& knobs) {
  Matrix p(knobs.size(), std::vector<double>(knobs.size(), 0.0));
  for (size_t k = 0; k < knobs.size(); ++k) p[k][k] = 1 / (knobs[k].info().prior_sd * knobs[k].info().prior_sd);
  return p;
}

// The residuals' Jacobian in theta by one-sided differences (stepping inward at an upper bound), as columns.
Matrix jacobian(const CalibrationSet& set, const std::vector<size_t>& rows, const SimParams& global,
                const std::vector<FitKnob>& knobs, const std::vector<double>& theta, const std::vector<double>& at,
                double sd) {
  constexpr double kStep = 0.01;
  Matrix columns;
  for (size_t k = 0; k < knobs.size(); ++k) {
    check_interrupt();
    std::vector<double> moved = theta;
    const double step = theta[k] + kStep <= std::log(knobs[k].info().hi) ? kStep : -kStep;
    moved[k] += step;
    const std::vector<double> r = residuals(set, rows, apply_site(global, profile_at("", knobs, moved)), sd);
    std::vector<double> column(r.size());
    for (size_t i = 0; i < r.size(); ++i) column[i] = (r[i] - at[i]) / step;
    columns.push_back(std::move(column));
  }
  return columns;
}

// J^T J + prior precision.
Matrix information(const Matrix& columns, const Matrix& prior) {
  Matrix h = prior;
  for (size_t a = 0; a < columns.size(); ++a)
    for (size_t b = 0; b < columns.size(); ++b)
      for (size_t i = 0; i < columns[a].size(); ++i) h[a][b] += columns[a][i] * columns[b][i];
  return h;
}

double objective(const std::vector<double>& r, const std::vector<FitKnob>& knobs, const std::vector<double>& theta) {
  double sum = 0;
  for (double x : r) sum += x * x;
  for (size_t k = 0; k < knobs.size(); ++k) sum += std::pow(theta[k] / knobs[k].info().prior_sd, 2);
  return sum;
}

std::vector<double> clamp_to_ranges(std::vector<double> theta, const std::vector<FitKnob>& knobs) {
  for (size_t k = 0; k < knobs.size(); ++k)
    theta[k] = std::clamp(theta[k], std::log(knobs[k].info().lo), std::log(knobs[k].info().hi));
  return theta;
}

// The training rows' error under `params`, energy and latency, as the profile's `fit` reports it.
Json accuracy_json(const CalibrationSet& set, const std::vector<size_t>& rows, const SimParams& params) {
  std::vector<SimEstimate> predictions(set.samples.size());
  for (size_t s : rows) predictions[s] = predict(set.samples[s], params);
  Json j;
  for (Quantity q : {Quantity::energy, Quantity::latency}) {
    const Accuracy a = accuracy(set, rows, predictions, q);
    if (a.n) j[q == Quantity::energy ? "energy" : "latency"] = {{"rows", a.n}, {"mape", a.mape}, {"bias", a.bias}};
  }
  return j;
}

// What the rows leave to the global fit, each with why.
std::vector<std::string> global_notes(const SiteProfile& site) {
  std::vector<std::string> out;
  for (const SiteCorrection& c : site.corrections) {
    if (c.data_share >= kIdentifiedDataShare) continue;
    const std::string what = fmt::format("{} of {}", site_knob(c.knob).name, c.target);
    if (c.knob == SiteKnob::power && c.rows == 0)
      out.push_back(what + " stays global: no row measured energy" +
                    (c.data_share >= 0.01 ? fmt::format(" (their latencies decide {:.0f}% of it, through the power "
                                                        "limit's clock)",
                                                        100 * c.data_share)
                                          : ""));
    else
      out.push_back(fmt::format("{} is weakly determined: the rows decide {:.0f}% of it, the prior the rest (x{:.3f})",
                                what, 100 * c.data_share, c.value));
  }
  return out;
}

}  // namespace

SiteProfile fit_site(const CalibrationSet& set, std::vector<size_t> train, const SimParams& global,
                     const std::string& name, const SiteFitOptions& options) {
  if (train.empty())
    for (size_t s = 0; s < set.samples.size(); ++s) train.push_back(s);
  if (train.empty()) fail("site {}: no row the simulator can label, nothing to fit", name);
  const std::vector<FitKnob> knobs = knobs_of(set, train);
  const Matrix prior = prior_precision(knobs);
  const double sd = options.residual_sd;
  std::vector<double> theta(knobs.size(), 0.0);
  std::vector<double> r = residuals(set, train, global, sd);
  double best = objective(r, knobs, theta), damping = 1e-3;
  Matrix columns = jacobian(set, train, global, knobs, theta, r, sd);
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    Matrix h = information(columns, prior), l;
    std::vector<double> gradient(knobs.size());
    for (size_t k = 0; k < knobs.size(); ++k) {
      gradient[k] = -prior[k][k] * theta[k];
      for (size_t i = 0; i < r.size(); ++i) gradient[k] -= columns[k][i] * r[i];
    }
    for (size_t k = 0; k < knobs.size(); ++k) h[k][k] *= 1 + damping;
    if (!cholesky(h, l)) break;
    const std::vector<double> trial = clamp_to_ranges(
        [&] {
          std::vector<double> t = theta, step = cholesky_solve(l, gradient);
          for (size_t k = 0; k < t.size(); ++k) t[k] += step[k];
          return t;
        }(),
        knobs);
    const std::vector<double> trial_r = residuals(set, train, apply_site(global, profile_at(name, knobs, trial)), sd);
    const double loss = objective(trial_r, knobs, trial);
    if (!(loss < best)) {
      damping *= 8;
      if (damping > 1e6) break;
      continue;
    }
    double moved = 0;
    for (size_t k = 0; k < knobs.size(); ++k) moved = std::max(moved, std::abs(trial[k] - theta[k]));
    theta = trial, r = trial_r, best = loss, damping = std::max(1e-6, damping / 4);
    columns = jacobian(set, train, global, knobs, theta, r, sd);
    if (moved < 1e-4) break;
  }
  SiteProfile site = profile_at(name, knobs, theta);
  site.rows = train.size();
  // The posterior at the fit: covariance (J^T J + prior)^-1; a knob's data share is how far its variance fell below
  // the prior's.
  Matrix l;
  if (cholesky(information(columns, prior), l))
    for (size_t k = 0; k < knobs.size(); ++k) {
      std::vector<double> unit(knobs.size(), 0.0);
      unit[k] = 1;
      const double variance = cholesky_solve(l, unit)[k];
      site.corrections[k].sd = std::sqrt(variance);
      site.corrections[k].data_share = std::clamp(1 - variance * prior[k][k], 0.0, 1.0);
    }
  site.global = global_notes(site);
  site.fit = {{"residual_sd", sd},
              {"before", accuracy_json(set, train, global)},
              {"after", accuracy_json(set, train, apply_site(global, site))}};
  return site;
}

std::vector<size_t> choose_site_rows(const CalibrationSet& set, const std::vector<size_t>& candidates,
                                     const SimParams& global, size_t count, const SiteFitOptions& options) {
  const std::vector<FitKnob> knobs = knobs_of(set, candidates);
  const std::vector<double> theta(knobs.size(), 0.0);
  // The Jacobian at the global parameters over every candidate, and where each candidate's entries start in it.
  const std::vector<double> at = residuals(set, candidates, global, options.residual_sd);
  const Matrix columns = jacobian(set, candidates, global, knobs, theta, at, options.residual_sd);
  std::vector<size_t> first(candidates.size() + 1, 0);
  for (size_t c = 0; c < candidates.size(); ++c) first[c + 1] = first[c] + residual_count(set.samples[candidates[c]]);
  // `m` plus candidate c's information.
  auto with = [&](Matrix m, size_t c) {
    for (size_t a = 0; a < knobs.size(); ++a)
      for (size_t b = 0; b < knobs.size(); ++b)
        for (size_t i = first[c]; i < first[c + 1]; ++i) m[a][b] += columns[a][i] * columns[b][i];
    return m;
  };
  Matrix m = prior_precision(knobs);
  std::vector<size_t> chosen;
  std::vector<bool> taken(candidates.size(), false);
  // A benchmark runs each configuration once: rows that repeat a chosen one's configuration are not candidates.
  auto configuration = [&](size_t c) {
    const DatasetRow& r = set.rows[set.samples[candidates[c]].row];
    return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", r.model, r.gpu, r.gpus, r.dtype, r.engine, r.batch,
                       r.prompt_tokens, r.gen_tokens, measures_name(r.measures));
  };
  while (chosen.size() < count) {
    double best = -1e300;
    size_t pick = candidates.size();
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (taken[c]) continue;
      Matrix l;
      if (cholesky(with(m, c), l) && log_det(l) > best) best = log_det(l), pick = c;
    }
    if (pick == candidates.size()) break;  // every configuration is chosen
    const std::string chosen_configuration = configuration(pick);
    for (size_t c = 0; c < candidates.size(); ++c) taken[c] = taken[c] || configuration(c) == chosen_configuration;
    chosen.push_back(candidates[pick]);
    m = with(std::move(m), pick);
  }
  return chosen;
}

}  // namespace llmco2::calibration
