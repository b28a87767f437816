// measure/runner_process.h - a runner (the program that loads a model and runs requests on the GPUs) started as a
// child process and driven over JSON lines on its stdin and stdout (protocol: docs/measure.md).
#pragma once

#include <sys/types.h>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/json_io.h"
#include "measure/module.h"

namespace llmco2::measure {

// The runner died, timed out, or said something that is not the protocol; the message says which.
class RunnerFailure : public Error {
 public:
  using Error::Error;
};

// One line the runner wrote as a message: a JSON object, or null for a blank line. Throws RunnerFailure for a line
// that is not JSON or not an object.
Json parse_runner_line(const std::string& line);

// `message` when its "event" is `event`; an "error" event throws Error with the runner's message; anything else
// (another event, an event that is not a string) throws RunnerFailure.
const Json& expect_runner_event(const Json& message, const std::string& event);

// The string at `key` of a runner's message, or `fallback` when absent; a value of another type throws RunnerFailure.
std::string runner_text_field(const Json& message, const char* key, const std::string& fallback);

// What a "done" message reports: the prompt and generated tokens it ran and the seconds it took.
struct RunnerDone {
  long prompt_tokens = -1, gen_tokens = -1;
  double elapsed_s = 0;
};
// Reads a "done" message; throws RunnerFailure when a count is not a whole number or elapsed_s is not a positive,
// finite number of seconds.
RunnerDone runner_done(const Json& done);

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

}  // namespace llmco2::measure
