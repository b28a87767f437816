// GPU catalog: every bundled file parses with a source per value and within the plausible ranges; look-up by id,
// alias, nvidia-smi name, path; a file with an implausible value is refused with one line naming file and key.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "core/paths.h"
#include "hardware/gpu_catalog.h"

namespace llmco2 {
namespace {

const GpuCatalog& catalog() { return GpuCatalog::bundled(); }

Json my_gpu() { return read_json_file(std::string(LLMCO2_TESTDATA) + "/gpus/my_gpu.json"); }

// The message of the Error thrown when `json` is written to <temp>/bad/my_gpu.json and read back, or "".
std::string refusal(const Json& json) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "my_gpu.json") << json.dump(1);
  try {
    read_gpu_file(dir / "my_gpu.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GpuCatalog, BundlesTheIssuesGpus) {
  for (const char* id : {"t4", "l4", "a10g", "a100-40gb-sxm", "a100-80gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie",
                         "h100-sxm", "h100-pcie", "h100-nvl", "h200", "b200", "l40s", "v100-sxm2", "mi300x",
                         "a40", "rtx-6000-ada", "rtx-3090", "l40", "h200-nvl", "gh200-96gb", "gh200-144gb", "gb200",
                         "mi250x", "mi325x", "gaudi3"})
    EXPECT_EQ(catalog().resolve(id).id, id);
  EXPECT_EQ(catalog().gpus().size(), 26u);
}

TEST(GpuCatalog, EveryBundledFilePassesTheRangeChecks) {
  // GpuCatalog::load applies every check; load the folder afresh (not the cached catalog).
  const GpuCatalog fresh = GpuCatalog::load(data_dir() / "gpus");
  ASSERT_EQ(fresh.gpus().size(), 26u);
  for (const Gpu& gpu : fresh.gpus()) {
    EXPECT_GE(gpu.idle_w, 1) << gpu.id;
    EXPECT_LT(gpu.idle_w, gpu.tdp_w) << gpu.id;
    EXPECT_GE(gpu.tdp_w, 10) << gpu.id;
    EXPECT_LE(gpu.tdp_w, 2000) << gpu.id;
  }
}

TEST(GpuCatalog, ImplausibleValuesAreRefusedNamingFileAndKey) {
  struct Case {
    const char* pointer;  // JSON pointer of the value to change
    double value;
    const char* message;
  };
  const Case cases[] = {
      {"/tdp_w", -5, "my_gpu.json: tdp_w = -5 is outside [10, 2000]"},
      {"/tdp_w", 5000, "my_gpu.json: tdp_w = 5000 is outside [10, 2000]"},
      {"/idle_w", 0.5, "my_gpu.json: idle_w = 0.5 is outside [1, 2000]"},
      {"/idle_w", 80, "my_gpu.json: idle_w = 80 is not below tdp_w = 72"},
      {"/memory_gb", 2048, "my_gpu.json: memory_gb = 2048 is outside [1, 1024]"},
      {"/memory_bandwidth_gb_per_s", 30000, "my_gpu.json: memory_bandwidth_gb_per_s = 30000 is outside [50, 20000]"},
      {"/memory_bandwidth_gb_per_s", 10, "my_gpu.json: memory_bandwidth_gb_per_s = 10 is outside [50, 20000]"},
      {"/dense_peak_tflops/bf16", 50000, "my_gpu.json: dense_peak_tflops.bf16 = 50000 is outside [0.1, 20000]"},
      {"/dense_peak_tflops/fp32", 0.01, "my_gpu.json: dense_peak_tflops.fp32 = 0.01 is outside [0.1, 20000]"},
      {"/dense_peak_tflops/fp8", 100, "my_gpu.json: dense_peak_tflops.fp8 = 100 is below dense_peak_tflops.bf16 = 121"},
      {"/dense_peak_tflops/fp4", 200,
       "my_gpu.json: dense_peak_tflops.fp4 = 200 is below dense_peak_tflops.fp8 = 242.5"},
      {"/host_link/bandwidth_gb_per_s", 0, "my_gpu.json: host_link.bandwidth_gb_per_s = 0 is outside [1, 1000]"},
      {"/die_area_mm2", 0, "my_gpu.json: die_area_mm2 = 0 is outside [10, 5000]"},
      {"/process_nm", 500, "my_gpu.json: process_nm = 500 is outside [1, 100]"},
      {"/embodied/llmcarbon_cpa_kgco2e_per_cm2", 50,
       "my_gpu.json: embodied.llmcarbon_cpa_kgco2e_per_cm2 = 50 is outside [0.1, 10]"},
  };
  for (const Case& c : cases) {
    Json gpu = my_gpu();
    gpu[Json::json_pointer(c.pointer)] = c.value;
    const std::string message = refusal(gpu);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.pointer << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // one line
  }
  Json linked = my_gpu();
  linked["gpu_link"] = {{"kind", "nvlink4"}, {"bandwidth_gb_per_s", -3.0}, {"max_gpus", 8}};
  linked["sources"]["gpu_link"] = "test";
  EXPECT_NE(refusal(linked).find("my_gpu.json: gpu_link.bandwidth_gb_per_s = -3 is outside [1, 20000]"),
            std::string::npos)
      << refusal(linked);
  linked["gpu_link"]["bandwidth_gb_per_s"] = 900.0;
  linked["gpu_link"]["max_gpus"] = 1;
  EXPECT_NE(refusal(linked).find("my_gpu.json: gpu_link.max_gpus = 1 is outside [2, 1024]"), std::string::npos);
  linked["gpu_link"]["max_gpus"] = 8;
  EXPECT_EQ(refusal(linked), "");
  Json infinite = my_gpu();
  infinite["tdp_w"] = std::numeric_limits<double>::infinity();  // not writable as JSON text: checked in memory
  try {
    gpu_from_json(infinite, "inf.json");
    FAIL() << "an infinite tdp_w was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inf.json: tdp_w = inf is not a finite number"), std::string::npos)
        << e.what();
  }
}

