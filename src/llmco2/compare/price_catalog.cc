// compare/price_catalog.cc - reading and looking up the cloud price table.
#include "compare/price_catalog.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/paths.h"

namespace llmco2::compare {
namespace {

const std::string& nonempty(const CsvTable& t, const CsvTable::Record& r, std::string_view column) {
  const std::string& cell = cell_text(t, r, column);
  if (cell.empty()) fail("{}:{}: column '{}' is empty", t.source, r.line, column);
  return cell;
}

GpuPrice price_of(const CsvTable& t, const CsvTable::Record& r) {
  check_record_width(t, r);
  GpuPrice p;
  p.gpu = nonempty(t, r, "gpu"), p.cloud = nonempty(t, r, "cloud"), p.region = nonempty(t, r, "region");
  p.instance = nonempty(t, r, "instance"), p.source = nonempty(t, r, "source");
  const double gpus = cell_positive(t, r, "gpus");
  if (gpus != std::floor(gpus) || gpus > 72)
    fail("{}:{}: column 'gpus' = {} is not a GPU count of 1 to 72", t.source, r.line, gpus);
  p.gpus = static_cast<int>(gpus);
  p.usd_per_instance_hour = cell_positive(t, r, "usd_per_instance_hour");
  if (p.usd_per_instance_hour > 1000)
    fail("{}:{}: column 'usd_per_instance_hour' = {} is above 1000 USD an hour", t.source, r.line,
         p.usd_per_instance_hour);
  p.date = nonempty(t, r, "date");
  static const std::regex kDate(R"(20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]))");
  if (!std::regex_match(p.date, kDate)) fail("{}:{}: column 'date' = '{}' is not YYYY-MM-DD", t.source, r.line, p.date);
  return p;
}

}  // namespace

PriceCatalog PriceCatalog::load(const std::filesystem::path& csv) {
  const CsvTable t = read_csv_file(csv);
  PriceCatalog c;
  for (const CsvTable::Record& r : t.records) {
    GpuPrice p = price_of(t, r);
    for (const GpuPrice& q : c.prices_)
      if (q.gpu == p.gpu && q.cloud == p.cloud)
        fail("{}:{}: {} on {} priced twice (one row per GPU type and cloud)", t.source, r.line, p.gpu, p.cloud);
    c.prices_.push_back(std::move(p));
  }
  return c;
}

const PriceCatalog& PriceCatalog::bundled() {
  static const PriceCatalog catalog = load(data_dir() / "prices" / "cloud_on_demand.csv");
  return catalog;
}

void PriceCatalog::require_cloud(const std::string& cloud) const {
  const std::vector<std::string> known = clouds();
  if (std::find(known.begin(), known.end(), cloud) == known.end())
    fail("--cloud-prices: expected one of {}, got '{}'", fmt::join(known, ", "), cloud);
}

const GpuPrice* PriceCatalog::find(const std::string& cloud, const std::string& gpu_id) const {
  for (const GpuPrice& p : prices_)
    if (p.cloud == cloud && p.gpu == gpu_id) return &p;
  return nullptr;
}

std::vector<std::string> PriceCatalog::clouds() const {
  std::vector<std::string> out;
  for (const GpuPrice& p : prices_)
    if (std::find(out.begin(), out.end(), p.cloud) == out.end()) out.push_back(p.cloud);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace llmco2::compare
