// GPU catalog: every bundled file parses with a source per value and within the plausible ranges; look-up by id,
// alias, nvidia-smi name, path; a file with an implausible value is refused with one line naming file and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "core/csv.h"
#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"
#include "hardware/gpu_catalog.h"
#include "support/all_modules.h"
#include "support/error_of.h"

namespace llmco2 {
namespace {

const GpuCatalog& catalog() { return GpuCatalog::bundled(); }

Json my_gpu() { return read_json_file(std::string(LLMCO2_TESTDATA) + "/gpus/my_gpu.json"); }

// The message of the Error thrown when `json` is written to <temp>/bad/my_gpu.json and read back, or "".
std::string gpu_file_refusal(const Json& json) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "my_gpu.json") << json.dump(1);
  return testing_support::error_of([&] { read_gpu_file(dir / "my_gpu.json"); });
}

constexpr size_t kBundledGpus = 30;

TEST(GpuCatalog, BundlesTheIssuesGpus) {
  for (const char* id :
       {"t4", "l4", "a10g", "a100-40gb-sxm", "a100-80gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie", "h100-sxm",
        "h100-pcie", "h100-nvl", "h200", "b200", "l40s", "v100-sxm2", "v100-sxm2-32gb", "mi300x",
        // issue 15, part 2
        "a40", "rtx-6000-ada", "rtx-3090", "l40", "gh200-96gb", "gh200-144gb", "h200-nvl", "gb200", "mi250x", "mi325x",
        "gaudi3",
        // issue 37
        "b300", "gb300", "rtx-pro-6000-server"})
    EXPECT_EQ(catalog().resolve(id).id, id);
  EXPECT_EQ(catalog().gpus().size(), kBundledGpus);
}

TEST(GpuCatalog, EveryBundledFilePassesTheRangeChecks) {
  // GpuCatalog::load applies every check; load the folder afresh (not the cached catalog).
  const GpuCatalog fresh = GpuCatalog::load(data_dir() / "gpus");
  ASSERT_EQ(fresh.gpus().size(), kBundledGpus);
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
    const std::string message = gpu_file_refusal(gpu);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.pointer << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // one line
  }
  Json linked = my_gpu();
  linked["gpu_link"] = {{"kind", "nvlink4"}, {"bandwidth_gb_per_s", -3.0}, {"max_gpus", 8}};
  linked["sources"]["gpu_link"] = "test";
  EXPECT_NE(gpu_file_refusal(linked).find("my_gpu.json: gpu_link.bandwidth_gb_per_s = -3 is outside [1, 20000]"),
            std::string::npos)
      << gpu_file_refusal(linked);
  linked["gpu_link"]["bandwidth_gb_per_s"] = 900.0;
  linked["gpu_link"]["max_gpus"] = 1;
  EXPECT_NE(gpu_file_refusal(linked).find("my_gpu.json: gpu_link.max_gpus = 1 is outside [2, 1024]"),
            std::string::npos);
  linked["gpu_link"]["max_gpus"] = 8;
  EXPECT_EQ(gpu_file_refusal(linked), "");
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
    // fp4 tensor cores: Blackwell only (b200, gb200, b300, gb300, rtx-pro-6000-server).
    EXPECT_EQ(gpu.dense_peak_ops_per_s.contains(DType::fp4), blackwell) << gpu.id;
  }
  EXPECT_DOUBLE_EQ(catalog().resolve("b200").dense_peak_ops_per_s.at(DType::fp4), 9000e12);  // 18,000 is sparse
  // Blackwell Ultra's NVFP4 is sparse : dense = 4 : 3, not 2: HGX B300 "144 | 108 PFLOPS" per 8 GPUs, GB300
  // "20 | 15 PFLOPS"; halving the sparse figure would give 9,000 and 10,000.
  EXPECT_DOUBLE_EQ(catalog().resolve("b300").dense_peak_ops_per_s.at(DType::fp4), 13500e12);
  EXPECT_DOUBLE_EQ(catalog().resolve("gb300").dense_peak_ops_per_s.at(DType::fp4), 15000e12);
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
  // Boards that change only memory and power keep the die's peaks: H200 NVL = H100 NVL (same 1785 MHz), GH200 =
  // H100 SXM (132 SMs at 1980 MHz), MI325X = MI300X (same chiplets and clocks).
  EXPECT_EQ(catalog().resolve("h200-nvl").dense_peak_ops_per_s, nvl.dense_peak_ops_per_s);
  EXPECT_EQ(catalog().resolve("gh200-96gb").dense_peak_ops_per_s, sxm.dense_peak_ops_per_s);
  EXPECT_EQ(catalog().resolve("gh200-144gb").dense_peak_ops_per_s, sxm.dense_peak_ops_per_s);
  EXPECT_EQ(catalog().resolve("mi325x").dense_peak_ops_per_s, catalog().resolve("mi300x").dense_peak_ops_per_s);
  // GB200 runs the B200's two dies at higher clocks: every tensor peak is 10/9 of the B200's (2.5 vs 2.25 PF bf16).
  const Gpu gb200 = catalog().resolve("gb200"), b200 = catalog().resolve("b200");
  for (const DType t : {DType::tf32, DType::bf16, DType::fp16, DType::fp8, DType::int8, DType::fp4})
    EXPECT_NEAR(gb200.dense_peak_ops_per_s.at(t) / b200.dense_peak_ops_per_s.at(t), 10.0 / 9.0, 0.02) << dtype_name(t);
  // Blackwell Ultra: the GB300 is 10/9 of the B300 in every tensor type it lists (2.5 vs 2.25 PF bf16, 15 vs 13.5 PF
  // fp4), as the GB200 is of the B200. The B300 keeps the HGX B200's bf16, fp16, fp8, tf32 and fp32 figures exactly
  // (same 148 SMs at the same 1856 MHz tensor clock) and runs fp4 at 1.5x per clock (13,500 vs 9,000).
  const Gpu gb300 = catalog().resolve("gb300"), b300 = catalog().resolve("b300");
  for (const DType t : {DType::tf32, DType::bf16, DType::fp16, DType::fp8, DType::fp4})
    EXPECT_NEAR(gb300.dense_peak_ops_per_s.at(t) / b300.dense_peak_ops_per_s.at(t), 10.0 / 9.0, 1e-9) << dtype_name(t);
  for (const DType t : {DType::fp32, DType::tf32, DType::bf16, DType::fp16, DType::fp8})
    EXPECT_DOUBLE_EQ(b300.dense_peak_ops_per_s.at(t), b200.dense_peak_ops_per_s.at(t)) << dtype_name(t);
  EXPECT_DOUBLE_EQ(b300.dense_peak_ops_per_s.at(DType::fp4) / b200.dense_peak_ops_per_s.at(DType::fp4), 1.5);
  EXPECT_DOUBLE_EQ(b300.tensor_peak_clock_mhz.value(), b200.tensor_peak_clock_mhz.value());  // 1856 MHz
  EXPECT_DOUBLE_EQ(gb300.dense_peak_ops_per_s.at(DType::fp4) / gb200.dense_peak_ops_per_s.at(DType::fp4), 1.5);
}

