// fuzz/fuzz_gpu_json.cc - a GPU file (data/gpus/*.json shape) through the GPU reader and its range checks.
#include "hardware/gpu_catalog.h"
#include "harness.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return llmco2::fuzz::expect_error_or_success(
      [&] { (void)llmco2::read_gpu_file(llmco2::fuzz::scratch_file("gpu.json", llmco2::fuzz::as_text(data, size))); });
}
