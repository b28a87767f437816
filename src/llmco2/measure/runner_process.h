// measure/runner_process.h - a runner (the program that loads a model and runs requests on the GPUs) started as a
// child process and driven over JSON lines on its stdin and stdout (protocol: docs/measure.md).
#pragma once

#include <filesystem>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/json_io.h"

namespace llmco2 {

// The runner died, timed out, or said something that is not the protocol; the message says which.
class RunnerFailure : public Error {
 public:
  using Error::Error;
};

class RunnerProcess {
 public:
  // Runs `/bin/sh -c "exec <command>"` with `env` added; its stderr is appended to `stderr_log`.
  RunnerProcess(const std::string& command, const std::vector<std::pair<std::string, std::string>>& env,
                const std::filesystem::path& stderr_log);
  ~RunnerProcess();  // asks it to quit, then kills it if it lingers
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  void send(const Json& message);  // throws RunnerFailure when the runner is gone
  // The next message; throws RunnerFailure on end of output (with the exit status), after `timeout_s`, or on a line
  // that is not a JSON object.
  Json receive(double timeout_s);
  void kill();

 private:
  std::string exit_description();
  pid_t pid_ = -1;
  int to_runner_ = -1, from_runner_ = -1;
  std::string buffer_;
};

}  // namespace llmco2