double tflops(const Gpu& gpu, DType dtype) { return gpu.dense_peak_ops_per_s.at(dtype) / 1e12; }

// Tensor peak per vector peak: both scale with SM count and clock, so boards of one die share it unless the vendor
// cuts the tensor rate (GeForce, L40) or a sparse figure slipped in (twice the ratio).
double tensor_per_vector(const Gpu& gpu) {
  const DType t = gpu.dense_peak_ops_per_s.contains(DType::bf16) ? DType::bf16 : DType::fp16;
  return gpu.dense_peak_ops_per_s.at(t) / gpu.dense_peak_ops_per_s.at(DType::fp32);
}

TEST(GpuCatalog, BoardsNamedAfterOneDieHaveOneTensorRatePerClock) {
  // llmco2's power model scales a die's dynamic power by each board's dense peak among the boards with the same
  // architecture name (sim/simulator.cc, die_power): that needs one tensor rate per clock within a name. Datasheets
  // round and quote tensor and vector peaks at slightly different clocks (H100 NVL 13.9 vs SXM 14.8): 10%.
  std::map<std::string, std::vector<const Gpu*>> by_architecture;
  for (const Gpu& gpu : catalog().gpus()) by_architecture[gpu.architecture].push_back(&gpu);
  int compared = 0;
  for (const auto& [architecture, boards] : by_architecture)
    for (const Gpu* board : boards) {
      EXPECT_NEAR(tensor_per_vector(*board) / tensor_per_vector(*boards.front()), 1.0, 0.10)
          << board->id << " vs " << boards.front()->id << " (" << architecture << ")";
      compared += board != boards.front();
    }
  EXPECT_GE(compared, 9);
  // Boards of one die named apart, and why. Same rate per clock, named apart for their power: GB200 (1,200 W) and
  // MI325X (HBM3E power) must not become the reference of the B200 and MI300X; the RTX 6000 Ada shares the L40S's name.
  for (const auto& [a, b] :
       {std::pair{"b200", "gb200"}, std::pair{"mi300x", "mi325x"}, std::pair{"l40s", "rtx-6000-ada"},
        std::pair{"a10g", "a40"}, std::pair{"h100-sxm", "gh200-96gb"}, std::pair{"b300", "gb300"},
        std::pair{"b200", "b300"}})
    EXPECT_NEAR(tensor_per_vector(catalog().resolve(a)) / tensor_per_vector(catalog().resolve(b)), 1.0, 0.10)
        << a << " vs " << b;
  // Half the tensor rate per clock on the same die: the GeForce RTX 3090 (FP32 accumulate) and NVIDIA's L40
  // datasheet; both are named apart so that their power is not scaled by half.
  EXPECT_NEAR(tensor_per_vector(catalog().resolve("a40")) / tensor_per_vector(catalog().resolve("rtx-3090")), 2.0, 0.1);
  EXPECT_NEAR(tensor_per_vector(catalog().resolve("l40s")) / tensor_per_vector(catalog().resolve("l40")), 2.0, 0.1);
  EXPECT_NE(catalog().resolve("rtx-3090").architecture, catalog().resolve("a40").architecture);
  EXPECT_NE(catalog().resolve("l40").architecture, catalog().resolve("l40s").architecture);
  // Higher-TDP boards of a die named apart so that they do not become the lower boards' power reference: B300
  // (1,100 W) vs B200 (1,000 W; other silicon too), GB300 (1,400 W) vs B300, as GB200 vs B200.
  for (const auto& [a, b] : {std::pair{"b200", "b300"}, std::pair{"b300", "gb300"}, std::pair{"gb200", "gb300"}})
    EXPECT_NE(catalog().resolve(a).architecture, catalog().resolve(b).architecture) << a << " vs " << b;
  EXPECT_EQ(GpuCatalog::reference_board(catalog().resolve("b200")).id, "b200");
  EXPECT_EQ(GpuCatalog::reference_board(catalog().resolve("b300")).id, "b300");
}

