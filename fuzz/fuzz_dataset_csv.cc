// fuzz/fuzz_dataset_csv.cc - a dataset CSV (docs/data.md) through the reader and its per-row validation.
#include "dataset/dataset_csv.h"
#include "harness.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return llmco2::fuzz::expect_error_or_success([&] {
    (void)llmco2::read_dataset(llmco2::fuzz::scratch_file("dataset.csv", llmco2::fuzz::as_text(data, size)));
  });
}
