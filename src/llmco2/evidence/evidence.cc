// evidence/evidence.cc - evidence keys, the index of measured setups and the label of a request.
#include "evidence/evidence.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/json_io.h"
#include "core/paths.h"

namespace llmco2::evidence {
namespace {

// floor(log4(value / first)), clamped to [0, kBands - 1].
int band_of(double value, double first) {
  if (!(value >= first)) return 0;
  const int band = static_cast<int>(std::floor(std::log2(value / first) / 2.0 + 1e-9));
  return std::clamp(band, 0, kBands - 1);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The columns of data/evidence/index.csv, in order.
constexpr const char* kColumns[] = {"source",    "gpu",    "generation", "vendor",       "engine",
                                    "precision", "family", "batch_band", "context_band", "rows"};

bool same_setup(const EvidenceKey& a, const EvidenceKey& b) {
  return a.gpu == b.gpu && a.generation == b.generation && a.vendor == b.vendor && a.engine == b.engine &&
         a.precision == b.precision && a.family == b.family && a.batch_band == b.batch_band &&
         a.context_band == b.context_band;
}

bool calibrates(const EvidenceKey& measured, const EvidenceKey& asked) {
  return measured.gpu == asked.gpu && measured.engine == asked.engine && measured.precision == asked.precision &&
         measured.batch_band == asked.batch_band && measured.context_band == asked.context_band;
}

// `same_family`: the two engines are versions of one (engine_family), worked out once by the caller.
bool interpolates(const EvidenceKey& measured, const EvidenceKey& asked, bool same_family) {
  return measured.vendor == asked.vendor && measured.generation == asked.generation && same_family &&
         measured.precision == asked.precision && std::abs(measured.batch_band - asked.batch_band) <= 1 &&
         std::abs(measured.context_band - asked.context_band) <= 1;
}

std::string sources_text(const std::vector<NearSource>& nearest) {
  std::string out;
  for (const NearSource& n : nearest)
    out += fmt::format("{}{} ({}, {} rows)", out.empty() ? "" : "; ", n.source, n.setup, n.rows);
  return out.empty() ? "none" : out;
}

int band_cell(const CsvTable& table, const CsvTable::Record& record, const char* column) {
  const double value = cell_number(table, record, column);
  if (value < 0 || value >= kBands || value != std::floor(value))
    fail("{}:{}: column '{}' = {} is not a band from 0 to {}", table.source, record.line, column, value, kBands - 1);
  return static_cast<int>(value);
}

}  // namespace

std::string_view label_name(EvidenceLabel label) {
  switch (label) {
    case EvidenceLabel::calibrated:
      return "calibrated";
    case EvidenceLabel::interpolated:
      return "interpolated";
    case EvidenceLabel::extrapolated:
      return "extrapolated";
  }
  return "extrapolated";
}

std::optional<EvidenceLabel> parse_label(std::string_view text) {
  for (EvidenceLabel label : kEvidenceLabels)
    if (label_name(label) == text) return label;
  return std::nullopt;
}

int batch_band(double batch) { return band_of(batch, 1.0); }
int context_band(double tokens) { return tokens < 1024 ? 0 : std::min(kBands - 1, 1 + band_of(tokens, 1024.0)); }

std::string batch_band_name(int band) {
  if (band >= kBands - 1) return fmt::format("batch {}+", 1 << (2 * (kBands - 1)));
  return fmt::format("batch {}-{}", 1 << (2 * band), (1 << (2 * band + 2)) - 1);
}

std::string context_band_name(int band) {
  if (band == 0) return "context <1k";
  if (band >= kBands - 1) return fmt::format("context {}k+", 1 << (2 * (kBands - 2)));
  return fmt::format("context {}k-{}k", 1 << (2 * (band - 1)), 1 << (2 * band));
}

std::string evidence_generation(const Gpu& gpu) {
  const std::string text = lower(gpu.architecture);
  // Marketing names first, then die names; the first match in this order wins.
  static const std::pair<const char*, const char*> kNames[] = {{"blackwell", "blackwell"},
                                                               {"hopper", "hopper"},
                                                               {"ada", "ada"},
                                                               {"ampere", "ampere"},
                                                               {"turing", "turing"},
                                                               {"volta", "volta"},
                                                               {"cdna 3", "cdna3"},
                                                               {"cdna 2", "cdna2"},
                                                               {"gaudi", "gaudi"},
                                                               {"gb2", "blackwell"},
                                                               {"gb1", "blackwell"},
                                                               {"gh1", "hopper"},
                                                               {"ad1", "ada"},
                                                               {"ga1", "ampere"},
                                                               {"tu1", "turing"},
                                                               {"gv1", "volta"}};
  for (const auto& [needle, generation] : kNames)
    if (text.find(needle) != std::string::npos) return generation;
  const size_t end = text.find_first_of(" (,;");
  return text.substr(0, end);
}

std::string_view engine_family(std::string_view engine) {
  static const char* const kFamilies[] = {"hf-transformers", "trt-llm", "llama.cpp", "vllm",
                                          "sglang",          "tgi",     "deepspeed"};
  for (const char* family : kFamilies)
    if (engine.rfind(family, 0) == 0) return family;
  return engine;
}

std::string precision_path(const Precision& p) {
  const DType compute = p.compute_dtype();
  if (is_wide(compute)) {
    const double bytes = std::min(dtype_bytes(p.weights), dtype_bytes(p.expert_dtype()));
    if (bytes >= 2) return "16-bit";
    return bytes >= 1 ? "w8a16" : "w4a16";
  }
  return std::string(dtype_name(tensor_dtype(compute)));
}

EvidenceKey evidence_key(const Gpu& gpu, const std::string& engine, const Precision& precision,
                         const std::string& family, double batch, double context_tokens) {
  EvidenceKey key;
  key.gpu = gpu.id;
  key.generation = evidence_generation(gpu);
  key.vendor = lower(gpu.vendor);
  key.engine = engine;
  key.precision = precision_path(precision);
  key.family = family;
  key.batch_band = batch_band(batch);
  key.context_band = context_band(context_tokens);
  return key;
}

std::string describe(const EvidenceKey& key) {
  return fmt::format("{}, {}, {}, {}, {}", key.gpu, key.engine, key.precision, batch_band_name(key.batch_band),
                     context_band_name(key.context_band));
}

namespace {

// evidence_distance with the engines' families compared by the caller.
double distance(const EvidenceKey& a, const EvidenceKey& b, bool same_family) {
  double d = 0;
  if (a.vendor != b.vendor) d += 4;
  else if (a.generation != b.generation) d += 2;
  else if (a.gpu != b.gpu) d += 1;
  if (!same_family) d += 2;
  else if (a.engine != b.engine) d += 0.5;
  if (a.precision != b.precision) d += 1;
  if (a.family != b.family) d += 0.5;
  return d + std::abs(a.batch_band - b.batch_band) + std::abs(a.context_band - b.context_band);
}

}  // namespace

double evidence_distance(const EvidenceKey& a, const EvidenceKey& b) {
  return distance(a, b, engine_family(a.engine) == engine_family(b.engine));
}

void EvidenceIndex::add(const std::string& source, const EvidenceKey& key, long rows) {
  for (EvidenceEntry& e : entries_)
    if (e.source == source && same_setup(e.key, key)) {
      e.rows += rows;
      return;
    }
  entries_.push_back({source, key, rows, std::string(engine_family(key.engine))});
}

Evidence EvidenceIndex::assess(const EvidenceKey& key,
                               const std::function<bool(const EvidenceEntry&)>& excluded) const {
  struct Nearest {
    const EvidenceEntry* entry;
    double distance;
  };
  std::map<std::string_view, Nearest> best;  // per source, its nearest setup (described once chosen)
  bool calibrated = false, interpolated = false;
  long calibrating_rows = 0;
  const std::string_view family = engine_family(key.engine);
  for (const EvidenceEntry& e : entries_) {
    if (excluded && excluded(e)) continue;
    if (calibrates(e.key, key)) {
      calibrated = true;
      calibrating_rows += e.rows;
    }
    const bool same_family = e.engine_family == family;
    interpolated = interpolated || interpolates(e.key, key, same_family);
    const double d = distance(e.key, key, same_family);
    auto it = best.find(e.source);
    if (it == best.end() || d < it->second.distance || (d == it->second.distance && e.rows > it->second.entry->rows))
      best.insert_or_assign(e.source, Nearest{&e, d});
  }
  std::vector<Nearest> order;
  for (const auto& [source, near] : best) order.push_back(near);
  std::sort(order.begin(), order.end(), [](const Nearest& a, const Nearest& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.entry->rows > b.entry->rows;
  });
  if (order.size() > 3) order.resize(3);
  Evidence out;
  for (const Nearest& n : order)
    out.nearest.push_back({n.entry->source, describe(n.entry->key), n.entry->rows, n.distance});
  const std::string setup = describe(key);
  if (calibrated) {
    out.label = EvidenceLabel::calibrated;
    out.reason = fmt::format("{} measured rows of this GPU, engine, precision and regime ({}); nearest: {}",
                             calibrating_rows, setup, sources_text(out.nearest));
  } else if (interpolated) {
    out.label = EvidenceLabel::interpolated;
    out.reason = fmt::format(
        "no measured row of {}; the same generation ({}), engine ({}) and precision are measured within one regime "
        "band: {}",
        setup, key.generation, engine_family(key.engine), sources_text(out.nearest));
  } else {
    out.label = EvidenceLabel::extrapolated;
    out.reason = fmt::format("nothing measured within one regime band on a {} GPU with {} at {}; nearest: {}",
                             key.generation, key.engine, key.precision, sources_text(out.nearest));
  }
  return out;
}

EvidenceIndex read_evidence_index(const std::filesystem::path& path) {
  const CsvTable table = read_csv_file(path);
  for (const char* column : kColumns) (void)table.column(column);
  EvidenceIndex index;
  for (const CsvTable::Record& r : table.records) {
    check_record_width(table, r);
    EvidenceKey key;
    key.gpu = cell_text(table, r, "gpu");
    key.generation = cell_text(table, r, "generation");
    key.vendor = cell_text(table, r, "vendor");
    key.engine = cell_text(table, r, "engine");
    key.precision = cell_text(table, r, "precision");
    key.family = cell_text(table, r, "family");
    key.batch_band = band_cell(table, r, "batch_band");
    key.context_band = band_cell(table, r, "context_band");
    const double rows = cell_positive(table, r, "rows");
    if (rows != std::floor(rows) || rows > 1e9)
      fail("{}:{}: column 'rows' = {} is not a whole count", table.source, r.line, rows);
    const std::string& source = cell_text(table, r, "source");
    if (source.empty() || key.gpu.empty() || key.engine.empty() || key.precision.empty())
      fail("{}:{}: source, gpu, engine and precision must not be empty", table.source, r.line);
    index.add(source, key, static_cast<long>(rows));
  }
  return index;
}

void write_evidence_index(const std::filesystem::path& path, const EvidenceIndex& index) {
  std::string out;
  append_csv_record(out, std::vector<std::string>(std::begin(kColumns), std::end(kColumns)));
  for (const EvidenceEntry& e : index.entries()) {
    const EvidenceKey& k = e.key;
    append_csv_record(out, {e.source, k.gpu, k.generation, k.vendor, k.engine, k.precision, k.family,
                            std::to_string(k.batch_band), std::to_string(k.context_band), std::to_string(e.rows)});
  }
  write_file_atomic(path, out);
}

std::filesystem::path default_evidence_index_path() { return data_dir() / "evidence" / "index.csv"; }

}  // namespace llmco2::evidence
