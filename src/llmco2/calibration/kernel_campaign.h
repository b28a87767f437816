// calibration/kernel_campaign.h - a kernel campaign of our own (scripts/gpu_campaign/kernel_campaign.py: GEMM and
// attention microbenchmarks and a closed-loop run on one GPU, data/measured/gpu_campaign/) read as kernel samples,
// each with the work the simulator gives that kernel, so it is scored by the same kernel_time_s as every prediction.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "calibration/kernel_profiles.h"
#include "calibration/module.h"
#include "graph/request.h"
#include "hardware/gpu.h"

namespace llmco2::calibration {

// A GEMM of m rows, inner k and n columns, as our campaign and NVIDIA's AIConfigurator tables time it: `dtype` "bf16"
// (2-byte inputs and output), "fp8" (1-byte inputs scaled per tensor, on the GPU's fp8 tensor peak), "fp8_block"
// (1-byte inputs with one fp32 scale per 1 x 128 activation block and per 128 x 128 weight block, a block-scaled GEMM:
// KernelWork::block_scaled) or "nvfp4" (4-bit inputs with one 1-byte scale per 16 elements, on the fp4 tensor peak);
// output 2 bytes. 2 m n k operations; bytes = (m k + n k) x input bytes + scales + m n x 2, each operand read and
// the output written once. Throws Error for another dtype.
KernelWork campaign_gemm_work(double m, double n, double k, const std::string& dtype, const Gpu& gpu);

// The attention work below is the graph's own (graph::fused_attention_cost), as a prediction runs it.
// Decode attention of `batch` sequences with `context` cached tokens each, `heads` query heads over `kv_heads` KV
// heads of `head_dim`: per query-key pair 4 head_dim + 5 operations; reads Q and K, V once (kv_bytes per element)
// and writes O (2 bytes per element); the bf16 tensor peak; not padded to a row tile (kernel_time_s); `context` keys
// per query row (KernelWork::keys_per_query).
KernelWork campaign_decode_attention_work(double batch, double context, double kv_bytes, const Gpu& gpu, int heads = 32,
                                          int kv_heads = 8, int head_dim = 128);
// Causal prefill attention of `batch` sequences of `tokens` each: tokens (tokens + 1) / 2 query-key pairs per head
// and sequence; reads Q and K, V once (kv_bytes per element), writes O.
KernelWork campaign_prefill_attention_work(double tokens, const Gpu& gpu, int heads = 32, int kv_heads = 8,
                                           int head_dim = 128, double batch = 1, double kv_bytes = 2);

// DeepSeek-V3's multi-head latent attention (latent 512 + rope 64, nope 128, v 128; the geometry AIConfigurator's MLA
// tables time) with `heads` query heads, as the graph runs it (graph::mla_attention_cost): prefill of `batch` prompts
// of `tokens` in the expanded form; decode, absorbed, of `batch` sequences whose query is token `tokens`, over a latent
// cache of kv_bytes per element.
KernelWork mla_attention_work(graph::Phase phase, double batch, long tokens, int heads, double kv_bytes,
                              const Gpu& gpu);

// The GPU a campaign ran on: env.json's "device" (the name nvidia-smi prints) resolved in the bundled catalog.
Gpu campaign_gpu(const std::filesystem::path& dir);

// gemm.csv and attention.csv of a campaign folder as samples (op: "gemm bf16", "gemm fp8", "decode attention bf16",
// "decode attention fp8 via bf16 copy", "prefill attention bf16"; group: the case's name or shape). Rows with an
// error are skipped and counted in `skipped`. Throws Error naming file:line for a malformed row.
std::vector<KernelSample> read_campaign_kernels(const std::filesystem::path& dir, const Gpu& gpu,
                                                int* skipped = nullptr);

// One closed-loop concurrency of closed_loop.csv, averaged over its timed (non-warm-up) rounds.
struct CampaignClosedLoop {
  std::string dtype = "bf16";  // the linear layers' type: bf16, or fp8 (per-tensor, activations quantised on the fly)
  int clients = 0;
  long isl = 0, osl = 0;
  int rounds = 0;
  double prefill_s = 0;  // every client's prompt prefilled (the last client's time to first token)
  double itl_s = 0;      // decode seconds / (osl - 1)
  double energy_j = 0;   // GPU board energy of one round (prefill and decode), NVML's counter
  double avg_power_w = 0;
};
// In (dtype, clients) order; a file without a dtype column ran bf16. Throws Error naming file:line for a malformed
// row, or when no round was timed.
std::vector<CampaignClosedLoop> read_campaign_closed_loop(const std::filesystem::path& dir);

}  // namespace llmco2::calibration
