// carbon/ci_profile.h - a grid's carbon intensity over time (a CSV of timestamp, g/kWh, e.g. hourly from a grid
// operator): each value holds from its timestamp to the next one's; before the first and after the last, the nearest.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "carbon/module.h"

namespace llmco2::carbon {

class CiProfile {
 public:
  // Reads `timestamp,g_per_kwh` rows (a header line first; timestamps as in request logs: "YYYY-MM-DD HH:MM:SS" UTC
  // or seconds since 1970). Throws Error naming the file and line of a bad row, or when rows go back in time.
  static CiProfile read(const std::filesystem::path& path);
  CiProfile(std::vector<double> start_s, std::vector<double> g_per_kwh);

  double at(double time_s) const;  // g/kWh in force at an absolute time
  // Grams of CO2 for `energy_j` spent evenly from start_s to end_s (absolute), at `pue`.
  double operational_g(double energy_j, double start_s, double end_s, double pue) const;
  double first_s() const { return start_s_.front(); }
  size_t size() const { return start_s_.size(); }
  std::string source;

 private:
  size_t index_at(double time_s) const;
  std::vector<double> start_s_, g_per_kwh_;
};

}  // namespace llmco2::carbon
