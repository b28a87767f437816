// core/accuracy.h - the paper's accuracy measures: MAPE and EBA(d), the share of predictions within +-d of the truth;
// and the bias, the geometric mean of predicted / measured.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace llmco2 {

struct Accuracy {
  size_t n = 0;
  double mape = 0, eba5 = 0, eba10 = 0, eba30 = 0;  // fractions
  double bias = 1;  // geometric mean of predicted / measured: the direction and size of the bias (1 when empty)
};

// Adds (predicted, measured) pairs; measured must be positive.
class AccuracyCounter {
 public:
  void add(double predicted, double measured);
  Accuracy result() const;

 private:
  Accuracy sum_;
  double log_ratio_sum_ = 0;
};

// A fraction as a percentage with one decimal, as the reports print errors: 0.1234 -> "12.3%".
std::string percent(double fraction);

}  // namespace llmco2
