// fuzz/fuzz_runner_lines.cc - the measurement runner's JSON lines (docs/measure.md): each line as a message, its
// event checked, and a 'done' message's token counts and elapsed time read as the campaign reads them.
#include <sstream>
#include <string>

#include "harness.h"
#include "measure/runner_process.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream lines{std::string(llmco2::fuzz::as_text(data, size))};
  std::string line;
  while (std::getline(lines, line)) {
    llmco2::fuzz::expect_error_or_success([&] {
      const llmco2::Json message = llmco2::parse_runner_line(line);
      if (!message.is_object()) return;  // a blank line
      (void)llmco2::expect_runner_event(message, "hello");
    });
    llmco2::fuzz::expect_error_or_success([&] {
      const llmco2::Json message = llmco2::parse_runner_line(line);
      if (message.is_object()) (void)llmco2::runner_done(llmco2::expect_runner_event(message, "done"));
    });
  }
  return 0;
}
