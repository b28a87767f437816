// fuzz/fuzz_hf_config.cc - a Hugging Face config.json through the model reader, the derived parameter and byte counts
// and the kernel graph of a small request (huge or absurd architecture fields must be an Error, not an allocation).
#include "dataset/architecture.h"
#include "graph/kernel_graph.h"
#include "harness.h"
#include "model/hf_config.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return llmco2::fuzz::expect_error_or_success([&] {
    const auto path = llmco2::fuzz::scratch_file("config.json", llmco2::fuzz::as_text(data, size));
    const llmco2::ModelSpec model = llmco2::read_hf_config(path);
    (void)model.weight_bytes(model.default_precision);
    (void)model.active_params();
    (void)llmco2::architecture_fields(model);
    llmco2::Request request;
    request.prompt_tokens = 8;
    request.gen_tokens = 2;
    request.precision = model.default_precision;
    llmco2::validate_request(request, model);
    (void)llmco2::build_kernel_graph(model, request);
  });
}
