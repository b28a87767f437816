// dataset/request_log.cc - reading request logs, skipping and counting bad lines.
#include "dataset/request_log.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/progress.h"

namespace llmco2::dataset {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const long yoe = y - era * 400;
  const long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// A whole number: its digits read in place (the common case: 1 to 18 digits), else as parse_long reads it ("-1",
// "+1", 19 digits and more).
std::optional<long> whole_number(std::string_view text) {
  if (text.empty() || text.size() > 18) return parse_long(text);
  long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return parse_long(text);
    value = value * 10 + (c - '0');
  }
  return value;
}

// A token count: a positive whole number (the dataset format's means are rounded).
std::optional<long> parse_tokens(std::string_view text, bool allow_fraction) {
  if (const auto whole = whole_number(text)) return *whole >= 1 ? whole : std::nullopt;
  if (!allow_fraction) return std::nullopt;
  const auto value = parse_double(text);
  if (!value || !(*value >= 0.5) || *value > 1e9) return std::nullopt;
  return std::lround(*value);
}

// A count of prompt tokens in [0, prompt]: shared or cached ones.
std::optional<long> prompt_share(std::string_view text, long prompt) {
  if (text.empty()) return 0;
  const auto n = whole_number(text);
  return n && *n >= 0 && *n <= prompt ? n : std::nullopt;
}

// The session (FNV-1a of its id, never 0; an empty id is none), shared and cached prompt tokens of a record.
bool parse_prefix_columns(const LogLayout& c, std::span<const std::string_view> cells, LoggedRequest& q,
                          std::string& reason) {
  if (c.session && !cells[*c.session].empty()) q.session = fnv1a64(cells[*c.session]) | 1;
  for (auto [column, out] : {std::pair{c.shared, &q.shared_tokens}, std::pair{c.cached, &q.cached_tokens}}) {
    if (!column) continue;
    const auto n = prompt_share(cells[*column], q.prompt_tokens);
    if (!n) {
      reason = fmt::format("column '{}': expected a whole number of tokens from 0 to the prompt's {}, got '{}'",
                           c.header[*column], q.prompt_tokens, cells[*column]);
      return false;
    }
    *out = *n;
  }
  return true;
}

}  // namespace

LogLayout detect_log_layout(std::vector<std::string> header, const std::string& source) {
  CsvTable t;
  t.source = source;
  t.header = std::move(header);
  LogLayout l;
  if (auto prompt = t.find_column("ContextTokens"), gen = t.find_column("GeneratedTokens"); prompt && gen)
    l = {source, {}, "azure", t.find_column("TIMESTAMP"), *prompt, *gen};
  else if (auto p = t.find_column("prompt_tokens"), g = t.find_column("gen_tokens"); p && g)
    l = {source, {}, "dataset", std::nullopt, *p, *g};
  else
    fail(
        "{}: expected the Azure trace columns (TIMESTAMP, ContextTokens, GeneratedTokens) or the dataset columns "
        "(prompt_tokens, gen_tokens)",
        source);
  auto first_of = [&](std::initializer_list<std::string_view> names) -> std::optional<size_t> {
    for (std::string_view name : names)
      if (auto column = t.find_column(name)) return column;
    return std::nullopt;
  };
  l.session = first_of({"SessionId", "ConversationId", "session_id", "conversation_id"});
  l.shared = first_of({"SharedPrefixTokens", "shared_prefix_tokens"});
  l.cached = first_of({"CachedTokens", "cached_tokens"});
  if (l.shared && !l.session)
    fail("{}: column '{}' needs a session column (SessionId or ConversationId) saying whose prefix is shared", source,
         t.header[*l.shared]);
  l.header = std::move(t.header);
  return l;
}

