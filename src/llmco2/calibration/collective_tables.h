// calibration/collective_tables.h - the all-reduce tables of NVIDIA's AIConfigurator (nccl-tests over NVSwitch, and
// vLLM's, SGLang's and TensorRT-LLM's own all-reduces replayed in CUDA graphs, on Ampere, Hopper and Blackwell nodes;
// data/measured/aiconfigurator/allreduce.csv) as samples, and the fit of the engines' own all-reduces.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "calibration/kernel_profiles.h"
#include "calibration/kernel_tables.h"
#include "calibration/module.h"

namespace llmco2::calibration {

// The rows read, as network samples (op "all_reduce x<n>", group: the link class, "nvswitch").
struct AllReduceTableSet {
  std::vector<KernelSample> nccl;    // NCCL's ring (engine "nccl")
  std::vector<KernelSample> direct;  // the engines' own (engine "vllm", "sglang", "trtllm")
  std::vector<std::string> skipped;  // systems not read, with the reason
};

// Reads allreduce.csv (scripts/import_aiconfigurator.py: system, engine, version, kernel_source, gpus, bytes,
// latency_ms). Systems whose GPUs share no NVLink (L40S, RTX PRO 6000: PCIe) are skipped, with the reason. Throws
// Error naming file:line for a malformed row or an unknown system.
AllReduceTableSet read_allreduce_tables(const std::filesystem::path& csv);

// What `calibrate --kernels` fits the kernel-time model on: Vidur's operators and all-reduces, and the tables' NCCL
// all-reduces over NVSwitch. Vidur's DGX all-reduces time eager torch.distributed calls, one process per GPU (small
// messages a median 21-46 us, where nccl-tests, launched back to back, measures 6-22 us on the same GPUs): they are the
// "nvswitch-eager" class that engines without CUDA graphs take (engine_link_class); the tables' rows are "nvswitch".
KernelProfileSet read_kernel_profiles(const std::filesystem::path& vidur_dir, const std::filesystem::path& tables_dir);

// The fit of the engines' own all-reduces, written into KernelParams::direct.
struct DirectAllReduceFit {
  std::map<std::string, DirectAllReduceEfficiency> entries;  // "<generation>/<engine>", "<generation>", "default"
  std::vector<double> fitted_s;                              // per sample, under its "<generation>/<engine>" entry
  std::vector<double> held_out_size_s;  // that entry refitted without the sample's decade of message sizes
  std::vector<double> held_out_gpu_s;   // refitted on the generation's other GPUs; 0 where it has one GPU
};
// Per generation: each engine's kernel ("<generation>/<engine>") and the engines pooled ("<generation>", what an
// engine without its own curve uses), each timed against the generation's NCCL ring in `params` (the shorter of the
// two, as the simulator does); "default": the mean of the pooled entries.
DirectAllReduceFit fit_direct_allreduce(const std::vector<KernelSample>& samples, KernelParams& params);

// Per (GPU, engine, op): MAPE fitted, held out by size decade and by GPU (TableScore's shape columns hold the size
// decade's).
std::vector<TableScore> score_direct_allreduce(const std::vector<KernelSample>& samples, const DirectAllReduceFit& fit);

// The report section (Markdown) for docs/kernel-fit.md.
std::string allreduce_tables_markdown(const AllReduceTableSet& set, const DirectAllReduceFit& fit);

}  // namespace llmco2::calibration
