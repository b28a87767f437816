// core/accuracy.h - the paper's accuracy measures: MAPE and EBA(d), the share of predictions within +-d of the truth.
#pragma once

#include <cstddef>
#include <vector>

namespace llmco2 {

struct Accuracy {
  size_t n = 0;
  double mape = 0, eba5 = 0, eba10 = 0, eba30 = 0;  // fractions
};

// Adds (predicted, measured) pairs; measured must be positive.
class AccuracyCounter {
 public:
  void add(double predicted, double measured);
  Accuracy result() const;

 private:
  Accuracy sum_;
};

}  // namespace llmco2
