// measure/runner_process.cc - fork/exec with pipes, line-based JSON with timeouts.
#include "measure/runner_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <thread>

namespace llmco2::measure {

RunnerProcess::RunnerProcess(const std::string& command, const std::vector<std::pair<std::string, std::string>>& env,
                             const std::filesystem::path& stderr_log) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) fail("cannot create pipes: {}", std::strerror(errno));
  const int log = open(stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_ = fork();
  if (pid_ < 0) fail("cannot start the runner: {}", std::strerror(errno));
  if (pid_ == 0) {  // the child: only async-signal-safe calls until exec
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    if (log >= 0) dup2(log, STDERR_FILENO);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    const std::string shell = "exec " + command;
    execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (log >= 0) close(log);
  to_runner_ = in[1];
  from_runner_ = out[0];
}

RunnerProcess::~RunnerProcess() {
  if (pid_ > 0) {
    const std::string quit = "{\"op\":\"quit\"}\n";
    [[maybe_unused]] const ssize_t written = write(to_runner_, quit.data(), quit.size());
    for (int i = 0; i < 50; ++i) {  // up to 5 s to exit on its own
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  kill();
  if (to_runner_ >= 0) close(to_runner_);
  if (from_runner_ >= 0) close(from_runner_);
}

void RunnerProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string RunnerProcess::exit_description() {
  if (pid_ <= 0) return "the runner is not running";
  int status = 0;
  if (waitpid(pid_, &status, 0) != pid_) return "the runner stopped";
  pid_ = -1;
  if (WIFSIGNALED(status)) return fmt::format("the runner was killed by signal {}", WTERMSIG(status));
  return fmt::format("the runner exited with status {}", WEXITSTATUS(status));
}

void RunnerProcess::send(const Json& message) {
  const std::string line = message.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(to_runner_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RunnerFailure(exit_description() + " (while sending it a request)");
    done += static_cast<size_t>(n);
  }
}

Json parse_runner_line(const std::string& line) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return nullptr;
  Json message;
  try {
    message = parse_json_text(line, "runner");
  } catch (const Error&) {
    throw RunnerFailure(fmt::format("the runner wrote a line that is not JSON: '{}'", line.substr(0, 120)));
  }
  if (!message.is_object()) throw RunnerFailure("the runner wrote JSON that is not an object: " + line.substr(0, 120));
  return message;
}

std::string runner_text_field(const Json& message, const char* key, const std::string& fallback) {
  const auto it = message.find(key);
  if (it == message.end()) return fallback;
  if (!it->is_string())
    throw RunnerFailure(fmt::format("the runner's '{}' must be a string, found {}", key, it->dump()));
  return it->get<std::string>();
}

namespace {

long whole_field(const Json& message, const char* key) {
  const auto it = message.find(key);
  if (it == message.end() || !it->is_number_integer())
    throw RunnerFailure(fmt::format("the runner's 'done' lacks a whole number '{}'", key));
  return it->get<long>();
}

}  // namespace

const Json& expect_runner_event(const Json& message, const std::string& event) {
  const std::string got = runner_text_field(message, "event", "");
  if (got == "error") {
    const std::string kind = runner_text_field(message, "kind", "");
    fail("runner error{}: {}", kind.empty() ? "" : " (" + kind + ")",
         runner_text_field(message, "message", "(no message)"));
  }
  if (got != event) throw RunnerFailure(fmt::format("expected a '{}' event from the runner, got '{}'", event, got));
  return message;
}

RunnerDone runner_done(const Json& done) {
  RunnerDone d;
  d.prompt_tokens = whole_field(done, "prompt_tokens");
  d.gen_tokens = whole_field(done, "gen_tokens");
  const auto elapsed = done.find("elapsed_s");
  if (elapsed != done.end() && elapsed->is_number()) d.elapsed_s = elapsed->get<double>();
  if (!(d.elapsed_s > 0) || !std::isfinite(d.elapsed_s))
    throw RunnerFailure("the runner's 'done' lacks a positive elapsed_s");
  return d;
}

Json RunnerProcess::receive(double timeout_s) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
  while (true) {
    if (const auto newline = buffer_.find('\n'); newline != std::string::npos) {
      const std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      Json message = parse_runner_line(line);
      if (message.is_object()) return message;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill();
      throw RunnerFailure(fmt::format("the runner did not answer within {} s (killed)", timeout_s));
    }
    pollfd p{from_runner_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) throw RunnerFailure(std::string("poll failed: ") + std::strerror(errno));
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(from_runner_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RunnerFailure(exit_description());
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace llmco2::measure
