// carbon/region_catalog.h - grid carbon intensity by country or cloud region, and PUE by provider or survey
// (data/carbon/regions.csv and pue.csv; every value carries its source and year).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "carbon/module.h"

namespace llmco2::carbon {

struct Region {
  std::string id;        // "USA", "gcp:us-central1", "aws:us-east-1", "WORLD"
  std::string kind;      // world | country | cloud
  std::string provider;  // gcp | aws | azure for cloud regions, else ""
  std::string name;
  double ci_g_per_kwh = 0;  // location-based annual average, gCO2e per kWh consumed
  int year = 0;
  std::string source;
};

struct PueEntry {
  std::string id;  // a provider (gcp, aws, azure) or a survey average (industry-average, ...)
  double pue = 1;
  int year = 0;
  std::string source;
};

class RegionCatalog {
 public:
  // Reads both files; a bad row throws Error naming the file, line and column, including a value outside its
  // plausible range (ci_g_per_kwh in [0, 2000], pue in [1, 3], year in [1990, 2100]; region_catalog.cc says why).
  static RegionCatalog load(const std::filesystem::path& regions_csv, const std::filesystem::path& pue_csv);
  // data_dir()/carbon: pue.csv read at once; regions.csv read row by row for ids (a request names one region of its
  // ~400 sourced rows, and parsing them all was a tenth of `predict`), whole for other names and for regions().
  static const RegionCatalog& bundled();

  // An id ("FRA", "gcp:europe-west9", case-insensitive), a bare cloud region when one provider has it
  // ("us-east-1"), or a country name ("France"). Unknown names throw Error suggesting the nearest ids.
  const Region& resolve(std::string_view name) const;
  // The PUE entry with this id, or nullptr.
  const PueEntry* find_pue(std::string_view id) const;
  // A PUE given as a number or an entry id (throws Error naming the flag value when it is neither, or is below 1).
  PueEntry resolve_pue(std::string_view text) const;

  const std::vector<Region>& regions() const;
  const std::vector<PueEntry>& pue_entries() const { return pue_; }

 private:
  struct ByRow;  // bundled()'s regions.csv, read by row until a name needs the whole table
  const Region* find_id(std::string_view name) const;
  const Region& canonical(const Region& region) const;

  std::vector<Region> regions_;
  std::vector<PueEntry> pue_;
  std::shared_ptr<ByRow> by_row_;  // null: regions_ holds the table
};

}  // namespace llmco2::carbon
