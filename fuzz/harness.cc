// fuzz/harness.cc - the scratch folder of a harness process.
#include "harness.h"

#include <fstream>

#include <unistd.h>

#include <fmt/format.h>

namespace llmco2::fuzz {

std::filesystem::path scratch_file(std::string_view name, std::string_view content) {
  static const std::filesystem::path dir = [] {
    auto path = std::filesystem::temp_directory_path() / fmt::format("llmco2-fuzz-{}", getpid());
    std::filesystem::create_directories(path);
    return path;
  }();
  const auto path = dir / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  return path;
}

}  // namespace llmco2::fuzz
