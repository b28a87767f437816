// Tests of our own kernel campaign's reader and score: the work of each case by hand, a hand-written campaign folder
// read back (skipped failures, warm-up rounds left out, averages by hand), malformed rows refused with file:line,
// and the committed H200 campaign scored with one family row per operator and as many cases as its CSVs hold.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>

#include "calibration/kernel_campaign.h"
#include "core/error.h"
#include "core/paths.h"
#include "hardware/gpu_catalog.h"
#include "llmco2/research.h"
#include "support/all_modules.h"
#include "support/error_of.h"

namespace llmco2 {
namespace {

using testing_support::error_of;

namespace fs = std::filesystem;

const Gpu& h200() {
  static const Gpu gpu = GpuCatalog::bundled().resolve("h200");
  return gpu;
}

TEST(KernelCampaign, GemmWorkByHand) {
  // fp8 gate_up at 16 rows: 2 x 16 x 28672 x 4096 operations; 1-byte inputs (16 x 4096 + 28672 x 4096), 2-byte
  // output 16 x 28672; the H200's fp8 dense peak, 1978.9 TFLOP/s (datasheet).
  const KernelWork w = campaign_gemm_work(16, 28672, 4096, "fp8", h200());
  EXPECT_DOUBLE_EQ(w.ops, 2.0 * 16 * 28672 * 4096);
  EXPECT_DOUBLE_EQ(w.mem_bytes, 16.0 * 4096 + 28672.0 * 4096 + 2.0 * 16 * 28672);
  EXPECT_DOUBLE_EQ(w.rows, 16);
  EXPECT_NEAR(w.peak_ops_per_s, 1978.9e12, 1e9);
  EXPECT_EQ(w.kind, KernelClass::matrix);
  // bf16 doubles the input bytes and runs on the bf16 peak, 989.4 TFLOP/s.
  const KernelWork b = campaign_gemm_work(1, 4096, 4096, "bf16", h200());
  EXPECT_DOUBLE_EQ(b.mem_bytes, 2.0 * (4096 + 4096.0 * 4096) + 2.0 * 4096);
  EXPECT_NEAR(b.peak_ops_per_s, 989.4e12, 1e9);
}

TEST(KernelCampaign, AttentionWorkByHand) {
  // Decode, 8 sequences of 4096 cached tokens, 32 heads over 8 KV heads of 128: per pair 4 x 128 + 5 operations;
  // Q read and O written (8 x 32 x 128 x 2 bytes each), K and V read (8 x 4096 x 8 x 128 x 2 bytes each).
  const KernelWork d = campaign_decode_attention_work(8, 4096, 2.0, h200());
  EXPECT_DOUBLE_EQ(d.ops, 8.0 * 32 * 4096 * 517);
  EXPECT_DOUBLE_EQ(d.mem_bytes, 2 * 8.0 * 32 * 128 * 2 + 2 * 8.0 * 4096 * 8 * 128 * 2);
  EXPECT_EQ(d.kind, KernelClass::attention);
  // An fp8 cache halves the K and V bytes only.
  const KernelWork f = campaign_decode_attention_work(8, 4096, 1.0, h200());
  EXPECT_DOUBLE_EQ(d.mem_bytes - f.mem_bytes, 8.0 * 4096 * 8 * 128 * 2);
  // Causal prefill of 1024 tokens: 1024 x 1025 / 2 pairs per head.
  const KernelWork p = campaign_prefill_attention_work(1024, h200());
  EXPECT_DOUBLE_EQ(p.ops, 32.0 * 1024 * 1025 / 2 * 517);
  EXPECT_DOUBLE_EQ(p.mem_bytes, (2.0 * 32 + 2.0 * 8) * 1024 * 128 * 2);
}

class CampaignFolder : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("llmco2_campaign_" + std::to_string(::getpid()));
  void SetUp() override {
    fs::create_directories(dir);
    write("env.json", R"({"device": "NVIDIA H200", "idle_power_w": 115.0})");
    write("gemm.csv",
          "dtype,name,m,n,k,time_s,error\n"
          "bf16,o,64,4096,4096,1.2e-05,\n"
          "fp8,o,16,4096,4096,,RuntimeError('no')\n");
    write("attention.csv",
          "phase,batch,context,kv_dtype,time_s,error\n"
          "decode,8,4096,bf16,4.0e-05,\n"
          "prefill,1,1024,bf16,5.4e-05,\n");
    write("closed_loop.csv",
          "clients,isl,osl,round,warmup,prefill_s,itl_s,energy_j,avg_power_w,error\n"
          "4,1024,256,0,1,0.9,0.0100,900,300,\n"
          "4,1024,256,1,0,0.1,0.0070,600,320,\n"
          "4,1024,256,2,0,0.2,0.0080,700,340,\n"
          "2,1024,256,0,1,0.5,0.0050,500,250,\n");
  }
  void TearDown() override { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; }
};

TEST_F(CampaignFolder, ReadsTheCasesThatRanAndSkipsTheFailedOnes) {
  EXPECT_EQ(campaign_gpu(dir).id, "h200");
  int skipped = 0;
  const auto samples = read_campaign_kernels(dir, h200(), &skipped);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(samples[0].op, "gemm bf16");
  EXPECT_EQ(samples[0].group, "o");
  EXPECT_EQ(samples[0].tokens, 64);
  EXPECT_DOUBLE_EQ(samples[0].measured_s, 1.2e-5);
  EXPECT_DOUBLE_EQ(samples[0].roofs.memory_bytes_per_s, 4800e9);  // the H200's datasheet bandwidth
  EXPECT_EQ(samples[1].op, "decode attention bf16");
  EXPECT_EQ(samples[2].op, "prefill attention bf16");
  EXPECT_EQ(samples[2].tokens, 1024);
}

TEST_F(CampaignFolder, ClosedLoopAveragesTheTimedRoundsOnly) {
  const auto loops = read_campaign_closed_loop(dir);
  ASSERT_EQ(loops.size(), 1u);  // 2 clients ran only its warm-up round
  EXPECT_EQ(loops[0].clients, 4);
  EXPECT_EQ(loops[0].rounds, 2);
  EXPECT_DOUBLE_EQ(loops[0].prefill_s, 0.15);   // (0.1 + 0.2) / 2
  EXPECT_DOUBLE_EQ(loops[0].itl_s, 0.0075);     // (0.007 + 0.008) / 2
  EXPECT_DOUBLE_EQ(loops[0].energy_j, 650);     // (600 + 700) / 2
  EXPECT_DOUBLE_EQ(loops[0].avg_power_w, 330);  // (320 + 340) / 2
}

TEST_F(CampaignFolder, ClosedLoopSetupsAreDtypeAndClients) {
  write("closed_loop.csv",
        "dtype,clients,isl,osl,round,warmup,prefill_s,itl_s,energy_j,avg_power_w,error\n"
        "fp8,4,1024,256,1,0,0.1,0.006,500,300,\n"
        "bf16,4,1024,256,1,0,0.2,0.007,600,320,\n"
        "fp8,4,1024,256,2,0,0.3,0.008,700,340,\n");
  const auto loops = read_campaign_closed_loop(dir);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].dtype, "bf16");
  EXPECT_EQ(loops[0].rounds, 1);
  EXPECT_EQ(loops[1].dtype, "fp8");
  EXPECT_EQ(loops[1].rounds, 2);
  EXPECT_DOUBLE_EQ(loops[1].energy_j, 600);  // (500 + 700) / 2
  write("closed_loop.csv",
        "dtype,clients,isl,osl,round,warmup,prefill_s,itl_s,energy_j,avg_power_w,error\n"
        "int4,4,1024,256,1,0,0.1,0.006,500,300,\n");
  EXPECT_NE(error_of([&] { read_campaign_closed_loop(dir); }).find("closed_loop.csv:2: dtype 'int4'"),
            std::string::npos);
}

