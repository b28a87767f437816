// core/log_histogram.cc - geometric bins, quantiles and the CDF.
#include "core/log_histogram.h"

#include <algorithm>
#include <cmath>

namespace llmco2 {

int LogHistogram::bin_of(double value) {
  static const int last = static_cast<int>(std::ceil(std::log(kMax / kMin) / std::log(kRatio)));
  if (!(value > kMin)) return 0;
  return std::min(last, static_cast<int>(std::log(value / kMin) / std::log(kRatio)));
}

double LogHistogram::lower_edge(int bin) { return kMin * std::pow(kRatio, bin); }

void LogHistogram::add(double value) {
  const int bin = bin_of(value);
  if (static_cast<size_t>(bin) >= bins_.size()) bins_.resize(static_cast<size_t>(bin) + 1, 0);
  ++bins_[static_cast<size_t>(bin)];
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = count_ == 0 ? value : std::max(max_, value);
  ++count_;
  sum_ += value;
}

double LogHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  if (q <= 0) return min_;
  if (q >= 1) return max_;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(count_ - 1);  // 0-based, as percentile_of_sorted
  double seen = 0;
  for (size_t b = 0; b < bins_.size(); ++b) {
    seen += static_cast<double>(bins_[b]);
    if (seen > rank) return std::clamp(lower_edge(static_cast<int>(b)) * std::sqrt(kRatio), min_, max_);
  }
  return max_;
}

std::vector<std::pair<double, double>> LogHistogram::cdf() const {
  std::vector<std::pair<double, double>> out;
  double seen = 0;
  for (size_t b = 0; b < bins_.size(); ++b) {
    if (bins_[b] == 0) continue;
    seen += static_cast<double>(bins_[b]);
    out.emplace_back(std::min(max_, lower_edge(static_cast<int>(b) + 1)), seen / static_cast<double>(count_));
  }
  return out;
}

}  // namespace llmco2
