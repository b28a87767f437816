// fuzz/fuzz_sim_params.cc - the simulator's parameter files: the first byte picks params.json (fitted values),
// kernels.json (kernel efficiencies) or engines.json (engine profiles); the rest is the file.
#include "core/json_io.h"
#include "engine/engine_profile.h"
#include "harness.h"
#include "sim/kernel_time.h"
#include "sim/sim_params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto text = llmco2::fuzz::as_text(data + 1, size - 1);
  return llmco2::fuzz::expect_error_or_success([&] {
    switch (data[0] % 3) {
      case 0: (void)llmco2::load_sim_params(llmco2::fuzz::scratch_file("params.json", text)); break;
      case 1: (void)llmco2::load_kernel_params(llmco2::fuzz::scratch_file("kernels.json", text)); break;
      default: (void)llmco2::load_engine_catalog(llmco2::fuzz::scratch_file("engines.json", text)); break;
    }
  });
}
