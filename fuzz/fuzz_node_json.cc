// fuzz/fuzz_node_json.cc - a server node file (data/nodes/*.json shape) through the node reader and its range checks.
#include "core/json_io.h"
#include "hardware/node.h"
#include "harness.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return llmco2::fuzz::expect_error_or_success([&] {
    const auto path = llmco2::fuzz::scratch_file("node.json", llmco2::fuzz::as_text(data, size));
    (void)llmco2::read_node_file(path);
  });
}
