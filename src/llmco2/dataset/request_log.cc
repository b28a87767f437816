// dataset/request_log.cc - reading request logs, skipping and counting bad lines.
#include "dataset/request_log.h"

#include <cmath>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
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

Columns detect(const CsvTable& t) {
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

std::optional<double> parse_timestamp(std::string_view s) {
  if (s.size() >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T') && s[13] == ':' && s[16] == ':') {
    const auto y = parse_long(s.substr(0, 4)), mo = parse_long(s.substr(5, 2)), d = parse_long(s.substr(8, 2)),
               h = parse_long(s.substr(11, 2)), mi = parse_long(s.substr(14, 2));
    std::string_view rest = s.substr(17);
    if (!rest.empty() && rest.back() == 'Z') rest.remove_suffix(1);
    const auto sec = parse_double(rest);
    if (!y || !mo || !d || !h || !mi || !sec) return std::nullopt;
    if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *sec < 0 || *sec >= 61) return std::nullopt;
    return static_cast<double>(days_from_civil(*y, *mo, *d)) * 86400.0 + static_cast<double>(*h * 3600 + *mi * 60) +
           *sec;
  }
  const auto seconds = parse_double(s);
  return seconds && *seconds >= 0 ? seconds : std::nullopt;
}

RequestLog read_request_log(const std::filesystem::path& path, bool progress) {
  const CsvTable t = read_csv_file(path);
  const Columns c = detect(t);
  RequestLog log;
  log.source = t.source;
  log.format = c.format;
  log.requests.reserve(t.records.size());
  Progress bar("reading " + path.filename().string(), static_cast<long>(t.records.size()),
               progress && t.records.size() > 100000);
  std::string reason;
  for (size_t i = 0; i < t.records.size(); ++i) {
    if (auto q = parse_record(t, t.records[i], c, reason)) {
      log.requests.push_back(*q);
    } else {
      ++log.skipped;
      if (log.examples.size() < kExamples) log.examples.push_back({t.records[i].line, reason});
    }
    bar.update(static_cast<long>(i));
  }
  bar.finish();
  if (log.requests.empty())
    fail("{}: no request could be read ({} lines skipped{})", log.source, log.skipped,
         log.examples.empty() ? "" : fmt::format("; line {}: {}", log.examples[0].line, log.examples[0].reason));
  return log;
}

}  // namespace llmco2
