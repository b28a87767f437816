// fuzz/fuzz_plan_csv.cc - a plan CSV (model,gpu,gpus,batch,prompt,gen[,dtype,engine]) through the plan reader.
#include "dataset/plan.h"
#include "harness.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return llmco2::fuzz::expect_error_or_success(
      [&] { (void)llmco2::read_plan(llmco2::fuzz::scratch_file("plan.csv", llmco2::fuzz::as_text(data, size))); });
}
