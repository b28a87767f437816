// tests/support/temp_file.h - a file with the given text in the test's temporary folder.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace llmco2::testing_support {

inline std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace llmco2::testing_support
