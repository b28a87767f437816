// dataset/request_log.h - a log of requests to account for: the Azure trace format (TIMESTAMP, ContextTokens,
// GeneratedTokens) or the dataset format (prompt_tokens, gen_tokens). A bad line is skipped, counted and named; the
// good ones are kept.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmco2 {

struct LoggedRequest {
  std::optional<double> time_s;  // arrival, seconds since 1970-01-01 UTC (Azure format only)
  long prompt_tokens = 0;
  long gen_tokens = 0;
  long line = 0;  // 1-based line in the file
  int beams = 1;  // sequences decoded (beam search width); 1 for every log format read here
};

struct SkippedLine {
  long line = 0;
  std::string reason;
};

struct RequestLog {
  std::string source;   // the path
  std::string format;   // "azure" or "dataset"
  std::vector<LoggedRequest> requests;
  long skipped = 0;                   // lines not used
  std::vector<SkippedLine> examples;  // the first few skipped lines with their reasons
  bool has_time() const { return !requests.empty() && requests.front().time_s.has_value(); }
};

// Reads a log one request at a time (memory: one record): the streaming form of read_request_log.
class RequestLogReader {
 public:
  // Opens the file and reads its header; throws Error when it cannot be read or has neither format's columns.
  explicit RequestLogReader(const std::filesystem::path& path);
  ~RequestLogReader();
  std::optional<LoggedRequest> next();  // the next good request; bad lines are skipped and counted
  const std::string& source() const;
  const std::string& format() const;
  long skipped() const;
  const std::vector<SkippedLine>& examples() const;
  long lines_in_file() const;  // counted once when opened (for progress lines), header included
  // Throws the Error for a log with no good request: the lines skipped and the first one's reason.
  [[noreturn]] void fail_nothing_read() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads a log; throws Error naming the file when it cannot be read, has neither format's columns, or holds no good
// request. `progress` draws a progress line while parsing.
RequestLog read_request_log(const std::filesystem::path& path, bool progress = false);

// The longest pause accepted between consecutive arrivals of a log (sorted by time): 30 days. A request log covers
// hours to weeks of traffic; a wider gap means a mistyped or corrupt timestamp (a line dated years away).
inline constexpr double kMaxTimeGap_s = 30 * 86400.0;

// Drops the requests separated from the bulk of the log by a pause longer than kMaxTimeGap_s: the arrivals split at
// every such gap and only the segment with the most requests is kept (the earliest on a tie). Each dropped request
// counts as a skipped line, its reason naming its timestamp and the kept span. Returns how many were dropped.
long drop_time_outliers(RequestLog& log);

inline constexpr double kMaxTimestamp_s = 253402300799;  // 9999-12-31 23:59:59 UTC

// Parses "2023-11-16 18:17:03.9799600" (or with 'T', or plain seconds) into seconds since 1970-01-01 UTC; nullopt
// for anything else, or a time before 1970 or after kMaxTimestamp_s.
std::optional<double> parse_timestamp(std::string_view text);

}  // namespace llmco2
