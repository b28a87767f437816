// server/access_log/access_log.h - the structured access log: one JSON line per request on a stream (stderr),
// written by a thread of its own from a bounded buffer, so a stream that cannot be written (a full pipe) never holds
// up a worker: lines beyond the buffer are dropped and counted.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
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

class AccessLog {
 public:
  // At most `max_pending` lines wait for the stream.
  explicit AccessLog(std::ostream& out, size_t max_pending = 4096);
  // Writes what waits within `drain_wait` (then a last line {"access_log_dropped": N} when lines were dropped) and
  // stops; a stream still blocked then is left to its writer thread, which the process ends with it.
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Queues the record's line; never waits on the stream. Returns false when it was dropped (the buffer was full).
  bool write(const AccessRecord& record);
  // Waits until every queued line is written, at most `wait`; true when they all are.
  bool flush(std::chrono::milliseconds wait);
  size_t dropped() const;

  struct State;  // opaque: the buffer the writer thread shares

 private:
  std::shared_ptr<State> state_;  // shared with the writer thread, which may outlive this object
};

}  // namespace llmco2::server