TEST_F(CampaignFolder, MalformedRowsAreRefusedWithFileAndLine) {
  write("gemm.csv", "dtype,name,m,n,k,time_s,error\nbf16,o,64,4096,4096,1e-5,\nint3,o,64,4096,4096,1e-5,\n");
  EXPECT_NE(error_of([&] { read_campaign_kernels(dir, h200()); }).find("gemm.csv:3: dtype 'int3'"), std::string::npos);
  write("gemm.csv", "dtype,name,m,n,k,time_s,error\nbf16,o,64,4096,4096,-1,\n");
  EXPECT_NE(
      error_of([&] { read_campaign_kernels(dir, h200()); }).find("gemm.csv:2: column 'time_s' = -1 is not positive"),
      std::string::npos);
  write("closed_loop.csv",
        "clients,isl,osl,round,warmup,prefill_s,itl_s,energy_j,avg_power_w,error\n"
        "4,1024,256,0,1,0.9,0.01,900,300,\n");
  EXPECT_NE(error_of([&] { read_campaign_closed_loop(dir); }).find("no timed round"), std::string::npos);
  write("env.json", R"({"gpu": "h200"})");
  EXPECT_NE(error_of([&] { campaign_gpu(dir); }).find("env.json: expected an object with \"device\""),
            std::string::npos);
}

