// core/log_histogram.h - quantiles and a CDF of positive values (latencies) in bounded memory: counts in geometric
// bins 1% wide from 1 us to 1e6 s, so a million requests cost the same few kilobytes as ten.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace llmco2 {

class LogHistogram {
 public:
  static constexpr double kMin = 1e-6, kMax = 1e6, kRatio = 1.01;

  void add(double value);  // values <= kMin count in the first bin, >= kMax in the last
  long count() const { return count_; }
  double mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return min_; }
  double max() const { return max_; }
  // The q-quantile (0 <= q <= 1): the geometric centre of the bin holding the order statistic at rank q (count - 1),
  // within 0.5% of it; min() and max() exactly at q = 0 and 1; 0 when empty.
  double quantile(double q) const;
  // (value, share of values <= it) at each non-empty bin's upper edge (the last at max()).
  std::vector<std::pair<double, double>> cdf() const;

 private:
  static int bin_of(double value);
  static double lower_edge(int bin);
  std::vector<uint64_t> bins_;
  long count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

}  // namespace llmco2
