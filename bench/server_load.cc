// bench/server_load.cc - load benchmark of `llmco2 serve` (make bench-server, docs/performance.md): starts the server
// on a free port of 127.0.0.1, sends N predict requests from T keep-alive clients, and reports requests/s, errors,
// p50/p99 latency and the server's resident memory (VmRSS) at the start, the middle and the end.
//   server_load --bin build/release/src/cli/llmco2 [--requests 100000] [--clients 2] [--server-threads 2]
//               [--max-seconds 300]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <CLI/CLI.hpp>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string bin = "build/release/src/cli/llmco2";
  long requests = 100000;
  int clients = 2, server_threads = 2;
  double max_seconds = 300;
};

struct ServerProcess {
  pid_t pid = -1;
  int port = 0;
};

// Starts `llmco2 serve --port 0` with its access log to /dev/null; reads the port it prints.
ServerProcess start_server(const Options& o) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    freopen("/dev/null", "w", stderr);
    const std::string threads = std::to_string(o.server_threads);
    execl(o.bin.c_str(), "llmco2", "serve", "--port", "0", "--threads", threads.c_str(), "--queue", "256",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  const auto colon = line.rfind(':');
  if (line.find("listening on") == std::string::npos || colon == std::string::npos)
    throw std::runtime_error("the server did not start: " + line);
  return {pid, std::stoi(line.substr(colon + 1))};
}

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

std::string request_body(long i) {
  static const long prompts[] = {128, 512, 1024, 2048};
  return fmt::format(R"({{"model":"llama-3.1-8b","gpu":"h100-sxm","batch":{},"prompt":{},"gen":{},"region":"FRA"}})",
                     1 + i % 8, prompts[i % 4], 64 + (i % 5) * 64);
}

struct Tally {
  std::mutex mutex;
  std::vector<double> latencies_ms;
  long errors = 0;
};

void client(int port, std::atomic<long>& next, long total, Clock::time_point deadline, Tally& tally) {
  httplib::Client http("127.0.0.1", port);
  http.set_keep_alive(true);
  http.set_tcp_nodelay(true);
  std::vector<double> mine;
  long errors = 0;
  for (long i = next++; i < total && Clock::now() < deadline; i = next++) {
    const auto start = Clock::now();
    const auto res = http.Post("/v1/predict", request_body(i), "application/json");
    mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!res || res->status != 200) ++errors;
  }
  std::lock_guard lock(tally.mutex);
  tally.latencies_ms.insert(tally.latencies_ms.end(), mine.begin(), mine.end());
  tally.errors += errors;
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"load benchmark of llmco2 serve (127.0.0.1 only)"};
  app.add_option("--bin", o.bin, "the llmco2 binary")->capture_default_str();
  app.add_option("--requests", o.requests, "predict requests in all")->check(CLI::Range(1L, 10000000L));
  app.add_option("--clients", o.clients, "client threads (keep-alive)")->check(CLI::Range(1, 64));
  app.add_option("--server-threads", o.server_threads, "the server's --threads")->check(CLI::Range(1, 64));
  app.add_option("--max-seconds", o.max_seconds, "stop sending after this long")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  const ServerProcess server = start_server(o);
  const long rss_start = rss_kib(server.pid);
  std::atomic<long> next{0};
  Tally tally;
  const auto started = Clock::now();
  const auto deadline =
      started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.max_seconds));
  std::vector<std::thread> clients;
  for (int c = 0; c < o.clients; ++c)
    clients.emplace_back(client, server.port, std::ref(next), o.requests, deadline, std::ref(tally));
  long rss_middle = -1;
  while (next < o.requests / 2 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rss_middle = rss_kib(server.pid);
  for (auto& t : clients) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const long rss_end = rss_kib(server.pid);
  kill(server.pid, SIGTERM);
  int status = 0;
  waitpid(server.pid, &status, 0);

  auto& lat = tally.latencies_ms;
  const size_t done = lat.size();
  fmt::print("requests {} in {:.2f} s: {:.0f} requests/s, errors {}\n", done, seconds,
             static_cast<double>(done) / seconds, tally.errors);
  fmt::print("latency p50 {:.3f} ms, p99 {:.3f} ms ({} clients, keep-alive; server --threads {})\n",
             percentile(lat, 0.50), percentile(lat, 0.99), o.clients, o.server_threads);
  fmt::print("server VmRSS start {} KiB, middle {} KiB, end {} KiB; server exit status {}\n", rss_start, rss_middle,
             rss_end, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return tally.errors == 0 && done == static_cast<size_t>(o.requests) ? 0 : 1;
}
