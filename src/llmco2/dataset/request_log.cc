// dataset/request_log.cc - reading request logs, skipping and counting bad lines.
#include "dataset/request_log.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/progress.h"

namespace llmco2 {
namespace {

constexpr size_t kExamples = 5;

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const long yoe = y - era * 400;
  const long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// A token count: a positive whole number (the dataset format's means are rounded).
std::optional<long> parse_tokens(std::string_view text, bool allow_fraction) {
  if (const auto whole = parse_long(text)) return *whole >= 1 ? whole : std::nullopt;
  if (!allow_fraction) return std::nullopt;
  const auto value = parse_double(text);
  if (!value || !(*value >= 0.5) || *value > 1e9) return std::nullopt;
  return std::lround(*value);
}

struct Columns {
  std::string format;
  std::optional<size_t> time;
  size_t prompt = 0, gen = 0;
};

Columns detect(const CsvTable& t) {  // from the header
  if (auto prompt = t.find_column("ContextTokens"), gen = t.find_column("GeneratedTokens"); prompt && gen)
    return {"azure", t.find_column("TIMESTAMP"), *prompt, *gen};
  if (auto prompt = t.find_column("prompt_tokens"), gen = t.find_column("gen_tokens"); prompt && gen)
    return {"dataset", std::nullopt, *prompt, *gen};
  fail("{}: expected the Azure trace columns (TIMESTAMP, ContextTokens, GeneratedTokens) or the dataset columns "
       "(prompt_tokens, gen_tokens)",
       t.source);
}

// The request of one record, or the reason it is skipped.
std::optional<LoggedRequest> parse_record(const CsvTable& t, const CsvTable::Record& r, const Columns& c,
                                          std::string& reason) {
  if (r.cells.size() != t.header.size()) {
    reason = fmt::format("{} cells, the header has {}", r.cells.size(), t.header.size());
    return std::nullopt;
  }
  const bool dataset = c.format == "dataset";
  LoggedRequest q;
  q.line = r.line;
  const auto prompt = parse_tokens(r.cells[c.prompt], dataset), gen = parse_tokens(r.cells[c.gen], dataset);
  if (!prompt || !gen) {
    reason = fmt::format("column '{}': expected a positive whole number of tokens, got '{}'",
                         t.header[prompt ? c.gen : c.prompt], r.cells[prompt ? c.gen : c.prompt]);
    return std::nullopt;
  }
  q.prompt_tokens = *prompt;
  q.gen_tokens = *gen;
  if (c.time) {
    q.time_s = parse_timestamp(r.cells[*c.time]);
    if (!q.time_s) {
      reason = fmt::format("column 'TIMESTAMP': expected YYYY-MM-DD HH:MM:SS[.fraction], got '{}'", r.cells[*c.time]);
      return std::nullopt;
    }
  }
  return q;
}

}  // namespace

namespace {

// A timestamp in 1970-01-01 .. 9999-12-31 23:59:59 UTC, else nullopt (what a date can print, and far inside a time_t).
std::optional<double> in_calendar(double seconds) {
  return seconds >= 0 && seconds <= kMaxTimestamp_s ? std::optional<double>(seconds) : std::nullopt;
}

}  // namespace

std::optional<double> parse_timestamp(std::string_view s) {
  if (s.size() >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T') && s[13] == ':' && s[16] == ':') {
    const auto y = parse_long(s.substr(0, 4)), mo = parse_long(s.substr(5, 2)), d = parse_long(s.substr(8, 2)),
               h = parse_long(s.substr(11, 2)), mi = parse_long(s.substr(14, 2));
    std::string_view rest = s.substr(17);
    if (!rest.empty() && rest.back() == 'Z') rest.remove_suffix(1);
    const auto sec = parse_double(rest);
    if (!y || !mo || !d || !h || !mi || !sec) return std::nullopt;
    if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *sec < 0 || *sec >= 61) return std::nullopt;
    return in_calendar(static_cast<double>(days_from_civil(*y, *mo, *d)) * 86400.0 +
                       static_cast<double>(*h * 3600 + *mi * 60) + *sec);
  }
  const auto seconds = parse_double(s);
  return seconds ? in_calendar(*seconds) : std::nullopt;
}

