// core/error.h - the one error type of the library: a user-facing message, caught once at each boundary.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace llmco2 {

// An error the user can act on: bad input, a missing file, a request that cannot run.
// The message names the source (file, line or key), what was expected and what was found.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws Error with a fmt-formatted message, e.g. fail("{}: missing key '{}'", path, key).
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace llmco2
