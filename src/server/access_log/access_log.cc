// server/access_log/access_log.cc - access records as JSON lines.
#include "server/access_log/access_log.h"

#include <ctime>

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

void AccessLog::write(const AccessRecord& record) {
  const std::string line = access_line(record) + "\n";
  std::lock_guard lock(mutex_);
  out_ << line << std::flush;
}

}  // namespace llmco2::server
