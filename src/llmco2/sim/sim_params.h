// sim/sim_params.h - the free parameters of the reference simulator, shared and per GPU / per engine, as JSON.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace llmco2 {

// Host-side costs of a serving engine.
struct EngineParams {
  double step_overhead_s = 2e-3;  // scheduler, sampling and Python work per forward pass
  double launch_overhead_s = 5e-6;  // CPU time to launch one kernel (the GPU waits when it is faster than this)
};

// Per-engine adjustments of the shared engine costs; 1 means "as shared".
struct EngineAdjust {
  double step_scale = 1;
  double launch_scale = 1;
};

// Per-GPU adjustments of the shared values; 1 means "as shared".
struct GpuAdjust {
  double compute_scale = 1;  // multiplies the reachable fraction of the compute peak
  double memory_scale = 1;   // multiplies the reachable fraction of the memory bandwidth
  double power_scale = 1;    // multiplies the power drawn above idle
};

struct SimParams {
  // Time: a kernel takes max(ops / (peak x compute efficiency), bytes / (bandwidth x memory efficiency)) + launch gap.
  double matrix_efficiency = 0.75;     // fraction of the tensor peak large GEMMs reach
  double matrix_half_rows = 48;        // GEMM rows (tokens per step) at which half of it is reached
  double attention_efficiency = 0.5;   // fraction of the tensor peak attention reaches
  double vector_efficiency = 0.5;      // fraction of the CUDA-core peak element-wise kernels reach
  double memory_efficiency = 0.85;     // fraction of the peak bandwidth large transfers reach
  double memory_half_bytes = 1.5e6;    // transfer size at which half of it is reached
  double kernel_gap_s = 3e-6;          // GPU-side gap between two kernels
  double network_efficiency = 0.7;     // fraction of the link bandwidth an all-reduce reaches
  double allreduce_hop_s = 6e-6;       // latency of one ring step of an all-reduce
  double sync_wait_fraction = 0.05;    // GPUs wait this fraction of the work between two all-reduces (skew)
  // Power per GPU: idle + (TDP - idle) x min(1, busy x active + compute x u_c + memory x u_m), where busy is the
  // share of time kernels run and u_c, u_m how much of that time they keep compute and memory at their peaks.
  double power_active = 0.25;
  double power_compute = 0.55;
  double power_memory = 0.45;
  // Repeat-to-repeat spread (relative standard deviation) of the seeded noise model.
  double energy_noise = 0.02;
  double latency_noise = 0.015;

  EngineParams default_engine;                  // a typical engine; "unknown" engines use it as is
  std::map<std::string, EngineAdjust> engines;  // by engine name; others use 1
  std::map<std::string, GpuAdjust> gpus;        // by GPU catalog id; others use 1

  EngineParams engine(const std::string& name) const;
  GpuAdjust gpu(const std::string& id) const;
};

Json sim_params_to_json(const SimParams& params);
SimParams sim_params_from_json(const Json& json, const std::string& source);

// The calibrated parameters shipped in data/sim/params.json (written by `llmco2 calibrate`);
// the built-in defaults above when that file does not exist yet.
SimParams load_sim_params(const std::filesystem::path& path);
std::filesystem::path default_sim_params_path();

}  // namespace llmco2
