// tests/support/run_cli.h - running the llmco2 binary from a test: exit code, stdout and stderr.
#pragma once

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace llmco2::testing_support {

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out, err;
};

// Runs `command_line` through the shell; ctest runs tests in parallel processes, so each call has its own stderr
// file.
inline Result run_command(const std::string& command_line) {
  static int calls = 0;
  const std::string err_path =
      testing::TempDir() + "/llmco2_stderr_" + std::to_string(getpid()) + "_" + std::to_string(++calls) + ".txt";
  const std::string command = command_line + " 2>" + err_path;
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  result.err = err.str();
  std::remove(err_path.c_str());
  return result;
}

// Runs "<env> LLMCO2_BIN <args>".
inline Result run_llmco2(const std::string& args, const std::string& env = "") {
  return run_command(env + " " + std::string(LLMCO2_BIN) + " " + args);
}

}  // namespace llmco2::testing_support
