// model/model_catalog.cc - index of the bundled config.json files.
#include "model/model_catalog.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"
#include "model/hf_config.h"

namespace llmco2::model {
namespace {

// The comma-separated fields of `line` (no quoting in the index); a trailing comma adds no empty field.
std::vector<std::string_view> split_csv_line(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t start = 0; start < line.size();) {
    const size_t comma = std::min(line.find(',', start), line.size());
    fields.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
  return fields;
}

std::string read_index(const std::filesystem::path& index) {
  try {
    return read_text_file(index);
  } catch (const Error&) {
    fail("{}: cannot open model index", index.string());
  }
}

// Written so that it can only be a path: absolute, or starting with ./ or ../
bool written_as_path(const std::string& name) {
  return name.starts_with('/') || name.starts_with("./") || name.starts_with("../");
}

// A config.json file, or a Hugging Face snapshot folder holding one (and hf_quant_config.json when quantised).
ModelSpec read_model_path(const std::filesystem::path& path) {
  if (!std::filesystem::is_directory(path)) return read_hf_config(path);
  const auto config = path / "config.json";
  if (!std::filesystem::exists(config))
    fail("{}: a model folder needs a config.json (as a Hugging Face snapshot folder holds), found none", path.string());
  return read_hf_config(config);
}

}  // namespace

ModelCatalog ModelCatalog::load(const std::filesystem::path& dir) {
  const auto index = dir / "index.csv";
  const std::string text = read_index(index);
  ModelCatalog catalog;
  catalog.dir_ = dir;
  std::string_view rest = text;
  for (int number = 1; !rest.empty(); ++number) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (number == 1 || line.empty()) continue;  // header
    const auto fields = split_csv_line(line);
    if (fields.size() != 4)
      fail("{}:{}: expected 4 fields (id,file,hf_repo,config), found {}", index.string(), number, fields.size());
    if (fields[3] != "published" && fields[3] != "reconstructed")
      fail("{}:{}: column 'config' must be published or reconstructed, found '{}'", index.string(), number, fields[3]);
    catalog.entries_.push_back(
        {std::string(fields[0]), std::string(fields[2]), std::string(fields[1]), fields[3] == "reconstructed"});
  }
  return catalog;
}

const ModelCatalog& ModelCatalog::bundled() {
  static const ModelCatalog catalog = load(data_dir() / "models");
  return catalog;
}

const ModelEntry* ModelCatalog::find(const std::string& name) const {
  const std::string key = normalize_name(name);
  for (const auto& entry : entries_)
    if (entry.id == key || normalize_name(entry.hf_repo) == key) return &entry;
  return nullptr;
}

const ModelSpec& ModelCatalog::config_of(const ModelEntry& entry) const {
  return configs_->get(entry.id, [&] { return read_hf_config(config_path(entry)); });
}

ModelSpec ModelCatalog::resolve(const std::string& name, std::string* note) const {
  if (written_as_path(name)) return read_model_path(name);
  const ModelEntry* entry = find(name);
  const bool is_path = std::filesystem::exists(name);
  if (entry && is_path && note)
    *note = fmt::format(
        "'{}' is a bundled model id and also a path here: used the bundled model (write ./{} for the "
        "path)",
        name, name);
  if (entry) {
    ModelSpec spec = config_of(*entry);
    spec.id = entry->id;
    spec.reconstructed = entry->reconstructed;
    return spec;
  }
  if (is_path || name.ends_with(".json")) return read_model_path(name);
  std::vector<std::string> ids;
  for (const auto& e : entries_) ids.push_back(e.id);
  fail(
      "unknown model '{}' (did you mean {}? `llmco2 models` lists all; a config.json or a snapshot folder with one "
      "also works)",
      name, join_or(nearest_names(name, ids)));
}

}  // namespace llmco2::model
