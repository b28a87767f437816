// tests/support/error_of.h - the message of the llmco2::Error a call throws, or "" when it throws none.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"
#include "support/all_modules.h"

namespace llmco2::testing_support {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace llmco2::testing_support
