// server/access_log/access_log.h - the structured access log: one JSON line per request on a stream (stderr).
#pragma once

#include <chrono>
#include <mutex>
#include <ostream>
#include <string>

namespace llmco2::server {

struct AccessRecord {
  std::chrono::system_clock::time_point time;  // when the request was received
  std::string method, path;
  int status = 0;
  size_t bytes = 0;  // response body
  double duration_ms = 0;
};

// {"time":"2026-11-24T05:33:54.123Z","method":"POST","path":"/v1/predict","status":200,"bytes":1234,"duration_ms":0.8}
std::string access_line(const AccessRecord& record);

// Writes whole lines from many threads without interleaving them.
class AccessLog {
 public:
  explicit AccessLog(std::ostream& out) : out_(out) {}
  void write(const AccessRecord& record);

 private:
  std::ostream& out_;
  std::mutex mutex_;
};

}  // namespace llmco2::server