// Lines of `file` after the header that start with `prefix`, hold `inside` and end with an empty error cell.
int ran_rows(const fs::path& file, const std::string& prefix, const std::string& inside = "") {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  int n = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // Python's csv module ends lines with CR LF
    if (!line.empty() && line.back() == ',' && line.rfind(prefix, 0) == 0 && line.find(inside) != std::string::npos)
      ++n;
  }
  return n;
}

TEST(KernelCampaign, TheCommittedH200CampaignIsScoredCaseByCase) {
  const fs::path dir = data_dir() / "measured" / "gpu_campaign" / "h200-2026-11-27";
  research::CampaignScoreOptions o;
  o.dirs = {dir.string()};
  const api::Result result = research::score_campaign(o);
  const api::Json& r = result.json["runs"].at(0);
  std::map<std::string, int> cases;
  for (const auto& family : r["kernels"]) cases[family["op"].get<std::string>()] = family["cases"].get<int>();
  EXPECT_EQ(cases["gemm bf16"], ran_rows(dir / "gemm.csv", "bf16,"));
  EXPECT_EQ(cases["gemm fp8"], ran_rows(dir / "gemm.csv", "fp8,"));
  EXPECT_EQ(cases["decode attention bf16"], ran_rows(dir / "attention.csv", "decode,", ",bf16,"));
  EXPECT_EQ(cases["decode attention fp8 via bf16 copy"], ran_rows(dir / "attention.csv", "decode,", ",fp8,"));
  EXPECT_EQ(cases["prefill attention bf16"], ran_rows(dir / "attention.csv", "prefill,"));
  // Three concurrencies, each against the three default engine profiles, with the timed rounds of closed_loop.csv.
  ASSERT_EQ(r["closed_loop"].size(), 9u);
  for (const auto& row : r["closed_loop"]) {
    EXPECT_EQ(row["rounds"].get<int>(), 3);
    EXPECT_GT(row["predicted_energy_j"].get<double>(), 0);
  }
  EXPECT_NE(result.text.find("| gemm bf16 |"), std::string::npos);
}

TEST(KernelCampaign, AnFp8ClosedLoopIsPredictedWithFp8LinearLayers) {
  // The committed closed-loop run holds bf16 and fp8 runs; the simulator's fp8 path moves half the weight bytes, so at
  // one client (weight-bound decode) its predicted energy is below the bf16 run's.
  research::CampaignScoreOptions o;
  o.dirs = {(data_dir() / "measured" / "gpu_campaign" / "h200-2026-11-27-loops").string()};
  o.engines = {"vllm"};
  const api::Result result = research::score_campaign(o);
  const api::Json& r = result.json["runs"].at(0);
  std::map<std::string, double> energy_at_one;
  for (const auto& row : r["closed_loop"])
    if (row["clients"].get<int>() == 1) energy_at_one[row["dtype"].get<std::string>()] = row["predicted_energy_j"];
  ASSERT_EQ(energy_at_one.size(), 2u);
  EXPECT_LT(energy_at_one["fp8"], energy_at_one["bf16"]);
  EXPECT_FALSE(r.contains("kernels"));  // that run measured no kernel
}

}  // namespace
}  // namespace llmco2
