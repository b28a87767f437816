// measured/import_common.cc - shared importer helpers.
#include "measured/import_common.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "dataset/architecture.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"

namespace llmco2::measured {
namespace {

// model_map.csv's relation for a model of an architecture llmco2 does not represent (T5, RWKV): rows are rejected.
constexpr std::string_view kOutOfScope = "out-of-scope";

}  // namespace

const ModelMap& ModelMap::bundled() {
  static const ModelMap map(data_dir() / "measured" / "model_map.csv");
  return map;
}

ModelMap::ModelMap(const std::filesystem::path& path) {
  const CsvTable table = read_csv_file(path);
  const size_t name = table.column("source_name"), model = table.column("model"), relation = table.column("relation");
  const size_t notes = table.column("notes");
  for (const auto& r : table.records) {
    if (r.cells.size() != table.header.size())
      fail("{}:{}: expected {} cells", path.string(), r.line, table.header.size());
    Entry entry{r.cells[model], r.cells[relation], r.cells[notes], {}, false};
    if (entry.relation != kOutOfScope) {
      const ModelSpec spec = ModelCatalog::bundled().resolve(entry.model);
      entry.arch = architecture_fields(spec);
      entry.reconstructed = spec.reconstructed;
    }
    entries_[r.cells[name]] = std::move(entry);
  }
}

void ModelMap::apply(DatasetRow& row, const std::string& source_name) const {
  row.model_source_name = source_name;
  auto it = entries_.find(source_name);
  if (it == entries_.end()) {
    row.model = source_name;
    row.model_relation = "not-in-catalog";
    return;
  }
  const Entry& entry = it->second;
  if (entry.relation == kOutOfScope)
    throw std::invalid_argument("out of scope: encoder-decoder/RNN (" + entry.notes + ")");
  row.model = entry.model;
  row.model_relation = entry.relation;
  if (row.model_relation == "same-architecture") row.caveats.push_back("model_substituted");
  if (entry.reconstructed) row.caveats.push_back("model_reconstructed");
  row.arch = entry.arch;
}

const std::string& CsvRowView::text(std::string_view column) const {
  const size_t index = table_.column(column);
  if (index >= record_.cells.size())
    throw std::invalid_argument(fmt::format("{} cells, the header has {}", record_.cells.size(), table_.header.size()));
  return record_.cells[index];
}

double CsvRowView::number(std::string_view column) const {
  const std::string& cell = text(column);
  const auto value = parse_double(cell);
  if (!value) throw std::invalid_argument(fmt::format("column '{}': expected a number, got '{}'", column, cell));
  return *value;
}

void set_interconnect(DatasetRow& row) {
  if (row.gpus < 2 || !row.interconnect.empty()) return;
  const int stage_gpus = row.gpus / std::max(1, row.pipeline_parallel);  // a stage's GPUs (stages talk over a network)
  for (const Gpu& gpu : GpuCatalog::bundled().gpus())
    if (gpu.id == row.gpu) row.interconnect = gpu.network_link(stage_gpus).kind;
}

std::string source_ref(const std::filesystem::path& file, long line) {
  return fmt::format("{}/{}:{}", file.parent_path().filename().string(), file.filename().string(), line);
}

double sharegpt_mean_prompt_tokens(const std::filesystem::path& file) {
  const Json prompts = read_json_file(file);
  double chars = 0, count = 0;
  for (const auto& p : prompts) {
    if (!p.contains("conversations") || p["conversations"].empty()) continue;
    chars += static_cast<double>(p["conversations"][0].value("value", std::string()).size());
    ++count;
  }
  if (count == 0) fail("{}: no prompts with a first conversation turn", file.string());
  return chars / count / 4.0;
}

}  // namespace llmco2::measured
