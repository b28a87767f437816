// calibration/site_fit.h - fitting a site profile (sim/site_profile.h) on one deployment's own rows: bounded
// log-scale corrections of the global parameters, drawn toward them by a prior (a maximum a posteriori fit by
// damped Gauss-Newton), so that a few rows move them little and many rows move them freely.
#pragma once

#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/module.h"
#include "sim/site_profile.h"

namespace llmco2::calibration {

struct SiteFitOptions {
  // The log error of a row the corrections cannot remove (repeat noise, what the physics leaves out): the spread of
  // the likelihood, against which each knob's prior (SiteKnobInfo::prior_sd) weighs.
  double residual_sd = 0.05;
  int max_iterations = 40;
};

// The corrections for the GPU types and engines of `train` (samples of `set`; every sample when empty), from
// `global`. The profile's `fit` holds the training rows' error under the global and the site parameters.
SiteProfile fit_site(const CalibrationSet& set, std::vector<size_t> train, const SimParams& global,
                     const std::string& name, const SiteFitOptions& options = {});

// The `count` samples of `candidates` that pin the corrections down best: greedily, each adds the most information
// (the log-determinant of the Fisher information with the prior) at the global parameters, no two with the same
// configuration (model, GPUs, precision, engine, batch, tokens, measures). What a short benchmark of the site should
// run; fewer when the candidates hold fewer configurations.
std::vector<size_t> choose_site_rows(const CalibrationSet& set, const std::vector<size_t>& candidates,
                                     const SimParams& global, size_t count, const SiteFitOptions& options = {});

}  // namespace llmco2::calibration
