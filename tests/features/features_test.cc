// Roofline features on a GPU and the memory-fit check.
#include <gtest/gtest.h>

#include "core/error.h"
#include "features/features.h"
#include "features/memory_fit.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(Features, PrefillLinearIsComputeBoundDecodeIsMemoryBound) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request r;
  const KernelGraph g = build_kernel_graph(m, r);
  const GraphFeatures f = compute_features(g, gpu, r);
  ASSERT_EQ(f.nodes.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kernel != "q_proj") continue;
    EXPECT_EQ(f.nodes[i].prefill.bound, Bound::compute);
    EXPECT_DOUBLE_EQ(f.nodes[i].prefill.perf_ops_per_s, 989.4e12);
    EXPECT_EQ(f.nodes[i].decode.bound, Bound::memory);
    const auto& c = g.nodes[i].decode;  // P = BW x ops / bytes
    EXPECT_DOUBLE_EQ(f.nodes[i].decode.perf_ops_per_s, 3350e9 * c.ops / c.mem_bytes());
  }
}

TEST(Features, TinyAllReduceIsNetworkBound) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("l4");  // PCIe only
  Request r;
  r.gpus = 2;
  r.prompt_tokens = 16;
  const KernelGraph g = build_kernel_graph(m, r);
  const GraphFeatures f = compute_features(g, gpu, r);
  ASSERT_TRUE(f.network);
  EXPECT_EQ(f.network->kind, "pcie-gen4-x16");
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].type == KernelType::allreduce) {
      EXPECT_EQ(f.nodes[i].decode.bound, Bound::network);
    }
}

// A bf16 request that no engine cast (PyTorch eager keeps bf16) runs its GEMMs on a T4's CUDA cores.
TEST(Features, T4RunsUncastBf16OnTheCudaCoresAndSaysSo) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.2-1b");
  const Gpu gpu = GpuCatalog::bundled().resolve("t4");
  Request r;
  ASSERT_EQ(r.precision.compute_dtype(), DType::bf16);
  const GraphFeatures f = compute_features(build_kernel_graph(m, r), gpu, r);
  EXPECT_EQ(f.matrix_peak.dtype, DType::fp32);
  ASSERT_FALSE(f.notes.empty());
  EXPECT_NE(f.notes[0].find("t4 has no bf16"), std::string::npos);
}

TEST(MemoryFit, SeventyBillionInBf16NeedsTwoH100s) {
  const ModelSpec m = ModelCatalog::bundled().resolve("llama-3.1-70b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request r;
  const MemoryFit fit = memory_fit(m, r, gpu);
  EXPECT_DOUBLE_EQ(fit.weight_bytes_per_gpu, m.total_params() * 2);
  // KV cache: 2 (K, V) x 80 layers x 8 heads x 128 x 2 bytes x (1024 + 128) tokens
  EXPECT_DOUBLE_EQ(fit.kv_cache_bytes_per_gpu, 2.0 * 80 * 8 * 128 * 2 * 1152);
  try {
    check_memory_fit(m, r, gpu);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs --gpus 2 or more"), std::string::npos) << e.what();
  }
  r.gpus = 2;
  EXPECT_NO_THROW(check_memory_fit(m, r, gpu));
}

TEST(MemoryFit, SlidingWindowCapsTheCache) {
  const ModelSpec m = ModelCatalog::bundled().resolve("mistral-7b-v0.1");  // window 4096 on every layer
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request r;
  r.prompt_tokens = 20000;
  r.gen_tokens = 100;
  EXPECT_DOUBLE_EQ(memory_fit(m, r, gpu).kv_cache_bytes_per_gpu, 2.0 * 32 * 8 * 128 * 2 * 4096);
}

}  // namespace
}  // namespace llmco2