std::optional<LoggedRequest> parse_log_record(const LogLayout& c, std::span<const std::string_view> cells, long line,
                                              std::string& reason) {
  if (cells.size() != c.header.size()) {
    reason = fmt::format("{} cells, the header has {}", cells.size(), c.header.size());
    return std::nullopt;
  }
  const bool dataset = c.format == "dataset";  // its layout has no time column
  LoggedRequest q;
  q.line = line;
  const auto prompt = parse_tokens(cells[c.prompt], dataset), gen = parse_tokens(cells[c.gen], dataset);
  if (!prompt || !gen) {
    reason = fmt::format("column '{}': expected a positive whole number of tokens, got '{}'",
                         c.header[prompt ? c.gen : c.prompt], cells[prompt ? c.gen : c.prompt]);
    return std::nullopt;
  }
  q.prompt_tokens = *prompt;
  q.gen_tokens = *gen;
  if (!parse_prefix_columns(c, cells, q, reason)) return std::nullopt;
  if (c.time) {
    q.time_s = parse_timestamp(cells[*c.time]);
    if (!q.time_s) {
      reason = fmt::format("column 'TIMESTAMP': expected YYYY-MM-DD HH:MM:SS[.fraction], got '{}'", cells[*c.time]);
      return std::nullopt;
    }
  }
  return q;
}

