// core/error.h - fail(): throwing the library's one error type (llmco2/error.h) with a formatted message.
#pragma once

#include <string>

#include <fmt/format.h>

#include "llmco2/error.h"  // the Error class itself: public, in include/

namespace llmco2 {

// Throws Error with a fmt-formatted message, e.g. fail("{}: missing key '{}'", path, key).
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace llmco2
