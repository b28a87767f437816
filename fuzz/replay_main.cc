// fuzz/replay_main.cc - runs a harness over corpus files and folders without libFuzzer: the CI replay driver built
// with the ordinary compiler, so every corpus file (crash inputs included) is a regression test of `ctest`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness.h"

namespace {

int replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  long files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    std::vector<std::filesystem::path> inputs;
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else {
      inputs.push_back(arg);
    }
    for (const auto& input : inputs) {
      std::fprintf(stderr, "replay: %s\n", input.c_str());
      replay(input);
      ++files;
    }
  }
  std::printf("replayed %ld inputs without a crash\n", files);
  return files > 0 ? 0 : 1;
}
