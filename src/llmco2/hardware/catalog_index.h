// hardware/catalog_index.h - the bundled GPU and node catalogs' look-up table, generated at configure time from
// data/gpus/*.json and data/nodes/*.json (cmake/catalog_index.cmake), so that a request reads only the files it names.
#pragma once

#include <string_view>
#include <vector>

#include "core/paths.h"
#include "core/read_once.h"
#include "hardware/module.h"

namespace llmco2::hardware {

// A GPU file's names and the two values die_power compares boards by.
struct IndexedGpu {
  std::string_view id, file, architecture;  // file: under data_dir()/gpus
  double tdp_w = 0;
  std::vector<std::string_view> aliases, nvidia_smi_names;
};

// A node file's id, the GPU type it holds and whether it is that type's default node.
struct IndexedNode {
  std::string_view id, file, gpu;  // file: under data_dir()/nodes
  bool default_for_gpu = false;
};

// The table, in file-name order, and the data folder it was built from (the index answers only for that folder).
const std::vector<IndexedGpu>& indexed_gpus();
const std::vector<IndexedNode>& indexed_nodes();
std::string_view indexed_data_dir();

// Whether the table describes the data folder in use (not another one named by $LLMCO2_DATA_DIR, nor a folder that
// held no catalog when the build was configured).
inline bool catalog_index_applies() {
  return !indexed_gpus().empty() && !indexed_nodes().empty() && data_dir().string() == indexed_data_dir();
}

}  // namespace llmco2::hardware
