// sim/kernel_time.h - the time of one kernel on one GPU from its work, the GPU's datasheet peaks and the
// efficiencies published kernels reach. The one place the simulator turns operations and bytes into seconds.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/ranges.h"
#include "sim/module.h"

namespace llmco2::hardware {
struct Gpu;
}  // namespace llmco2::hardware

namespace llmco2::sim {

// What the kernels of one architecture generation reach (shared by every GPU of that generation, so that two boards
// with the same die differ only by their datasheet figures). Ranges: docs/simulator.md and kKernelEfficiencyRanges.
struct KernelEfficiency {
  double gemm_efficiency = 0.75;       // fraction of the dense tensor peak large GEMMs reach
  double gemm_tile_rows = 64;          // GEMMs with fewer rows (tokens in the step) cost as many: the smallest row tile
  double attention_efficiency = 0.55;  // fraction of the tensor peak fused attention reaches at long spans
  // Keys per query row at which fused attention reaches half of attention_efficiency: each 128-row query tile has
  // fixed work (load Q, rescale and normalise, write O, mask the causal diagonal) worth this many keys, so a prefill of
  // a short prompt runs far below the long-prompt efficiency. 0: no ramp.
  double attention_half_keys = 0;
  double attention_floor_s = 3e-6;  // time a fused attention call takes beyond its work (KV write, metadata, combine)
  // The same three for the decode of multi-head latent attention (DeepSeek's MLA kernels: FlashMLA, TRT-LLM's and
  // FlashInfer's), which packs a sequence's heads as the rows of 64-row MMA tiles over one 576-wide latent cache:
  // other kernels than FlashAttention's, fitted on their own tables. (MLA prefill runs expanded, through FMHA.)
  double mla_efficiency = 0.55;
  double mla_half_keys = 0;
  double mla_floor_s = 1e-5;
  // Seconds per cached key that one sequence's decode takes at least: a kernel that walks the whole context on one SM
  // instead of splitting it over many (split-KV) pays it per key (TensorRT-LLM 1.0's MLA on A100 and L40S: 80-120 ns
  // at batch 1 whatever the heads); split-KV kernels (FlashMLA, trtllm-gen) fit ~0.5-0.6 ns, a batch-1 shortfall.
  double mla_key_s = 0;
  double memory_efficiency = 0.85;  // fraction of the peak DRAM bandwidth a large streaming kernel reaches
  double memory_half_bytes = 1e6;   // bytes a kernel moves at which half of that is reached (Little's law)
  double vector_efficiency = 0.3;   // fraction of the fp32 CUDA-core peak element-wise math reaches
  double kernel_floor_s = 3e-6;     // time every kernel takes beyond its work: launch on the GPU, ramp and tail
  // Share of the 16-bit kernels' efficiencies (both roofs) GEMMs of 1-byte inputs with per-tensor scales reach on
  // their own (fp8) peak, and GEMMs of 4-bit inputs (NVFP4, MXFP4) on the fp4 peak.
  double fp8_efficiency = 1.0;
  double fp4_efficiency = 1.0;
  double block_scaled_efficiency =
      1.0;  // share of the 16-bit kernels' efficiency (both roofs) block-scaled GEMMs reach
};

// The collectives of tensor parallelism over one kind of link (NCCL's all-reduce).
struct NetworkEfficiency {
  double call_latency_s = 0;     // fixed time of one all-reduce call whatever the GPU count (launch, rendezvous)
  double step_latency_s = 8e-6;  // latency of one ring step of an all-reduce (a hop and its synchronisation)
  double bus_efficiency = 0.75;  // fraction of the per-direction link bandwidth large all-reduces reach
};

// An engine's own all-reduce over NVLink (vLLM's and SGLang's custom all-reduce, TensorRT-LLM's plugin): every rank
// reads its peers' buffers directly, in one or two stages whatever the GPU count; above the engine's size limit it
// falls back to NCCL, so it never takes longer than NCCL's ring.
struct DirectAllReduceEfficiency {
  double direct_latency_s = 5e-6;      // time of one call beyond its bytes (barrier flags, one or two stages)
  double direct_bus_efficiency = 0.5;  // fraction of the per-direction link bandwidth its bytes move at
};

enum class KernelClass { matrix, attention, vector, network };
enum class NarrowGemm { none, fp8, fp4 };

// One kernel launch on one GPU.
struct KernelWork {
  KernelClass kind = KernelClass::matrix;
  double ops = 0;                    // operations (2 per multiply-add)
  double mem_bytes = 0;              // DRAM traffic
  double net_bytes = 0;              // bytes this GPU sends (ring all-reduce: 2 (n-1)/n of the tensor)
  double rows = 1;                   // GEMM rows: tokens processed together (attention: query tokens)
  double peak_ops_per_s = 0;         // the roof for its class and dtype (tensor peak or fp32 vector peak)
  double dequant_ops = 0;            // of `ops`: dequantising weight-only quantised weights, on the CUDA cores
  double vector_peak_ops_per_s = 0;  // the fp32 CUDA-core peak (for dequant_ops)
  // Matrix math on the CUDA cores (the GPU has no tensor units for the type: fp32, or bf16 on Volta/Turing under
  // PyTorch): the share of the fp32 peak its GEMMs reach (kSimtGemmEfficiency or kEmulatedGemmEfficiency); 0 on
  // tensor units, whose efficiency is the fitted gemm_efficiency.
  double simt_efficiency = 0;
  // Routed experts: the distinct experts one launch's layer runs (an engine looping over them on the host launches
  // each one's kernels itself; EngineProfile::expert_loop_launches); 0 for other kernels.
  double loop_experts = 0;
  // A GEMM of 1-byte inputs scaled per block (Precision::block_scaled), which runs at
  // KernelEfficiency::block_scaled_efficiency of the 16-bit kernels' efficiencies. 1-byte GEMMs with per-tensor or
  // per-channel scales run at those efficiencies against their own (fp8/int8) peak.
  bool block_scaled = false;
  // The narrow input type of a GEMM with per-tensor scales on tensor units (KernelEfficiency::fp8_efficiency,
  // fp4_efficiency); none for 16-bit, block-scaled (block_scaled), int8 and weight-only GEMMs.
  NarrowGemm narrow = NarrowGemm::none;
  // Fused attention (FlashAttention, FlashInfer, MLA kernels): the mean number of keys a query row attends to, which
  // sets how far the kernel is up its efficiency ramp (attention_half_keys); 0 for every other kernel, which also
  // keeps attention_floor_s to fused attention.
  double keys_per_query = 0;
  bool latent = false;  // decode of multi-head latent attention: the mla_* fields instead of the attention_* ones
};

// The share of the 16-bit kernels' efficiencies a matrix kernel of this input type reaches (both roofs): 1 for 16-bit
// and other kernels. Inline, as the two below: the simulator's step loop calls them for every kernel.
inline double precision_share(const KernelWork& w, const KernelEfficiency& e) {
  if (w.block_scaled) return e.block_scaled_efficiency;
  if (w.narrow == NarrowGemm::none) return 1.0;
  return w.narrow == NarrowGemm::fp8 ? e.fp8_efficiency : e.fp4_efficiency;
}
// The efficiency of fused attention at `keys_per_query` keys per query row: up its ramp (attention_half_keys) toward
// attention_efficiency (MLA: mla_half_keys, mla_efficiency); unfused attention (keys_per_query 0) at
// attention_efficiency.
inline double attention_efficiency_at(double keys_per_query, bool latent, const KernelEfficiency& e) {
  const double top = latent ? e.mla_efficiency : e.attention_efficiency;
  const double half_keys = latent ? e.mla_half_keys : e.attention_half_keys;
  if (keys_per_query <= 0 || half_keys <= 0) return top;
  return top * keys_per_query / (keys_per_query + half_keys);
}
// The share of its tensor peak a matrix or attention kernel on tensor units reaches: gemm_efficiency x
// precision_share, or attention_efficiency_at its span.
inline double tensor_efficiency(const KernelWork& w, const KernelEfficiency& e) {
  return w.kind == KernelClass::attention ? attention_efficiency_at(w.keys_per_query, w.latent, e)
                                          : e.gemm_efficiency * precision_share(w, e);
}

// Weight-only quantised GEMMs (Marlin-style w4a16/w8a16 kernels) tile rows by 16 (Frantar et al. 2024,
// arXiv:2408.11743): a batch-1 decode pads to 16 rows, not to the dense kernels' tile.
inline constexpr double kWeightOnlyTileRows = 16;

// GEMMs on the CUDA cores, measured with cuBLAS on a V100 at m = 2048 (lablup/mlxcel issue 1654, "Supporting
// measurement from Volta"): fp32 reaches 14.0 of the 15.7 TFLOP/s fp32 peak; bf16, which Volta's tensor cores cannot
// take, is converted to fp32 in the kernel and reaches 9.6. Their thread blocks tile 128 rows (cuBLAS's Volta SIMT
// kernels volta_sgemm_128x64/128x128, CUTLASS's default SIMT SGEMM tile 128x128x8): fewer rows cost the tile.
inline constexpr double kSimtGemmEfficiency = 14.0 / 15.7;
inline constexpr double kEmulatedGemmEfficiency = 9.6 / 15.7;
inline constexpr double kSimtTileRows = 128;
// The row tile of a GEMM on the CUDA cores: converted (bf16 in fp32 math) kernels tile 128 rows, which Wilkins et
// al.'s V100 rows show at 8-64 tokens per step (a batch-1 decode with a KV cache, one row, is an extrapolation of it);
// native fp32 SGEMM has small-row kernels, so it takes the tensor-core curve's fitted tile.
inline double simt_tile_rows(double simt_efficiency, double fitted_tile_rows) {
  return simt_efficiency == kEmulatedGemmEfficiency ? kSimtTileRows : fitted_tile_rows;
}

// x / d for d > 0, without dividing where the quotient is known exactly (d = 1, or x = 0): the same double, sooner
// (divisions bound the cost of labelling a configuration).
inline double quotient(double x, double d) { return d == 1.0 || x == 0.0 ? x : x / d; }

// Datasheet roofs of the GPU (and link) the kernel runs on.
struct DeviceRoofs {
  double memory_bytes_per_s = 0;
  double link_bytes_per_s = 0;  // per direction; 0 on one GPU
  int tp_gpus = 1;
};

// Wall time of a step's kernels, `gpu_s` of GPU work launched in `launch_s` of host time. The host launches while the
// GPU runs what is queued, so the slower of the two sets the pace; on the `host_wait_share` of the layers in which
// the host waits for the GPU to drain its queue before launching on, the two add up (spread evenly over the layers).
inline double kernels_wall_s(double gpu_s, double launch_s, double host_wait_share) {
  const double overlapped_s = gpu_s > launch_s ? gpu_s : launch_s;
  if (host_wait_share <= 0.0) return overlapped_s;
  return (1.0 - host_wait_share) * overlapped_s + host_wait_share * (gpu_s + launch_s);
}

// Seconds of one launch:
//   compute/memory kernels: floor + max(ops / (peak x e_c), bytes / (BW x e_m)),
//     the operations of GEMMs padded to max(rows, gemm_tile_rows) rows, e_c = gemm_efficiency x precision_share
//     (fused attention: attention_efficiency x k / (k + attention_half_keys) at k keys per query row, with
//     attention_floor_s as its floor; MLA decode: the mla_* fields, and at least k x mla_key_s), dequantisation on the
//     CUDA cores at gemm_efficiency of the fp32 peak,
//           vector_efficiency for element-wise kernels,
//     e_m = memory_efficiency x precision_share x bytes / (bytes + memory_half_bytes);
//   all-reduce: allreduce_s with NCCL's ring.
double kernel_time_s(const KernelWork& work, const DeviceRoofs& roofs, const KernelEfficiency& efficiency,
                     const NetworkEfficiency& network);
// An all-reduce over n GPUs. NCCL's ring: call_latency_s + 2 (n - 1) x step_latency_s + net_bytes / (link x
// bus_efficiency). An engine's own all-reduce over NVLink (`direct` not null): direct_latency_s + net_bytes / (link x
// direct_bus_efficiency), or the ring's time where that is shorter (the engine hands large messages to NCCL).
double allreduce_s(const KernelWork& work, const DeviceRoofs& roofs, const NetworkEfficiency& network,
                   const DirectAllReduceEfficiency* direct);

// The time of the same work at the datasheet roofs (no efficiency, no floor): the Roofline lower bound.
double roofline_time_s(const KernelWork& work, const DeviceRoofs& roofs);

// The architecture generation a GPU belongs to, from its catalog "architecture" ("Hopper (GH100)" -> "hopper").
std::string gpu_generation(const Gpu& gpu);

// The kind of link `gpus` GPUs of this type all-reduce over: "nvswitch" (a GPU link joining >= 4 GPUs, and no more
// GPUs than it joins), "nvlink-pair" (a bridge joining 2 GPUs, used by exactly 2), else "pcie".
std::string link_class(const Gpu& gpu, int gpus);

// The link class whose NCCL entry an engine's all-reduces take: over NVSwitch, an engine that launches its kernels
// eagerly from one process per GPU (no CUDA graphs) takes "nvswitch-eager": each all-reduce waits on the GPUs for the
// last rank's host to launch it, as Vidur's profiles of eager torch.distributed calls on DGX A100 and H100 measure
// (a median 21-46 us for messages up to 64 KiB where nccl-tests, launched back to back, measures 6-22 us on the same
// GPUs).
inline std::string engine_link_class(const std::string& link_class, bool cuda_graphs) {
  return !cuda_graphs && link_class == "nvswitch" ? "nvswitch-eager" : link_class;
}

// The fitted kernel parameters: one KernelEfficiency per architecture generation and one NetworkEfficiency per link
// class, each with a "default" entry (the mean of the fitted ones) for generations or classes without a profile.
// Fitted on Vidur's operator profiles by `llmco2 calibrate --kernels` (docs/kernel-fit.md).
struct KernelParams {
  std::map<std::string, KernelEfficiency> generations;  // "ampere", "hopper", "default"
  // A GPU whose measured kernels the generation's curve does not describe (another die than its generation's
  // data-center boards, as the GDDR7 RTX PRO 6000 among HBM Blackwells): its own entry, by catalog id. Optional.
  std::map<std::string, KernelEfficiency> gpus;
  // "nvswitch", "nvswitch-eager", "nvlink-pair", "pcie" (pooled over generations), "<generation>/<class>" where the
  // profiles of one generation differ ("hopper/nvswitch"), and "default".
  std::map<std::string, NetworkEfficiency> networks;
  // The engines' own all-reduces over NVLink: "<generation>/<kernel>" (kernel: vllm, sglang, trtllm), "<generation>"
  // (the engines pooled) and "default".
  std::map<std::string, DirectAllReduceEfficiency> direct;

