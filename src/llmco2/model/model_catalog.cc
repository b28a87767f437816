// model/model_catalog.cc - index of the bundled config.json files.
#include "model/model_catalog.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"
#include "model/hf_config.h"

namespace llmco2 {
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(field);
  return fields;
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
  std::ifstream in(index);
  if (!in) fail("{}: cannot open model index", index.string());
  ModelCatalog catalog;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (number == 1 || line.empty()) continue;  // header
    const auto fields = split_csv_line(line);
    if (fields.size() != 4) fail("{}:{}: expected 4 fields (id,file,hf_repo,config), found {}", index.string(), number,
                                 fields.size());
    if (fields[3] != "published" && fields[3] != "reconstructed")
      fail("{}:{}: column 'config' must be published or reconstructed, found '{}'", index.string(), number, fields[3]);
    catalog.entries_.push_back({fields[0], fields[2], dir / fields[1], fields[3] == "reconstructed"});
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
  return configs_->get(entry.id, [&] { return read_hf_config(entry.config_path); });
}

ModelSpec ModelCatalog::resolve(const std::string& name, std::string* note) const {
  if (written_as_path(name)) return read_model_path(name);
  const ModelEntry* entry = find(name);
  const bool is_path = std::filesystem::exists(name);
  if (entry && is_path && note)
    *note = fmt::format("'{}' is a bundled model id and also a path here: used the bundled model (write ./{} for the "
                        "path)", name, name);
  if (entry) {
    ModelSpec spec = config_of(*entry);
    spec.id = entry->id;
    spec.reconstructed = entry->reconstructed;
    return spec;
  }
  if (is_path || name.ends_with(".json")) return read_model_path(name);
  std::vector<std::string> ids;
  for (const auto& e : entries_) ids.push_back(e.id);
  fail("unknown model '{}' (did you mean {}? `llmco2 models` lists all; a config.json or a snapshot folder with one "
       "also works)", name, join_or(nearest_names(name, ids)));
}

}  // namespace llmco2