TEST(GpuCatalog, NewBoardsMatchTheirDatasheets) {
  // Figures read off each vendor datasheet, independently of the files: memory GB, bandwidth GB/s, TDP W and one
  // dense tensor peak (sparse / 2 where the datasheet quotes sparsity).
  struct Case {
    const char* id;
    double memory_gb, bandwidth_gb_per_s, tdp_w;
    DType dtype;
    double tflops;
  };
  const Case cases[] = {
      {"a40", 48, 696, 300, DType::bf16, 149.7},            // A40: 299.4 with sparsity
      {"rtx-6000-ada", 48, 960, 300, DType::fp8, 728.5},    // "Tensor performance 1457.0" = FP8 sparse
      {"rtx-3090", 24, 936, 350, DType::fp16, 71},          // GA102 whitepaper: FP32-accumulate 71 / 142 sparse
      {"l40", 48, 864, 300, DType::bf16, 181.05},           // L40 column: 181.05 | 362.1*
      {"h200-nvl", 141, 4800, 600, DType::fp8, 1670.5},     // 3,341 with sparsity
      {"gh200-96gb", 96, 4000, 700, DType::bf16, 989.4},    // GH200: 990 | 1,979*
      {"gh200-144gb", 144, 4900, 700, DType::bf16, 989.4},  // HBM3e: 144 GB, 4.9 TB/s
      {"gb200", 186, 8000, 1200, DType::fp4, 10000},        // 20 PFLOPS FP4 with sparsity
      {"b200", 180, 7700, 1000, DType::fp32, 75},           // HGX B200: FP32 75 TFLOPS, 7.7 TB/s (62 per 8)
      {"mi250x", 64, 1600, 280, DType::bf16, 191.5},        // one GCD of the MI250X: half its 128 GB, 3.2 TB/s,
                                                            // 560 W and 383 TFLOPS FP16/BF16
      {"mi325x", 256, 6000, 1000, DType::fp8, 2614.9},      // 5,229.8 with sparsity
      {"gaudi3", 128, 3670, 900, DType::bf16, 1835},        // Gaudi 3: 1,835 BF16 matrix TFLOPS
      // issue 37: NVIDIA Blackwell Ultra datasheet, per GPU; RTX PRO 6000 Blackwell Server Edition datasheet
      {"b300", 270, 7700, 1100, DType::fp8, 4500},                 // HGX B300: FP8 9 PFLOPS sparse, 270 GB, 7.7 TB/s
      {"b300", 270, 7700, 1100, DType::fp32, 75},                  // FP32 75 TFLOPS, up to 1,100 W
      {"gb300", 279, 8000, 1400, DType::bf16, 2500},               // GB300: FP16/BF16 5 PFLOPS sparse, 279 GB, 8 TB/s
      {"gb300", 279, 8000, 1400, DType::fp32, 80},                 // FP32 80 TFLOPS, up to 1,400 W
      {"rtx-pro-6000-server", 96, 1597, 600, DType::tf32, 233.9},  // "TF32 234 TFLOPS" (dense), 1,597 GB/s, 600 W
  };
  for (const Case& c : cases) {
    const Gpu gpu = catalog().resolve(c.id);
    EXPECT_DOUBLE_EQ(gpu.memory_bytes, c.memory_gb * 1e9) << c.id;
    EXPECT_DOUBLE_EQ(gpu.memory_bandwidth_bytes_per_s, c.bandwidth_gb_per_s * 1e9) << c.id;
    EXPECT_DOUBLE_EQ(gpu.tdp_w, c.tdp_w) << c.id;
    EXPECT_NEAR(tflops(gpu, c.dtype), c.tflops, 1e-9) << c.id << " " << dtype_name(c.dtype);
  }
  // No fp8 before Hopper/Ada/CDNA 3; no TF32 on CDNA 2; no published INT8 matrix rate on Gaudi 3.
  for (const char* id : {"a40", "rtx-3090", "mi250x"})
    EXPECT_FALSE(catalog().resolve(id).dense_peak_ops_per_s.contains(DType::fp8)) << id;
  EXPECT_FALSE(catalog().resolve("mi250x").dense_peak_ops_per_s.contains(DType::tf32));
  EXPECT_FALSE(catalog().resolve("gaudi3").dense_peak_ops_per_s.contains(DType::int8));
  // Blackwell Ultra cut INT8 to 307 / 330 TOPS sparse (153.5 / 165 dense), below its bf16 rate: null, not the B200's.
  for (const char* id : {"b300", "gb300"}) {
    EXPECT_FALSE(catalog().resolve(id).dense_peak_ops_per_s.contains(DType::int8)) << id;
    EXPECT_FALSE(catalog().resolve(id).dense_peak_ops_per_s.contains(DType::int4)) << id;
  }
  // RTX PRO 6000 Server Edition: GB202 rates at its 2430 MHz boost, 188 SMs; bf16 = 2 x tf32 = 4 x fp32.
  const Gpu rtx_pro = catalog().resolve("rtx-pro-6000-server");
  EXPECT_NEAR(tflops(rtx_pro, DType::bf16), 188 * 1024 * 2.430e9 / 1e12, 0.05);
  EXPECT_NEAR(tflops(rtx_pro, DType::fp4), 188 * 4096 * 2.430e9 / 1e12, 0.05);
  EXPECT_NEAR(tflops(rtx_pro, DType::bf16) / tflops(rtx_pro, DType::tf32), 2.0, 1e-3);
  EXPECT_NEAR(tflops(rtx_pro, DType::int8), tflops(rtx_pro, DType::fp8), 1e-9);
  // Links: a 2-card bridge (A40, RTX 3090), a 4-card bridge (H200 NVL), a 72-GPU NVLink domain (GB200).
  EXPECT_DOUBLE_EQ(catalog().resolve("a40").network_link(2).bandwidth_bytes_per_s, 56.25e9);
  EXPECT_EQ(catalog().resolve("a40").network_link(4).kind, "pcie-gen4-x16");
  EXPECT_EQ(catalog().resolve("h200-nvl").network_link(4).kind, "nvlink4-bridge");
  EXPECT_EQ(catalog().resolve("h200-nvl").network_link(8).kind, "pcie-gen5-x16");
  EXPECT_EQ(catalog().resolve("gb200").network_link(72).kind, "nvlink5");
  EXPECT_FALSE(catalog().resolve("rtx-6000-ada").gpu_link.has_value());  // no NVLink on the RTX 6000 Ada
  // An 8-GPU NVLink domain (HGX B300) and PCIe Gen6 beyond it; a 72-GPU domain (GB300); no NVLink (RTX PRO 6000 SE).
  EXPECT_EQ(catalog().resolve("b300").network_link(8).kind, "nvlink5");
  EXPECT_EQ(catalog().resolve("b300").network_link(16).kind, "pcie-gen6-x16");
  EXPECT_DOUBLE_EQ(catalog().resolve("b300").network_link(16).bandwidth_bytes_per_s, 128e9);  // 256 GB/s both ways
  EXPECT_EQ(catalog().resolve("gb300").network_link(72).kind, "nvlink5");
  EXPECT_FALSE(catalog().resolve("rtx-pro-6000-server").gpu_link.has_value());
  EXPECT_EQ(catalog().resolve("rtx-pro-6000-server").network_link(2).kind, "pcie-gen5-x16");
}

