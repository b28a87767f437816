// core/paths.cc - locates the bundled catalogs.
#include "core/paths.h"

#include <cstdlib>

namespace llmco2 {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("LLMCO2_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return LLMCO2_DEFAULT_DATA_DIR;
}

std::filesystem::path measured_dir(const std::string& chosen) {
  return chosen.empty() ? data_dir() / "measured" : std::filesystem::path(chosen);
}

}  // namespace llmco2
