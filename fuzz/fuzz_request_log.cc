// fuzz/fuzz_request_log.cc - a request log (Azure trace or dataset format) through the log reader and the timestamp
// outlier check `trace` applies.
#include "dataset/request_log.h"
#include "harness.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return llmco2::fuzz::expect_error_or_success([&] {
    llmco2::RequestLog log =
        llmco2::read_request_log(llmco2::fuzz::scratch_file("log.csv", llmco2::fuzz::as_text(data, size)));
    llmco2::drop_time_outliers(log);
  });
}
