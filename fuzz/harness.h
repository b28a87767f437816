// fuzz/harness.h - what every libFuzzer harness shares: the input as a scratch file, and the rule that a parser may
// answer bad input only with llmco2::Error (anything else escaping, a crash, a leak or UB is a finding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"

namespace llmco2::fuzz {

// The input as text.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Writes the input to a file of this process's scratch folder named `name` (e.g. "config.json") and returns its path;
// the loaders under test read paths, so the input reaches them the way a user's file does.
std::filesystem::path scratch_file(std::string_view name, std::string_view content);

// Runs `parse`; an Error is the expected answer to bad input and is swallowed. Any other exception escapes, which
// aborts the run and makes libFuzzer (or the replay driver) report the input.
template <typename Parse>
int expect_error_or_success(Parse&& parse) {
  try {
    parse();
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace llmco2::fuzz

// libFuzzer's entry point, defined by each harness.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
