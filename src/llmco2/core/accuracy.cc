// core/accuracy.cc - MAPE and EBA accumulation.
#include "core/accuracy.h"

#include <cmath>

#include <fmt/format.h>

namespace llmco2 {

void AccuracyCounter::add(double predicted, double measured) {
  const double error = std::abs(predicted - measured) / measured;
  ++sum_.n;
  sum_.mape += error;
  sum_.eba5 += error <= 0.05;
  sum_.eba10 += error <= 0.10;
  sum_.eba30 += error <= 0.30;
  log_ratio_sum_ += std::log(predicted / measured);
}

Accuracy AccuracyCounter::result() const {
  Accuracy a = sum_;
  if (a.n == 0) return a;
  const double n = static_cast<double>(a.n);
  a.mape /= n, a.eba5 /= n, a.eba10 /= n, a.eba30 /= n;
  a.bias = std::exp(log_ratio_sum_ / n);
  return a;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

}  // namespace llmco2
