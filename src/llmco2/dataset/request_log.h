// dataset/request_log.h - a log of requests to account for: the Azure trace format (TIMESTAMP, ContextTokens,
// GeneratedTokens) or the dataset format (prompt_tokens, gen_tokens). A bad line is skipped, counted and named; the
// good ones are kept.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dataset/module.h"

namespace llmco2::dataset {

struct LoggedRequest {
  std::optional<double> time_s;  // arrival, seconds since 1970-01-01 UTC (Azure format only)
  long prompt_tokens = 0;
  long gen_tokens = 0;
  long line = 0;  // 1-based line in the file
  int beams = 1;  // sequences decoded (beam search width); 1 for every log format read here
  // Prefix caching (optional columns): the conversation or session the request belongs to (a hash of its id; 0: none)
  // and the leading prompt tokens it shares with that conversation's earlier requests (SharedPrefixTokens); or the
  // prompt tokens the serving API reported cached (CachedTokens, as OpenAI's usage.prompt_tokens_details reports).
  uint64_t session = 0;
  long shared_tokens = 0;
  long cached_tokens = 0;
};

struct SkippedLine {
  long line = 0;
  std::string reason;
};

inline constexpr size_t kSkippedExamples = 5;  // skipped lines named with their reason (the first ones of the log)

struct RequestLog {
  std::string source;  // the path
  std::string format;  // "azure" or "dataset"
  std::vector<LoggedRequest> requests;
  long skipped = 0;                   // lines not used
  std::vector<SkippedLine> examples;  // the first few skipped lines with their reasons
  bool has_time() const { return !requests.empty() && requests.front().time_s.has_value(); }
};

// Where a log's requests are in its records: the format, read off the header, and the columns it uses.
struct LogLayout {
  std::string source;               // the path, for messages
  std::vector<std::string> header;  // the header's cells
  std::string format;               // "azure" or "dataset"
  std::optional<size_t> time;       // the TIMESTAMP column (Azure format only, when present)
  size_t prompt = 0, gen = 0;
  // Optional, in either format: SessionId (or ConversationId, session_id, conversation_id), SharedPrefixTokens
  // (shared_prefix_tokens), CachedTokens (cached_tokens).
  std::optional<size_t> session, shared, cached;
};

// The layout of a log with this header; throws Error when it has neither format's columns.
LogLayout detect_log_layout(std::vector<std::string> header, const std::string& source);

// The request of one record (its cells, its 1-based line), or nullopt with `reason` saying why it is skipped.
std::optional<LoggedRequest> parse_log_record(const LogLayout& layout, std::span<const std::string_view> cells,
                                              long line, std::string& reason);

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

// Throws the Error for a log with no good request: the lines skipped and the first one's reason.
[[noreturn]] void fail_no_request(const std::string& source, long skipped, const std::vector<SkippedLine>& examples);

// Reads a log; throws Error naming the file when it cannot be read, has neither format's columns, or holds no good
// request. `progress` draws a progress line while parsing.
RequestLog read_request_log(const std::filesystem::path& path, bool progress = false);

// The longest pause accepted between consecutive arrivals of a log (sorted by time): 30 days. A request log covers
// hours to weeks of traffic; a wider gap means a mistyped or corrupt timestamp (a line dated years away).
inline constexpr double kMaxTimeGap_s = 30 * 86400.0;

// Arrival times in bins of kMaxTimeGap_s (count, first, last per bin): no pause inside a bin exceeds the gap, so the
// bins find the bulk of a log exactly as sorting every time would, in memory bounded by the calendar (at most 97,800
// bins up to year 9999) instead of the log's length. Partial bins (per thread) merge exactly.
class ArrivalBins {
 public:
  void add(double time_s);
  void add(const ArrivalBins& other);
  bool empty() const { return bins_.empty(); }
  // [first, last] of the largest run of arrivals with no pause above kMaxTimeGap_s (the earliest on a tie).
  std::pair<double, double> bulk() const;
  // [first, last] of the arrivals inside [from_s, to_s] (a bulk), or nullopt when there are none.
  std::optional<std::pair<double, double>> span_within(double from_s, double to_s) const;
  long count_within(double from_s, double to_s) const;  // the arrivals inside [from_s, to_s] (a bulk)

 private:
  struct Bin {
    long count = 0;
    double first = 0, last = 0;
  };
  std::map<long, Bin> bins_;
};

// The reason a request dropped as a time outlier is named with.
std::string time_outlier_reason(double time_s, std::pair<double, double> bulk);

// Drops the requests separated from the bulk of the log by a pause longer than kMaxTimeGap_s: the arrivals split at
// every such gap and only the segment with the most requests is kept (the earliest on a tie). Each dropped request
// counts as a skipped line, its reason naming its timestamp and the kept span. Returns how many were dropped.
long drop_time_outliers(RequestLog& log);

inline constexpr double kMaxTimestamp_s = 253402300799;  // 9999-12-31 23:59:59 UTC

// Parses "2023-11-16 18:17:03.9799600" (or with 'T', or plain seconds) into seconds since 1970-01-01 UTC; nullopt
// for anything else: a date the calendar has not (2023-02-30, 2023-02-29, 2023-04-31), or a time before 1970 or
// after kMaxTimestamp_s.
std::optional<double> parse_timestamp(std::string_view text);

}  // namespace llmco2::dataset