struct RequestLogReader::State {
  std::ifstream in;
  std::optional<CsvReader> reader;
  CsvTable header;  // the header only: column lookups and messages
  Columns columns;
  long skipped = 0, lines = 0;
  std::vector<SkippedLine> examples;
};

RequestLogReader::RequestLogReader(const std::filesystem::path& path) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.in = open_input_file(path, std::numeric_limits<uintmax_t>::max(), "request log (CSV)");
  std::array<char, 1 << 16> buffer;
  while (s.in.read(buffer.data(), buffer.size()) || s.in.gcount() > 0)
    s.lines += std::count(buffer.data(), buffer.data() + s.in.gcount(), '\n');
  s.in.clear();
  s.in.seekg(0);
  s.reader.emplace(s.in, path.string());
  s.header.source = path.string();
  auto header = s.reader->next();
  if (!header) fail("{}: empty CSV file (expected a header line)", s.header.source);
  s.header.header = std::move(header->cells);
  s.columns = detect(s.header);
}

RequestLogReader::~RequestLogReader() = default;

std::optional<LoggedRequest> RequestLogReader::next() {
  State& s = *state_;
  std::string reason;
  while (auto record = s.reader->next()) {
    if (auto q = parse_record(s.header, *record, s.columns, reason)) return q;
    ++s.skipped;
    if (s.examples.size() < kExamples) s.examples.push_back({record->line, reason});
  }
  return std::nullopt;
}

const std::string& RequestLogReader::source() const { return state_->header.source; }
const std::string& RequestLogReader::format() const { return state_->columns.format; }
long RequestLogReader::skipped() const { return state_->skipped; }
const std::vector<SkippedLine>& RequestLogReader::examples() const { return state_->examples; }
long RequestLogReader::lines_in_file() const { return state_->lines; }

void RequestLogReader::fail_nothing_read() const {
  const State& s = *state_;
  fail("{}: no request could be read ({} lines skipped{})", s.header.source, s.skipped,
       s.examples.empty() ? "" : fmt::format("; line {}: {}", s.examples[0].line, s.examples[0].reason));
}

namespace {

// The [first, last] arrival times of the largest run of arrivals with no gap above kMaxTimeGap_s.
std::pair<double, double> bulk_span(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  size_t best_begin = 0, best_size = 0;
  for (size_t begin = 0, i = 1; i <= times.size(); ++i) {
    if (i < times.size() && times[i] - times[i - 1] <= kMaxTimeGap_s) continue;
    if (i - begin > best_size) best_begin = begin, best_size = i - begin;
    begin = i;
  }
  return {times[best_begin], times[best_begin + best_size - 1]};
}

}  // namespace

long drop_time_outliers(RequestLog& log) {
  if (!log.has_time()) return 0;
  std::vector<double> times;
  for (const auto& q : log.requests) times.push_back(q.time_s.value_or(0));
  const auto [first, last] = bulk_span(times);
  std::vector<LoggedRequest> kept;
  for (auto& q : log.requests) {
    const double t = q.time_s.value_or(0);
    if (t >= first && t <= last) {
      kept.push_back(std::move(q));
      continue;
    }
    ++log.skipped;
    if (log.examples.size() < kExamples)
      log.examples.push_back({q.line, fmt::format("timestamp {:.0f} s lies more than {:.0f} days from the other "
                                                  "requests ({:.0f} to {:.0f} s); --keep-time-outliers keeps it",
                                                  t, kMaxTimeGap_s / 86400, first, last)});
  }
  const long dropped = static_cast<long>(log.requests.size() - kept.size());
  log.requests = std::move(kept);
  return dropped;
}

RequestLog read_request_log(const std::filesystem::path& path, bool progress) {
  RequestLogReader reader(path);
  RequestLog log;
  log.source = reader.source();
  log.format = reader.format();
  Progress bar("reading " + path.filename().string(), reader.lines_in_file(),
               progress && reader.lines_in_file() > 100000);
  while (auto q = reader.next()) {
    log.requests.push_back(*q);
    bar.update(q->line);
  }
  bar.finish();
  if (log.requests.empty()) reader.fail_nothing_read();
  log.skipped = reader.skipped();
  log.examples = reader.examples();
  return log;
}

}  // namespace llmco2