  // The entry for `name`, else "default"; throws Error when neither exists.
  const KernelEfficiency& generation(const std::string& name) const;
  // What a GPU runs with: its own entry (gpus), else its generation's.
  const KernelEfficiency& efficiency(const std::string& generation_name, const std::string& gpu_id) const;
  const NetworkEfficiency& network(const std::string& link_class) const;
  // "<generation>/<link_class>", else `link_class`, else "default".
  const NetworkEfficiency& network(const std::string& generation, const std::string& link_class) const;
  // "<generation>/<kernel>", else "<generation>", else "default" (an empty kernel: the generation's pooled entry).
  const DirectAllReduceEfficiency& direct_allreduce(const std::string& generation, const std::string& kernel) const;
};

// Every parameter of KernelEfficiency and NetworkEfficiency with its admissible range and physical source: the one
// table the loader checks and the fit keeps its parameters inside.
const std::vector<ParamRange>& kernel_param_ranges();
// The range of `name`; throws Error for an unknown name.
const ParamRange& kernel_param_range(const std::string& name);

// The fields of the two structs by JSON key, so reading, writing and fitting share one list.
std::vector<std::pair<const char*, double KernelEfficiency::*>> kernel_efficiency_fields();
// The fields named in `names`, in kernel_efficiency_fields' order; throws Error naming one that is not a field.
std::vector<std::pair<const char*, double KernelEfficiency::*>> kernel_efficiency_fields(
    const std::vector<std::string>& names);
std::vector<std::pair<const char*, double NetworkEfficiency::*>> network_efficiency_fields();
std::vector<std::pair<const char*, double DirectAllReduceEfficiency::*>> direct_allreduce_fields();

Json kernel_params_to_json(const KernelParams& params);
// Reads and range-checks every value; throws Error "<source>: generations.hopper.gemm_efficiency = 1.2 is outside
// [0.4, 0.85]" (or naming a missing, non-numeric or non-finite value, or a missing "default" entry).
KernelParams kernel_params_from_json(const Json& json, const std::string& source);
// Reads a kernels.json file; a missing file is an error.
KernelParams load_kernel_params(const std::filesystem::path& path);
// data_dir()/sim/kernels.json.
std::filesystem::path default_kernel_params_path();

}  // namespace llmco2::sim
