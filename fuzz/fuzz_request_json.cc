// fuzz/fuzz_request_json.cc - a request body as the HTTP API and the Python bindings receive it: JSON text read by
// request_from_json and answered by a path-free Session (Settings.allow_paths = false, the server's), the whole
// prediction included: a posted config.json, the carbon inputs, the footprint and its JSON document.
#include "harness.h"
#include "llmco2/api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const llmco2::api::Session session(llmco2::api::Settings{.allow_paths = false});
  return llmco2::fuzz::expect_error_or_success([&] {
    const auto json = llmco2::api::parse_json(llmco2::fuzz::as_text(data, size), "request body");  // as the server
    (void)session.predict(llmco2::api::request_from_json(json)).json.dump();
  });
}
