// core/ranges.h - checking a loaded number against its documented physical range, with an error naming file and key.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace llmco2 {

// A parameter's admissible range and why (the source or the physical argument).
struct ParamRange {
  std::string_view name;
  double lo = 0, hi = 0;
  std::string_view why;
  bool contains(double value) const { return value >= lo && value <= hi; }  // false for NaN
};

// The range of `table` named `key`; a key without one is a bug of the caller ("internal: no plausible range for
// <what> key '<key>'").
const ParamRange& range_named(std::span<const ParamRange> table, std::string_view key, std::string_view what);

// Returns `value` when finite and within [lo, hi]; else throws Error "<source>: <key> = <value> is outside [lo, hi]".
double check_range(double value, double lo, double hi, const std::string& source, std::string_view key);
// The same against a documented range, adding its reason: "... is outside [lo, hi] (<why>)". `key` is what the
// message names (default: the range's name), e.g. "shared.power_active" or "dense_peak_tflops.fp8".
double check_range(double value, const ParamRange& range, const std::string& source, std::string_view key = {});

}  // namespace llmco2
