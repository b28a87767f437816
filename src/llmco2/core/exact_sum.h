// core/exact_sum.h - a sum of doubles that does not depend on the order of its terms: each term is held as a 128-bit
// fixed-point integer with 64 fractional bits, so partial sums (per thread, per shape x count) add up exactly.
#pragma once

#include <cmath>

#include "core/error.h"

namespace llmco2 {

__extension__ typedef __int128 Int128;  // GCC and Clang on 64-bit targets

class ExactSum {
 public:
  static constexpr double kScale = 18446744073709551616.0;  // 2^64: the resolution is 2^-64 (5.4e-20)
  static constexpr double kLimit = 4611686018427387904.0;   // 2^62: the largest magnitude a term or the sum may reach

  // Adds `count` times `value` (exactly: the integer product). Throws Error beyond kLimit or for a non-finite value.
  void add(double value, long count = 1) {
    if (!(std::fabs(value) < kLimit)) fail("exact sum: a term of {} is outside +-2^62", value);
    const auto term = static_cast<Int128>(value * kScale);  // exact for |value| >= 2^-11, truncated below
    Int128 product = term;
    if ((count != 1 && __builtin_mul_overflow(term, static_cast<Int128>(count), &product)) ||
        __builtin_add_overflow(units_, product, &units_))
      fail("exact sum: {} x {} overflows the total", count, value);
  }
  void add(const ExactSum& other) {
    if (__builtin_add_overflow(units_, other.units_, &units_)) fail("exact sum: two partial sums overflow the total");
  }
  // The sum rounded once to the nearest double.
  double value() const { return static_cast<double>(units_) / kScale; }

 private:
  Int128 units_ = 0;  // the sum in units of 2^-64
};

}  // namespace llmco2