TEST(GpuCatalog, FpEightAndFpFourOnlyWhereTheHardwareHasThem) {
  for (const Gpu& gpu : catalog().gpus()) {
    const bool blackwell = gpu.architecture.find("Blackwell") != std::string::npos;
    const bool has_fp8_units = gpu.architecture.find("Hopper") != std::string::npos ||
                               gpu.architecture.find("Ada") != std::string::npos || blackwell ||
                               gpu.architecture.find("CDNA 3") != std::string::npos ||
                               gpu.architecture.find("Gaudi 3") != std::string::npos;
    EXPECT_EQ(gpu.dense_peak_ops_per_s.contains(DType::fp8), has_fp8_units) << gpu.id << " " << gpu.architecture;
    // fp4 tensor cores: Blackwell only (b200, gb200).
    EXPECT_EQ(gpu.dense_peak_ops_per_s.contains(DType::fp4), blackwell) << gpu.id;
  }
  EXPECT_DOUBLE_EQ(catalog().resolve("b200").dense_peak_ops_per_s.at(DType::fp4), 9000e12);  // 18,000 is sparse
}

TEST(GpuCatalog, SameDieBoardsAreConsistent) {
  // GH100 boards: SXM, PCIe and NVL peaks scale with the board's clocks; H200 is the SXM board with more memory.
  const Gpu sxm = catalog().resolve("h100-sxm"), pcie = catalog().resolve("h100-pcie"),
            nvl = catalog().resolve("h100-nvl"), h200 = catalog().resolve("h200");
  EXPECT_EQ(h200.dense_peak_ops_per_s, sxm.dense_peak_ops_per_s);
  for (const Gpu* board : {&pcie, &nvl}) {
    EXPECT_LT(board->dense_peak_ops_per_s.at(DType::bf16), sxm.dense_peak_ops_per_s.at(DType::bf16)) << board->id;
    EXPECT_LT(board->tdp_w, sxm.tdp_w) << board->id;
    // fp8 is twice bf16 on every Hopper board (same tensor cores, same clock); the datasheets round to 1 TFLOP/s.
    EXPECT_NEAR(board->dense_peak_ops_per_s.at(DType::fp8) / board->dense_peak_ops_per_s.at(DType::bf16), 2, 1e-3);
  }
  // GA100: the same boost clock (1410 MHz) on every A100 board, so the same peaks; TDP and bandwidth are the board's.
  const Gpu a100 = catalog().resolve("a100-80gb-sxm");
  for (const char* id : {"a100-40gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie"})
    EXPECT_EQ(catalog().resolve(id).dense_peak_ops_per_s, a100.dense_peak_ops_per_s) << id;
  EXPECT_DOUBLE_EQ(catalog().resolve("a100-40gb-pcie").tdp_w, 250);
  EXPECT_DOUBLE_EQ(catalog().resolve("a100-80gb-pcie").memory_bandwidth_bytes_per_s, 1935e9);
}

TEST(GpuCatalog, EveryIdlePowerNamesItsSource) {
  for (const Gpu& gpu : catalog().gpus()) {
    const Json file = read_json_file(gpu.source);
    const std::string source = file.at("sources").at("idle_w").get<std::string>();
    EXPECT_TRUE(source.starts_with("measured") || source.starts_with("ESTIMATE")) << gpu.id << ": " << source;
  }
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
  // bf16 cannot enter Turing's fp16 tensor cores (other exponent width): cuBLAS runs it on the CUDA cores, at the
  // T4 datasheet's fp32 rate of 8.1 TFLOP/s. (An engine that casts bf16 to fp16 gets 65: Gpu::engine_precision.)
  const ComputePeak t4 = catalog().resolve("t4").matrix_peak(DType::bf16);
  EXPECT_EQ(t4.dtype, DType::fp32);
  EXPECT_DOUBLE_EQ(t4.ops_per_s, 8.1e12);
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
