// carbon/ci_profile.cc - reading an intensity profile and integrating energy over it.
#include "carbon/ci_profile.h"

#include <algorithm>

#include "carbon/footprint.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/input_file.h"
#include "dataset/request_log.h"

namespace llmco2::carbon {

CiProfile::CiProfile(std::vector<double> start_s, std::vector<double> g_per_kwh)
    : start_s_(std::move(start_s)), g_per_kwh_(std::move(g_per_kwh)) {
  if (start_s_.empty() || start_s_.size() != g_per_kwh_.size())
    fail("a carbon-intensity profile needs at least one row");
}

// Streamed record by record: memory is the two columns (16 bytes a row), not the table (a 120 MB profile read whole
// took 981 MB).
CiProfile CiProfile::read(const std::filesystem::path& path) {
  std::ifstream in = open_input_file(path, kMaxTextFileBytes, "carbon-intensity profile");
  CsvReader reader(in, path.string());
  const auto header = reader.next();
  if (!header || header->cells.size() < 2) fail("{}: expected two columns: timestamp,g_per_kwh", reader.source());
  std::vector<double> start_s, g;
  while (const auto r = reader.next()) {
    const auto time = r->cells.size() >= 2 ? parse_timestamp(r->cells[0]) : std::nullopt;
    const auto value = r->cells.size() >= 2 ? parse_double(r->cells[1]) : std::nullopt;
    if (!time)
      fail("{}:{}: expected a timestamp (YYYY-MM-DD HH:MM:SS or seconds) in the first column", reader.source(),
           r->line);
    if (!value || *value < 0 || *value > 5000)
      fail("{}:{}: expected a carbon intensity in g/kWh (0 to 5000) in the second column", reader.source(), r->line);
    if (!start_s.empty() && *time <= start_s.back())
      fail("{}:{}: timestamps must increase (this one is not after the row before)", reader.source(), r->line);
    start_s.push_back(*time);
    g.push_back(*value);
  }
  if (start_s.empty()) fail("{}: no rows (expected timestamp,g_per_kwh lines after the header)", reader.source());
  CiProfile p(std::move(start_s), std::move(g));
  p.source = reader.source();
  return p;
}

size_t CiProfile::index_at(double time_s) const {
  const auto it = std::upper_bound(start_s_.begin(), start_s_.end(), time_s);
  return it == start_s_.begin() ? 0 : static_cast<size_t>(it - start_s_.begin()) - 1;
}

double CiProfile::at(double time_s) const { return g_per_kwh_[index_at(time_s)]; }

double CiProfile::operational_g(double energy_j, double start_s, double end_s, double pue) const {
  if (!(end_s > start_s)) return carbon::operational_g(energy_j, pue, at(start_s));
  const double power_w = energy_j / (end_s - start_s);
  double grams = 0;
  for (size_t i = index_at(start_s); start_s < end_s; ++i) {  // split at the profile's boundaries
    const double until = i + 1 < start_s_.size() ? std::min(end_s, start_s_[i + 1]) : end_s;
    grams += carbon::operational_g(power_w * (until - start_s), pue, g_per_kwh_[i]);
    start_s = until;
  }
  return grams;
}

}  // namespace llmco2::carbon
