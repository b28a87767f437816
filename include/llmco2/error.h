// llmco2/error.h - the one error type of llmco2: a message the user can act on, the same in every interface.
#pragma once

#include <stdexcept>
#include <string>

namespace llmco2 {

// Bad input, a missing file, a request that cannot run. The message names the source (file, line, key or field),
// what was expected and what was found. The CLI prints it on one line and exits 2; the HTTP server answers 400 with
// it; the Python bindings raise it as ValueError.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace llmco2
