// core/ranges.h - checking a loaded number against its documented physical range, with an error naming file and key.
#pragma once

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

// Returns `value` when finite and within [lo, hi]; else throws Error "<source>: <key> = <value> is outside [lo, hi]".
double check_range(double value, double lo, double hi, const std::string& source, std::string_view key);
double check_range(double value, const ParamRange& range, const std::string& source, std::string_view prefix = "");

}  // namespace llmco2