namespace {

// A timestamp in 1970-01-01 .. 9999-12-31 23:59:59 UTC, else nullopt (what a date can print, and far inside a time_t).
std::optional<double> in_calendar(double seconds) {
  return seconds >= 0 && seconds <= kMaxTimestamp_s ? std::optional<double>(seconds) : std::nullopt;
}

// days_from_civil, remembering the last date (a log's lines share their date, mostly).
long days_of(long y, long m, long d) {
  thread_local long last_y = 1970, last_m = 1, last_d = 1, last_days = 0;
  if (y != last_y || m != last_m || d != last_d)
    last_y = y, last_m = m, last_d = d, last_days = days_from_civil(y, m, d);
  return last_days;
}

// Days in month `m` of year `y` (the Gregorian calendar: February has 29 in years divisible by 4, except centuries
// not divisible by 400).
long days_in_month(long y, long m) {
  static constexpr long kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

std::optional<double> parse_timestamp(std::string_view s) {
  if (s.size() >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T') && s[13] == ':' && s[16] == ':') {
    const auto y = whole_number(s.substr(0, 4)), mo = whole_number(s.substr(5, 2)), d = whole_number(s.substr(8, 2)),
               h = whole_number(s.substr(11, 2)), mi = whole_number(s.substr(14, 2));
    std::string_view rest = s.substr(17);
    if (!rest.empty() && rest.back() == 'Z') rest.remove_suffix(1);
    const auto sec = parse_double(rest);
    if (!y || !mo || !d || !h || !mi || !sec) return std::nullopt;
    if (*mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo) || *h > 23 || *mi > 59 || *sec < 0 || *sec >= 61)
      return std::nullopt;
    return in_calendar(static_cast<double>(days_of(*y, *mo, *d)) * 86400.0 + static_cast<double>(*h * 3600 + *mi * 60) +
                       *sec);
  }
  const auto seconds = parse_double(s);
  return seconds ? in_calendar(*seconds) : std::nullopt;
}

struct RequestLogReader::State {
  std::ifstream in;
  std::optional<CsvReader> reader;
  LogLayout layout;
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
  auto header = s.reader->next();
  if (!header) fail("{}: empty CSV file (expected a header line)", path.string());
  s.layout = detect_log_layout(std::move(header->cells), path.string());
}

RequestLogReader::~RequestLogReader() = default;

std::optional<LoggedRequest> RequestLogReader::next() {
  State& s = *state_;
  std::string reason;
  std::vector<std::string_view> cells;
  while (auto record = s.reader->next()) {
    cells.assign(record->cells.begin(), record->cells.end());
    if (auto q = parse_log_record(s.layout, cells, record->line, reason)) return q;
    ++s.skipped;
    if (s.examples.size() < kSkippedExamples) s.examples.push_back({record->line, reason});
  }
  return std::nullopt;
}

const std::string& RequestLogReader::source() const { return state_->layout.source; }
const std::string& RequestLogReader::format() const { return state_->layout.format; }
long RequestLogReader::skipped() const { return state_->skipped; }
const std::vector<SkippedLine>& RequestLogReader::examples() const { return state_->examples; }
long RequestLogReader::lines_in_file() const { return state_->lines; }

void RequestLogReader::fail_nothing_read() const {
  fail_no_request(state_->layout.source, state_->skipped, state_->examples);
}

void fail_no_request(const std::string& source, long skipped, const std::vector<SkippedLine>& examples) {
  fail("{}: no request could be read ({} lines skipped{})", source, skipped,
       examples.empty() ? "" : fmt::format("; line {}: {}", examples[0].line, examples[0].reason));
}

void ArrivalBins::add(double t) {
  const auto index = static_cast<long>(std::floor(t / kMaxTimeGap_s));   // times are in 0 .. kMaxTimestamp_s
  const bool latest = !bins_.empty() && bins_.rbegin()->first == index;  // a log in time order: no search
  auto [it, fresh] = latest ? std::pair{std::prev(bins_.end()), false} : bins_.try_emplace(index, Bin{0, t, t});
  ++it->second.count;
  it->second.first = std::min(it->second.first, t);
  it->second.last = std::max(it->second.last, t);
}

void ArrivalBins::add(const ArrivalBins& other) {
  for (const auto& [index, bin] : other.bins_) {
    auto [it, fresh] = bins_.try_emplace(index, bin);
    if (fresh) continue;
    it->second.count += bin.count;
    it->second.first = std::min(it->second.first, bin.first);
    it->second.last = std::max(it->second.last, bin.last);
  }
}

std::pair<double, double> ArrivalBins::bulk() const {
  if (bins_.empty()) return {0, 0};
  std::pair<double, double> best{0, 0}, run{0, 0};
  long best_count = 0, run_count = 0;
  for (auto it = bins_.begin(); it != bins_.end(); ++it) {
    if (it != bins_.begin() && it->second.first - std::prev(it)->second.last <= kMaxTimeGap_s) {
      run.second = it->second.last, run_count += it->second.count;
    } else {
      run = {it->second.first, it->second.last}, run_count = it->second.count;
    }
    if (run_count > best_count) best = run, best_count = run_count;
  }
  return best;
}

std::optional<std::pair<double, double>> ArrivalBins::span_within(double from_s, double to_s) const {
  std::optional<std::pair<double, double>> span;
  for (const auto& [index, bin] : bins_) {
    if (bin.last < from_s || bin.first > to_s) continue;  // a bin lies wholly inside a bulk or outside it
    span = span ? std::pair{std::min(span->first, bin.first), std::max(span->second, bin.last)}
                : std::pair{bin.first, bin.last};
  }
  return span;
}

long ArrivalBins::count_within(double from_s, double to_s) const {
  long count = 0;
  for (const auto& [index, bin] : bins_)
    if (bin.last >= from_s && bin.first <= to_s) count += bin.count;
  return count;
}

std::string time_outlier_reason(double t, std::pair<double, double> bulk) {
  return fmt::format(
      "timestamp {:.0f} s lies more than {:.0f} days from the other requests ({:.0f} to {:.0f} s); "
      "--keep-time-outliers keeps it",
      t, kMaxTimeGap_s / 86400, bulk.first, bulk.second);
}

long drop_time_outliers(RequestLog& log) {
  if (!log.has_time()) return 0;
  ArrivalBins arrivals;
  for (const auto& q : log.requests) arrivals.add(q.time_s.value_or(0));
  const auto bulk = arrivals.bulk();
  std::vector<LoggedRequest> kept;
  for (auto& q : log.requests) {
    const double t = q.time_s.value_or(0);
    if (t >= bulk.first && t <= bulk.second) {
      kept.push_back(q);
      continue;
    }
    ++log.skipped;
    if (log.examples.size() < kSkippedExamples) log.examples.push_back({q.line, time_outlier_reason(t, bulk)});
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

}  // namespace llmco2::dataset
