// tests/support/hand_sim_params.h - simulator parameters whose every value is set by the test, so that expected step
// times and energies follow by hand (tests/sim/).
#pragma once

#include "engine/engine_profile.h"
#include "sim/sim_params.h"
#include "support/all_modules.h"

namespace llmco2::testing_support {

// GEMMs and memory-bound kernels at 0.5 of their peaks at any size, a 10 us kernel floor, an engine ("default") with
// 1 us launches, a 1 ms serial host step and no per-sequence host cost; power 0.2 of the dynamic range per second of
// kernels, 0.5 per second of compute at the peak, 0.4 per second of memory at the peak, nothing while waiting.
inline SimParams hand_sim_params() {
  SimParams p;
  KernelEfficiency e;
  e.gemm_efficiency = 0.5, e.gemm_tile_rows = 1;  // 0.5 of the peak at any row count
  e.memory_efficiency = 0.5, e.memory_half_bytes = 1e-9;
  e.kernel_floor_s = 1e-5;
  p.kernels.generations["default"] = e;
  p.kernels.networks["default"] = NetworkEfficiency{};
  p.kernels.direct["default"] = DirectAllReduceEfficiency{};
  EngineProfile engine;
  engine.id = "default";
  engine.cuda_graphs = false;
  engine.launch_host_s = 1e-6;
  engine.step_host_s = 1e-3;
  engine.step_host_per_seq_s = 0;
  p.engines.add(engine);
  p.power = {0.2, 0.5, 0.4, 0.0};
  return p;
}

}  // namespace llmco2::testing_support