TEST(GpuCatalog, EveryBoardIsPhysicallyPlausible) {
  for (const Gpu& gpu : catalog().gpus()) {
    SCOPED_TRACE(gpu.id);
    // A powered board idles at a few percent to a third of its limit (A10G 3%, Gaudi 3 25%); an idle figure in the
    // wrong unit or a node's TDP lands outside.
    EXPECT_GT(gpu.idle_w / gpu.tdp_w, 0.03);
    EXPECT_LT(gpu.idle_w / gpu.tdp_w, 0.30);
    // Reading the whole memory once takes 10-100 ms on every board (B200 22 ms, L4 80 ms): catches GB vs GiB
    // slips by a factor 1000, per-node capacities and a bandwidth in the wrong unit.
    const double read_all_s = gpu.memory_bytes / gpu.memory_bandwidth_bytes_per_s;
    EXPECT_GT(read_all_s, 0.010);
    EXPECT_LT(read_all_s, 0.100);
    // bf16 at most fp8 where both exist, every board has a 16-bit tensor peak, and the vector peak is the smallest.
    const auto& p = gpu.dense_peak_ops_per_s;
    if (p.contains(DType::bf16) && p.contains(DType::fp8)) {
      EXPECT_LE(p.at(DType::bf16), p.at(DType::fp8));
    }
    EXPECT_TRUE(p.contains(DType::fp16));
    for (const auto& [dtype, ops] : p) EXPECT_GE(ops, p.at(DType::fp32)) << dtype_name(dtype);
    // Dense fp16 tensor throughput per watt of TDP: 0.20 (RTX 3090) to 2.25 (B200) TFLOP/s per W; a sparse figure on
    // a recent board or a per-node peak would stand out.
    const double per_watt = tflops(gpu, DType::fp16) / gpu.tdp_w;
    EXPECT_GT(per_watt, 0.15);
    EXPECT_LT(per_watt, 3.0);
  }
}

