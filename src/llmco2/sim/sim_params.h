// sim/sim_params.h - every parameter of the reference simulator, each with a physical meaning and an admissible
// range: kernel efficiencies per GPU generation (data/sim/kernels.json, fitted to real kernel profiles), serving engine
// profiles (data/engines/engines.json) and the request-level values `llmco2 calibrate` fits (data/sim/params.json).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/ranges.h"
#include "engine/engine_profile.h"
#include "sim/kernel_time.h"
#include "sim/module.h"

namespace llmco2::sim {

// Power of one GPU over a step: idle + (TDP - idle) x min(1, active x busy + wait x (1 - busy) + compute x u_c +
// simt x u_s + memory x u_m), where busy is the share of the step kernels run, u_c the share of the tensor peak the
// step's operations use, u_s the share of the fp32 CUDA-core peak its GEMMs without tensor units use and u_m the
// share of the DRAM bandwidth its bytes use. Never above the TDP (or a power cap), never
// below idle.
struct PowerParams {
  double active = 0.15;   // drawn whenever kernels run: clocks up, instruction issue, on-chip traffic
  double compute = 0.95;  // per unit of tensor-peak utilisation (GEMMs at ~0.75 of peak run at the power limit)
  double memory = 0.5;    // per unit of DRAM-bandwidth utilisation (HBM streaming at ~0.9 draws ~half to 3/4 of TDP)
  double wait = 0.1;      // while a running step waits on the engine's host work: P0 clocks, small bookkeeping kernels
  double simt = 0.95;     // per unit of fp32 CUDA-core peak used by GEMMs without tensor units (bf16 on Volta)
};

// A site profile's corrections for one GPU type (sim/site_profile.h): multipliers on the efficiencies its matrix
// kernels (GEMM, attention, MLA) and its memory-bound kernels reach, and on its dynamic power. 1: the global fit.
struct GpuSiteScales {
  double compute = 1, memory = 1, power = 1;
  bool operator==(const GpuSiteScales&) const = default;
};

struct SimParams {
  KernelParams kernels;  // per generation and link class
  EngineCatalog engines;
  double sync_wait_fraction = 0.03;      // tensor parallelism: GPUs wait this share of the work for the slowest one
  double block_scaled_efficiency = 0.7;  // block-scaled fp8 GEMMs: share of the 16-bit kernels' efficiencies
  PowerParams power;
  double energy_noise = 0.02;  // repeat-to-repeat relative spread of the noise model
  double latency_noise = 0.015;
  // The site profile's corrections by GPU catalog id (sim/site_profile.h; its engines' host costs are scaled in
  // `engines` itself). Empty without a profile.
  std::map<std::string, GpuSiteScales> site_gpus;

  // The kernel efficiencies of a GPU: its generation's fitted curve (attention fitted on kernel tables), with the
  // shared block-scaled share and the site's corrections of that GPU (each kept inside its documented range).
  KernelEfficiency efficiency(const std::string& generation, const std::string& gpu_id = "") const;
  // The power model on a GPU: the shared coefficients, times the site's dynamic-power correction of that GPU.
  PowerParams power_on(const std::string& gpu_id) const;
};

// The request-level parameters by name with their ranges and reasons (docs/simulator.md shows this table).
struct SimField {
  ParamRange range;
  double SimParams::*scalar = nullptr;
  double PowerParams::*power = nullptr;
  double& ref(SimParams& p) const { return scalar ? p.*scalar : p.power.*power; }
  double get(const SimParams& p) const { return scalar ? p.*scalar : p.power.*power; }
};
const std::vector<SimField>& sim_fields();

// params.json: {"shared": {...}, "engines": {"vllm": {"step_host_s": ..}}}: the fitted values, applied over the
// kernel and engine catalogs. Every value is range-checked; errors name the file and key.
Json sim_params_to_json(const SimParams& params);
SimParams sim_params_from_json(const Json& json, const std::string& source, KernelParams kernels,
                               EngineCatalog engines);

// Loads params.json and the kernel and engine catalogs beside it in the data folder. A missing file is an error.
SimParams load_sim_params(const std::filesystem::path& path);
std::filesystem::path default_sim_params_path();
// A --params flag: load_sim_params of `path`, or of default_sim_params_path() when it is empty.
SimParams load_sim_params_or_default(const std::string& path);
// The uncalibrated starting point: the catalogs with the built-in row-level defaults.
SimParams default_sim_params();

}  // namespace llmco2::sim
