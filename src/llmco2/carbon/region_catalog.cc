// carbon/region_catalog.cc - reading and resolving the region and PUE catalogs.
#include "carbon/region_catalog.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "core/csv.h"
#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"
#include "core/ranges.h"

namespace llmco2::carbon {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The plausible range of every numeric column of the two catalogs; a value outside is a typo or a wrong unit.
constexpr ParamRange kRanges[] = {
    {"ci_g_per_kwh", 0, 2000, "gCO2e/kWh: 0 (hydro, nuclear) to 1,306 (the catalog's dirtiest grid), with headroom"},
    {"pue", 1.0, 3.0, "facility / IT energy: 1.0 is the floor; 1.1 hyperscale, 1.58 survey average, 2.5 old rooms"},
    {"year", 1990, 2100, "the data year of a published figure"},
};

double parse_number(const std::string& cell, const CsvTable& table, long line, std::string_view column) {
  const auto value = parse_double(cell);
  if (!value) fail("{}:{}: column '{}': expected a number, got '{}'", table.source, line, column, cell);
  for (const ParamRange& range : kRanges)
    if (range.name == column)  // the location is formatted only for the message (a catalog has 600 numbers)
      return range.contains(*value) ? *value : check_range(*value, range, fmt::format("{}:{}", table.source, line));
  return *value;
}

int parse_year(const std::string& cell, const CsvTable& table, long line) {
  const double year = parse_number(cell, table, line, "year");
  if (year != static_cast<int>(year)) fail("{}:{}: column 'year': expected a year, got '{}'", table.source, line, cell);
  return static_cast<int>(year);
}

const std::string& required(const CsvTable::Record& record, size_t column, const CsvTable& table,
                            std::string_view name) {
  if (record.cells.size() != table.header.size())
    fail("{}:{}: {} cells, the header has {}", table.source, record.line, record.cells.size(), table.header.size());
  if (record.cells[column].empty()) fail("{}:{}: column '{}' is empty", table.source, record.line, name);
  return record.cells[column];
}

std::vector<Region> regions_of(const CsvTable& t) {
  const size_t id = t.column("id"), kind = t.column("kind"), provider = t.column("provider"), name = t.column("name"),
               ci = t.column("ci_g_per_kwh"), year = t.column("year"), source = t.column("source");
  std::vector<Region> regions;
  for (const auto& r : t.records) {
    Region region;
    region.id = required(r, id, t, "id");
    region.kind = required(r, kind, t, "kind");
    if (region.kind != "world" && region.kind != "country" && region.kind != "cloud")
      fail("{}:{}: column 'kind': expected world, country or cloud, got '{}'", t.source, r.line, region.kind);
    region.provider = r.cells[provider];
    region.name = required(r, name, t, "name");
    region.ci_g_per_kwh = parse_number(required(r, ci, t, "ci_g_per_kwh"), t, r.line, "ci_g_per_kwh");
    region.year = parse_year(required(r, year, t, "year"), t, r.line);
    region.source = required(r, source, t, "source");
    regions.push_back(std::move(region));
  }
  return regions;
}

std::vector<Region> read_regions(const std::filesystem::path& path) { return regions_of(read_csv_file(path)); }

std::vector<PueEntry> read_pue(const std::filesystem::path& path) {
  const CsvTable t = read_csv_file(path);
  const size_t id = t.column("id"), pue = t.column("pue"), year = t.column("year"), source = t.column("source");
  std::vector<PueEntry> entries;
  for (const auto& r : t.records) {
    PueEntry e{required(r, id, t, "id"), parse_number(required(r, pue, t, "pue"), t, r.line, "pue"),
               parse_year(required(r, year, t, "year"), t, r.line), required(r, source, t, "source")};
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace

RegionCatalog RegionCatalog::load(const std::filesystem::path& regions_csv, const std::filesystem::path& pue_csv) {
  RegionCatalog catalog;
  catalog.regions_ = read_regions(regions_csv);
  catalog.pue_ = read_pue(pue_csv);
  return catalog;
}

struct RegionCatalog::ByRow {
  std::filesystem::path path;
  std::mutex mutex;
  std::string text;                                                        // the file, read at the first look-up
  std::map<std::string, std::unique_ptr<const Region>, std::less<>> rows;  // by lower-case id; null: no such id
  std::once_flag whole_once;
  std::vector<Region> whole;

  const Region* row(const std::string& key) {
    std::lock_guard lock(mutex);
    if (text.empty()) text = read_text_file(path);
    if (const auto known = rows.find(key); known != rows.end()) return known->second.get();
    std::unique_ptr<const Region> region;
    if (auto table = parse_csv_row(text, path.string(), key))
      region = std::make_unique<const Region>(regions_of(*table).at(0));
    return rows.emplace(key, std::move(region)).first->second.get();
  }
};

const RegionCatalog& RegionCatalog::bundled() {
  static const RegionCatalog catalog = [] {
    RegionCatalog c;
    c.pue_ = read_pue(data_dir() / "carbon" / "pue.csv");
    c.by_row_ = std::make_shared<ByRow>();
    c.by_row_->path = data_dir() / "carbon" / "regions.csv";
    return c;
  }();
  return catalog;
}

const std::vector<Region>& RegionCatalog::regions() const {
  if (!by_row_) return regions_;
  std::call_once(by_row_->whole_once, [this] { by_row_->whole = read_regions(by_row_->path); });
  return by_row_->whole;
}

const Region* RegionCatalog::find_id(std::string_view name) const {
  const std::string key = lower(name);
  if (by_row_)
    if (const Region* row = by_row_->row(key)) return row;
  for (const auto& r : regions())  // the bundled table whole only when no row's first cell is the id (a quoted id)
    if (lower(r.id) == key) return &canonical(r);
  return nullptr;
}

// The region a name resolved to, as the one object of its id: resolve("france") and resolve("FRA") are the same
// object whether the whole table or one row answered.
const Region& RegionCatalog::canonical(const Region& region) const {
  if (!by_row_) return region;
  const Region* row = by_row_->row(lower(region.id));
  return row ? *row : region;
}

const Region& RegionCatalog::resolve(std::string_view name) const {
  if (const Region* region = find_id(name)) return *region;
  const std::string key = lower(name);
  const std::vector<Region>& all = regions();
  const Region* bare = nullptr;
  int bare_matches = 0;
  for (const auto& r : all) {
    const auto colon = r.id.find(':');
    if (colon != std::string::npos && lower(r.id.substr(colon + 1)) == key) {
      bare = &r;
      ++bare_matches;
    }
  }
  if (bare_matches == 1) return canonical(*bare);
  if (bare_matches > 1)
    fail("region '{}' exists at several providers: prefix it, e.g. gcp:{} or aws:{}", name, key, key);
  for (const auto& r : all)
    if (r.kind != "cloud" && lower(r.name) == key) return canonical(r);
  std::vector<std::string> ids;
  for (const auto& r : all) ids.push_back(r.id);
  fail(
      "unknown region '{}' (a country code such as USA or FRA, a cloud region such as gcp:us-central1 or "
      "aws:us-east-1, or WORLD); nearest: {}",
      name, join_or(nearest_names(name, ids)));
}

const PueEntry* RegionCatalog::find_pue(std::string_view id) const {
  for (const auto& e : pue_)
    if (e.id == id) return &e;
  return nullptr;
}

PueEntry RegionCatalog::resolve_pue(std::string_view text) const {
  if (const PueEntry* e = find_pue(lower(text))) return *e;
  const auto value = parse_double(text);
  if (!value) {
    std::vector<std::string> ids;
    for (const auto& e : pue_) ids.push_back(e.id);
    fail("--pue: expected a number of at least 1 or one of {}, got '{}'", join_or(ids), text);
  }
  if (!(*value >= 1) || *value > 5) fail("--pue: a PUE is between 1 and 5 (facility energy / IT energy), got {}", text);
  return {"--pue", *value, 0, "given with --pue"};
}

}  // namespace llmco2::carbon
