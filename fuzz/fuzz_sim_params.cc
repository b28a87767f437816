// fuzz/fuzz_sim_params.cc - the simulator's parameter files: the first byte picks params.json (fitted values),
// kernels.json (kernel efficiencies) or engines.json (engine profiles); the rest is the file. An engines file is read
// twice: whole, and by the bundled catalog's lazy reader (json_object_members' scan, then every engine on first use).
#include "core/error.h"
#include "core/json_io.h"
#include "engine/engine_profile.h"
#include "harness.h"
#include "sim/kernel_time.h"
#include "sim/sim_params.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto text = llmco2::fuzz::as_text(data + 1, size - 1);
  return llmco2::fuzz::expect_error_or_success([&] {
    switch (data[0] % 3) {
      case 0:
        (void)llmco2::load_sim_params(llmco2::fuzz::scratch_file("params.json", text));
        break;
      case 1:
        (void)llmco2::load_kernel_params(llmco2::fuzz::scratch_file("kernels.json", text));
        break;
      default: {
        const auto path = llmco2::fuzz::scratch_file("engines.json", text);
        try {
          (void)llmco2::load_engine_catalog(path);
        } catch (const llmco2::Error&) {
        }
        const llmco2::EngineCatalog lazy = llmco2::lazy_engine_catalog(path);
        for (const std::string& id : lazy.ids()) (void)lazy.get(id);
        break;
      }
    }
  });
}
