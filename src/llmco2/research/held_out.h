// research/held_out.h - held-out fits of the simulator: one parameter set per left-out group of measured rows (a
// source, or a GPU type), fitted in parallel on every other row, and each left-out row predicted by its group's set.
// `llmco2 calibrate` reports them; `llmco2 validate` turns their residuals into intervals and scores.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "research/module.h"

namespace llmco2::research {

// Fits one parameter set per group (`group_of` names a sample's group) on `threads` threads and fills `out` (parallel
// to set.samples) with each sample's held-out prediction; returns each group's parameters. Progress (groups done, rate,
// ETA) goes to stderr under `command`. The first error of a fit (an interrupt among them) stops the other workers after
// their current fit and is rethrown after the join.
std::map<std::string, SimParams> leave_one_group_out(const CalibrationSet& set, const FitOptions& fit, unsigned threads,
                                                     const std::function<std::string(size_t)>& group_of,
                                                     std::vector<SimEstimate>& out, const std::string& command);

}  // namespace llmco2::research
