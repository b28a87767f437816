// hardware/gpu_catalog.h - the bundled GPU catalog (data/gpus/*.json) and look-up by id, alias, nvidia-smi name or
// path.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "hardware/gpu.h"
#include "hardware/module.h"

namespace llmco2::hardware {

// Reads one GPU file; every value field must name its source in "sources", and every number must be finite and within
// its plausible range (table kRanges in gpu_catalog.cc, e.g. tdp_w in [10, 2000], idle_w below tdp_w, dense peaks
// ordered fp8 >= bf16). Throws Error with one line naming the file and key, e.g.
// "my.json: tdp_w = -5 is outside [10, 2000] (...)".
Gpu gpu_from_json(const Json& json, const std::string& source);
Gpu read_gpu_file(const std::filesystem::path& path);

class GpuCatalog {
 public:
  static GpuCatalog load(const std::filesystem::path& dir);  // every *.json in dir, sorted by id
  static const GpuCatalog& bundled();                        // data_dir()/gpus, loaded once

  const std::vector<Gpu>& gpus() const { return gpus_; }
  // Resolves an id ("h100-sxm"), an alias ("h100"), an nvidia-smi name ("NVIDIA H100 80GB HBM3") or a JSON path.
  // Unknown names throw Error suggesting the nearest ids. `paths` false (the server, the Python session without
  // paths): a name is only an id, and the message does not offer a file.
  Gpu resolve(const std::string& name, bool paths = true) const;

  // What bundled().resolve(name) gives, reading only the named GPU's file when the catalog index
  // (hardware/catalog_index.h) knows the name, else the whole catalog. Thread-safe; each file is read once.
  static Gpu resolve_bundled(const std::string& name, bool paths = true);
  // The board whose TDP and peaks stand for `gpu`'s die: the bundled GPU of the same architecture with the highest
  // TDP (the first by id among equals), or `gpu` itself when none has a higher TDP. Reads only that board's file when
  // the index applies.
  static const Gpu& reference_board(const Gpu& gpu);

 private:
  std::vector<Gpu> gpus_;
};

}  // namespace llmco2::hardware
