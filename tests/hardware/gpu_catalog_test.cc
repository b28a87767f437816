// GPU catalog: every bundled file parses with a source per value; look-up by id, alias, nvidia-smi name, path.
#include <gtest/gtest.h>

#include "core/error.h"
#include "hardware/gpu_catalog.h"

namespace llmco2 {
namespace {

const GpuCatalog& catalog() { return GpuCatalog::bundled(); }

TEST(GpuCatalog, BundlesTheIssuesGpus) {
  for (const char* id : {"t4", "l4", "a10g", "a100-40gb-sxm", "a100-80gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie",
                         "h100-sxm", "h100-pcie", "h100-nvl", "h200", "b200", "l40s", "v100-sxm2", "mi300x"})
    EXPECT_EQ(catalog().resolve(id).id, id);
  EXPECT_EQ(catalog().gpus().size(), 15u);
}

TEST(GpuCatalog, DensePeaksNotSparse) {
  const Gpu h100 = catalog().resolve("h100-sxm");
  EXPECT_DOUBLE_EQ(h100.dense_peak_ops_per_s.at(DType::bf16), 989.4e12);  // 1979 is the sparse figure
  const Gpu a100 = catalog().resolve("a100-80gb-sxm");
  EXPECT_DOUBLE_EQ(a100.dense_peak_ops_per_s.at(DType::fp16), 312e12);
  EXPECT_FALSE(a100.dense_peak_ops_per_s.contains(DType::fp8));
}

TEST(GpuCatalog, ResolvesNvidiaSmiNamesAndAliases) {
  EXPECT_EQ(catalog().resolve("NVIDIA H100 80GB HBM3").id, "h100-sxm");
  EXPECT_EQ(catalog().resolve("Tesla T4").id, "t4");
  EXPECT_EQ(catalog().resolve("h100").id, "h100-sxm");
  EXPECT_EQ(catalog().resolve("NVIDIA A100-SXM4-40GB").id, "a100-40gb-sxm");
}

TEST(GpuCatalog, UserGpuFileHasTheSameFields) {
  const Gpu mine = catalog().resolve(std::string(LLMCO2_TESTDATA) + "/gpus/my_gpu.json");
  EXPECT_EQ(mine.id, "my-gpu");
  EXPECT_DOUBLE_EQ(mine.memory_bandwidth_bytes_per_s, 300e9);
}

TEST(GpuCatalog, EveryValueNeedsASource) {
  try {
    read_gpu_file(std::string(LLMCO2_TESTDATA) + "/gpus/unsourced.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sources has no entry for 'idle_w'"), std::string::npos) << e.what();
  }
}

TEST(GpuCatalog, UnknownGpuSuggestsNearest) {
  try {
    catalog().resolve("h1000");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("h100-sxm"), std::string::npos) << e.what();
  }
}

TEST(Gpu, MatrixPeakFallsBackToTheNearestWiderType) {
  const ComputePeak t4 = catalog().resolve("t4").matrix_peak(DType::bf16);
  EXPECT_EQ(t4.dtype, DType::fp16);
  EXPECT_DOUBLE_EQ(t4.ops_per_s, 65e12);
  EXPECT_NE(t4.note.find("no bf16"), std::string::npos);
  EXPECT_EQ(catalog().resolve("a100-80gb-sxm").matrix_peak(DType::fp8).dtype, DType::fp16);
  EXPECT_EQ(catalog().resolve("h100-sxm").matrix_peak(DType::int4).dtype, DType::int8);
  EXPECT_TRUE(catalog().resolve("h100-sxm").matrix_peak(DType::bf16).note.empty());
}

TEST(Gpu, NetworkLinkIsHalfTheBidirectionalFigure) {
  const Gpu h100 = catalog().resolve("h100-sxm");
  EXPECT_DOUBLE_EQ(h100.network_link(8).bandwidth_bytes_per_s, 450e9);  // NVLink 4: 900 GB/s both ways
  const Gpu pcie = catalog().resolve("h100-pcie");
  EXPECT_EQ(pcie.network_link(2).kind, "nvlink-bridge");
  EXPECT_EQ(pcie.network_link(4).kind, "pcie-gen5-x16");  // a bridge pairs 2 GPUs only
  EXPECT_DOUBLE_EQ(pcie.network_link(4).bandwidth_bytes_per_s, 64e9);
}

}  // namespace
}  // namespace llmco2
