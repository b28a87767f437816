// model/model_catalog.h - the bundled model architectures (data/models/index.csv) and look-up by id, HF id or path.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/read_once.h"
#include "model/model_spec.h"
#include "model/module.h"

namespace llmco2::model {

struct ModelEntry {
  std::string id;              // e.g. "llama-3.1-8b"
  std::string hf_repo;         // e.g. "meta-llama/Llama-3.1-8B"
  std::string file;            // its config.json in the catalog's folder: ModelCatalog::config_path
  bool reconstructed = false;  // assembled from partial sources, not a copy (data/models/RECONSTRUCTED.md)
};

class ModelCatalog {
 public:
  // Reads <dir>/index.csv (columns id,file,hf_repo,config; config is "published" for a copied config.json or
  // "reconstructed"). Throws Error naming the file and line on a bad row.
  static ModelCatalog load(const std::filesystem::path& dir);
  static const ModelCatalog& bundled();  // loaded once from data_dir()/models

  const std::vector<ModelEntry>& entries() const { return entries_; }
  // The entry's config.json (made on demand: a path per entry cost `predict` more than reading the index).
  std::filesystem::path config_path(const ModelEntry& entry) const { return dir_ / entry.file; }

  // Resolves a bundled id, a HF repo id (case-insensitive), the path of a config.json (bare, as `config.json`, or
  // with a folder) or a Hugging Face snapshot folder (its config.json, and hf_quant_config.json when present). A name
  // written as a path (/..., ./..., ../...) is only a path. A name that is both a bundled id and an existing path
  // takes the bundled model, and `note` (when given) says so and how to name the path. Unknown names throw Error
  // suggesting the nearest ids.
  ModelSpec resolve(const std::string& name, std::string* note = nullptr) const;

  // The bundled entry with this id or HF repo id, or nullptr.
  const ModelEntry* find(const std::string& name) const;

  // The entry's config.json, read once per process (a server answers each request from it; `models` lists all).
  const ModelSpec& config_of(const ModelEntry& entry) const;

 private:
  std::filesystem::path dir_;
  std::vector<ModelEntry> entries_;
  std::shared_ptr<ReadOnce<ModelSpec>> configs_ = std::make_shared<ReadOnce<ModelSpec>>();
};

}  // namespace llmco2::model
