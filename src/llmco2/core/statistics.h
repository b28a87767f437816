// core/statistics.h - percentiles of samples (linear interpolation between order statistics, numpy's default).
#pragma once

#include <vector>

namespace llmco2 {

// The q-th percentile (q in [0, 1]) of values sorted ascending; values must not be empty.
double percentile_of_sorted(const std::vector<double>& sorted, double q);
// The same for values in any order.
double percentile(std::vector<double> values, double q);

}  // namespace llmco2
