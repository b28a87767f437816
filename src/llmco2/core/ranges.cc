// core/ranges.cc - range checks with one clear error line.
#include "core/ranges.h"

#include <cmath>

#include "core/error.h"

namespace llmco2 {

const ParamRange& range_named(std::span<const ParamRange> table, std::string_view key, std::string_view what) {
  for (const ParamRange& range : table)
    if (range.name == key) return range;
  fail("internal: no plausible range for {} key '{}'", what, key);
}

double check_range(double value, double lo, double hi, const std::string& source, std::string_view key) {
  if (!std::isfinite(value)) fail("{}: {} = {} is not a finite number", source, key, value);
  if (value < lo || value > hi) fail("{}: {} = {:g} is outside [{:g}, {:g}]", source, key, value, lo, hi);
  return value;
}

double check_range(double value, const ParamRange& range, const std::string& source, std::string_view key) {
  if (key.empty()) key = range.name;
  if (!std::isfinite(value)) fail("{}: {} = {} is not a finite number", source, key, value);
  if (!range.contains(value))
    fail("{}: {} = {:g} is outside [{:g}, {:g}] ({})", source, key, value, range.lo, range.hi, range.why);
  return value;
}

}  // namespace llmco2
