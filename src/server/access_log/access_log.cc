// server/access_log/access_log.cc - access records as JSON lines.
#include "server/access_log/access_log.h"

#include <condition_variable>
#include <ctime>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace llmco2::server {
namespace {

// ISO 8601 in UTC with milliseconds.
std::string utc_time(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

}  // namespace

std::string access_line(const AccessRecord& r) {
  const nlohmann::ordered_json line = {{"time", utc_time(r.time)}, {"method", r.method},
                                       {"path", r.path},           {"status", r.status},
                                       {"bytes", r.bytes},         {"duration_ms", r.duration_ms}};
  // A client's path may hold any bytes: replace what is not UTF-8 rather than throw.
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct AccessLog::State {
  std::ostream* out = nullptr;
  size_t max_pending = 0;
  std::mutex mutex;
  std::condition_variable wake, written;
  std::deque<std::string> lines;
  size_t dropped = 0;
  bool writing = false;  // the writer holds a line it has taken off `lines`
  bool stopping = false;
  bool finished = false;  // the writer thread has returned
};

namespace {

// The writer thread: lines to the stream in order, then the drop count when stopping.
void write_lines(const std::shared_ptr<AccessLog::State>& s) {
  std::unique_lock lock(s->mutex);
  for (;;) {
    s->wake.wait(lock, [&] { return s->stopping || !s->lines.empty(); });
    if (s->lines.empty()) break;
    std::string line = std::move(s->lines.front());
    s->lines.pop_front();
    s->writing = true;
    lock.unlock();
    *s->out << line << std::flush;
    lock.lock();
    s->writing = false;
    s->written.notify_all();
  }
  const size_t dropped = s->dropped;
  lock.unlock();  // never hold the lock on the stream: the destructor waits on it, bounded
  if (dropped > 0) *s->out << fmt::format("{{\"access_log_dropped\":{}}}\n", dropped) << std::flush;
  lock.lock();
  s->finished = true;
  s->written.notify_all();
}

}  // namespace

AccessLog::AccessLog(std::ostream& out, size_t max_pending) : state_(std::make_shared<State>()) {
  state_->out = &out;
  state_->max_pending = max_pending;
  std::thread([s = state_] { write_lines(s); }).detach();
}

AccessLog::~AccessLog() {
  flush(std::chrono::milliseconds(1000));
  std::unique_lock lock(state_->mutex);
  state_->stopping = true;
  state_->wake.notify_all();
  state_->written.wait_for(lock, std::chrono::milliseconds(1000), [&] { return state_->finished; });
}

bool AccessLog::write(const AccessRecord& record) {
  std::string line = access_line(record) + "\n";
  {
    std::lock_guard lock(state_->mutex);
    if (state_->lines.size() >= state_->max_pending) {
      ++state_->dropped;
      return false;
    }
    state_->lines.push_back(std::move(line));
  }
  state_->wake.notify_one();
  return true;
}

bool AccessLog::flush(std::chrono::milliseconds wait) {
  std::unique_lock lock(state_->mutex);
  return state_->written.wait_for(lock, wait, [&] { return state_->lines.empty() && !state_->writing; });
}

size_t AccessLog::dropped() const {
  std::lock_guard lock(state_->mutex);
  return state_->dropped;
}

}  // namespace llmco2::server
