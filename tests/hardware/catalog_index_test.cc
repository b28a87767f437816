// The GPU and node catalogs' generated look-up table (hardware/catalog_index.h) equals the files it was built from,
// and look-ups through it answer what reading the whole catalog answers.
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "core/paths.h"
#include "hardware/catalog_index.h"
#include "hardware/gpu_catalog.h"
#include "hardware/node.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

std::vector<std::string> strings(const std::vector<std::string_view>& views) { return {views.begin(), views.end()}; }

TEST(CatalogIndex, WasBuiltFromTheBundledDataFolder) { EXPECT_EQ(indexed_data_dir(), data_dir().string()); }

TEST(CatalogIndex, GpuTableEqualsTheFiles) {
  const auto files = json_files_in(data_dir() / "gpus", "GPU catalog");
  ASSERT_EQ(indexed_gpus().size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const Gpu gpu = read_gpu_file(files[i]);
    const IndexedGpu& entry = indexed_gpus()[i];
    EXPECT_EQ(entry.file, files[i].filename().string());
    EXPECT_EQ(entry.id, gpu.id);
    EXPECT_EQ(entry.architecture, gpu.architecture) << gpu.id;
    EXPECT_EQ(entry.tdp_w, gpu.tdp_w) << gpu.id;
    EXPECT_EQ(strings(entry.aliases), gpu.aliases) << gpu.id;
    EXPECT_EQ(strings(entry.nvidia_smi_names), gpu.nvidia_smi_names) << gpu.id;
  }
}

TEST(CatalogIndex, NodeTableEqualsTheFiles) {
  const auto files = json_files_in(data_dir() / "nodes", "node catalog");
  ASSERT_EQ(indexed_nodes().size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const Node node = read_node_file(files[i]);
    const IndexedNode& entry = indexed_nodes()[i];
    EXPECT_EQ(entry.file, files[i].filename().string());
    EXPECT_EQ(entry.id, node.id);
    EXPECT_EQ(entry.gpu, node.gpu) << node.id;
    EXPECT_EQ(entry.default_for_gpu, node.default_for_gpu) << node.id;
  }
}

// The fields a prediction reads, and the file the GPU came from.
void expect_same_gpu(const Gpu& a, const Gpu& b, const std::string& name) {
  EXPECT_EQ(a.id, b.id) << name;
  EXPECT_EQ(a.source, b.source) << name;
  EXPECT_EQ(a.dense_peak_ops_per_s, b.dense_peak_ops_per_s) << name;
  EXPECT_EQ(a.memory_bytes, b.memory_bytes) << name;
  EXPECT_EQ(a.memory_bandwidth_bytes_per_s, b.memory_bandwidth_bytes_per_s) << name;
  EXPECT_EQ(a.tdp_w, b.tdp_w) << name;
  EXPECT_EQ(a.idle_w, b.idle_w) << name;
}

TEST(CatalogIndex, EveryGpuNameResolvesAsTheWholeCatalogResolvesIt) {
  for (const Gpu& gpu : GpuCatalog::bundled().gpus()) {
    std::vector<std::string> names = {gpu.id, "  " + gpu.id};  // "  h100" normalises to "--h100": not a name
    names.insert(names.end(), gpu.aliases.begin(), gpu.aliases.end());
    names.insert(names.end(), gpu.nvidia_smi_names.begin(), gpu.nvidia_smi_names.end());
    for (const auto& name : names) {
      std::string whole, lazy;
      try {
        expect_same_gpu(GpuCatalog::resolve_bundled(name), GpuCatalog::bundled().resolve(name), name);
      } catch (const Error& e) {
        lazy = e.what();
      }
      try {
        GpuCatalog::bundled().resolve(name);
      } catch (const Error& e) {
        whole = e.what();
      }
      EXPECT_EQ(lazy, whole) << name;
    }
  }
  expect_same_gpu(GpuCatalog::resolve_bundled("NVIDIA H100 80GB HBM3"), GpuCatalog::bundled().resolve("h100-sxm"), "");
}

// Worked out from data/gpus: Hopper (GH100) boards are h100-nvl 400 W, h100-pcie 350 W, h100-sxm 700 W, h200-nvl
// 600 W, h200 700 W: the first by id at 700 W is h100-sxm. a10g and a40 (Ampere GA102) are both 300 W: neither is
// above the other. l4 is the only AD104.
TEST(CatalogIndex, ReferenceBoardIsTheHighestTdpBoardOfTheArchitecture) {
  const auto& catalog = GpuCatalog::bundled();
  EXPECT_EQ(GpuCatalog::reference_board(catalog.resolve("h100-pcie")).id, "h100-sxm");
  EXPECT_EQ(GpuCatalog::reference_board(catalog.resolve("h200-nvl")).id, "h100-sxm");
  EXPECT_EQ(GpuCatalog::reference_board(catalog.resolve("h200")).id, "h200");
  EXPECT_EQ(GpuCatalog::reference_board(catalog.resolve("a40")).id, "a40");
  EXPECT_EQ(GpuCatalog::reference_board(catalog.resolve("l4")).id, "l4");
  Gpu mine = catalog.resolve("h100-pcie");
  mine.tdp_w = 750;  // a user's board above every bundled one of its die is its own reference
  EXPECT_EQ(&GpuCatalog::reference_board(mine), &mine);
}

// Worked out from data/nodes: dgx-h100 and hgx-h100-xe9680 hold h100-sxm, dgx-h100 marked default.
TEST(CatalogIndex, DefaultNodesAreTheWholeCatalogs) {
  EXPECT_EQ(NodeCatalog::bundled_default_for("h100-sxm")->id, "dgx-h100");
  EXPECT_FALSE(NodeCatalog::bundled_default_for("no-such-gpu"));
  for (const Gpu& gpu : GpuCatalog::bundled().gpus()) {
    const Node* whole = NodeCatalog::bundled().default_for(gpu.id);
    const auto lazy = NodeCatalog::bundled_default_for(gpu.id);
    ASSERT_EQ(whole != nullptr, lazy.has_value()) << gpu.id;
    if (whole) {
      EXPECT_EQ(lazy->source, whole->source) << gpu.id;
      EXPECT_EQ(lazy->design_power_w, whole->design_power_w) << gpu.id;
    }
  }
  for (const Node& node : NodeCatalog::bundled().nodes())
    EXPECT_EQ(NodeCatalog::resolve_bundled(node.id).source, node.source);
}

}  // namespace
}  // namespace llmco2
