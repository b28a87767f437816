// sim/simulator.h - the reference simulator: what an NVML measurement of a configuration would read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataset/record.h"
#include "graph/request.h"
#include "hardware/gpu.h"
#include "model/model_spec.h"
#include "sim/sim_params.h"

namespace llmco2 {

// How the configuration runs beyond the request itself.
struct SimScenario {
  Measures measures = Measures::isolated;  // steady_state: prefills interleave with the decode iterations
  Parallelism parallelism = Parallelism::tensor;
  int layer_split_gpus = 1;  // layer_split: GPUs the layers are spread over (request.gpus must be 1)
  int data_parallel = 1;     // independent replicas, each serving batch / data_parallel
  bool kv_cache = true;      // false: every decode step recomputes the whole sequence (HF use_cache=False)
};

// What one kernel costs per step on one GPU, with the roofs it runs under: the simulator's input.
enum class SimKernelClass { matrix, attention, vector, network };
struct SimKernel {
  SimKernelClass kind = SimKernelClass::matrix;
  double count = 1;          // launches per step (the layer count for layer kernels)
  double ops = 0;            // per launch
  double mem_bytes = 0;      // per launch
  double net_bytes = 0;      // per launch
  double rows = 0;           // GEMM rows (tokens) per launch
  double peak_ops_per_s = 0;
};
// A run of identical steps (prefill: 1 step; decode: gen-1 steps with the mean context).
struct SimSegment {
  double steps = 0;
  std::vector<SimKernel> kernels;
};
struct SimWorkload {
  std::vector<SimSegment> prefill, decode;
  double memory_bytes_per_s = 0;
  double link_bytes_per_s = 0;
  int tp_gpus = 1;         // GPUs working on each step together
  int gpus_total = 1;      // all GPUs drawing power (idle ones included)
  double replicas = 1;     // data-parallel copies of the work
  bool layer_split = false;
  bool steady_state = false;
  double tdp_w = 0, idle_w = 0;
  std::string gpu_id, engine;
};

struct PhaseResult {
  double prefill = 0, decode = 0;
  double total() const { return prefill + decode; }
};
struct SimResult {
  PhaseResult energy_j;   // all GPUs
  PhaseResult latency_s;  // wall time
  double mean_power_w = 0;  // per GPU, over the whole run
  int gpus = 1;             // GPUs drawing power
};

// Builds the per-step kernel costs (kernel graph + Roofline peaks) once; independent of the parameters.
// Throws Error when the request is invalid for the model.
SimWorkload prepare_workload(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& scenario);

// Times and powers the workload under `params`. Cheap: the calibration calls it millions of times.
SimResult run_workload(const SimWorkload& workload, const SimParams& params);

// prepare + run.
SimResult simulate(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& scenario,
                   const SimParams& params);

// One noisy repeat: the result scaled by seeded log-normal factors with the params' spreads.
SimResult add_noise(const SimResult& result, const SimParams& params, uint64_t seed);

}  // namespace llmco2