TEST(GpuCatalog, EveryNameNamesOneGpu) {
  // resolve() takes the first match, so an id, alias or nvidia-smi name shared by two files would silently pick one.
  std::map<std::string, std::string> owner;
  for (const Gpu& gpu : catalog().gpus()) {
    std::set<std::string> names{gpu.id};
    for (const auto& n : gpu.aliases) names.insert(normalize_name(n));
    for (const auto& n : gpu.nvidia_smi_names) names.insert(normalize_name(n));
    for (const auto& n : names) {
      const auto [it, inserted] = owner.emplace(n, gpu.id);
      EXPECT_TRUE(inserted) << "'" << n << "' names both " << it->second << " and " << gpu.id;
    }
  }
}

TEST(GpuCatalog, EveryImportedMeasurementNamesABundledGpu) {
  // The importers write catalog ids in the gpu column of data/measured/*.csv; calibration skips rows whose GPU does
  // not resolve, so every id written there must be bundled.
  std::set<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / "measured")) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".csv" || file.ends_with(".rejects.csv") || file == "model_map.csv") continue;
    const CsvTable table = read_csv_file(entry.path());
    const size_t column = table.column("gpu");
    for (const auto& record : table.records) ids.insert(record.cells.at(column));
  }
  ASSERT_TRUE(ids.contains("a40") && ids.contains("rtx-6000-ada") && ids.contains("rtx-3090")) << ids.size();
  for (const auto& id : ids) EXPECT_EQ(catalog().resolve(id).id, id);
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
  const std::pair<const char*, const char*> printed[] = {
      {"NVIDIA A40", "a40"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
      {"NVIDIA GeForce RTX 3090", "rtx-3090"},
      {"NVIDIA L40", "l40"},
      {"NVIDIA H200 NVL", "h200-nvl"},
      {"NVIDIA GH200 480GB", "gh200-96gb"},
      {"NVIDIA GH200 144G HBM3e", "gh200-144gb"},
      {"NVIDIA GB200", "gb200"},
      {"AMD Instinct MI325X", "mi325x"},
      {"HL-325L", "gaudi3"},
      {"NVIDIA B300 SXM6 AC", "b300"},
      {"NVIDIA GB300", "gb300"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server"},
  };
  for (const auto& [name, id] : printed) EXPECT_EQ(catalog().resolve(name).id, id) << name;
  // ROCm names one MI250X die (and the MI250's too): not matched, so a die is never counted as a module.
  EXPECT_THROW(catalog().resolve("AMD Instinct MI250X / MI250"), Error);
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
