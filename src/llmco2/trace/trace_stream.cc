// trace/trace_stream.cc - the survey pass, the per-shape memo and the accounting pass over a log file.
#include "trace/trace_stream.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/atomic_file.h"
#include "core/error.h"
#include "dataset/log_scanner.h"
#include "trace/shape_map.h"
#include "trace/trace_report.h"

namespace llmco2::trace {
namespace {

using Span = std::pair<double, double>;

// Token counts beyond any setup's reach share one key per side (they are only ever counted as too long).
constexpr long kKeyTokens = std::numeric_limits<int32_t>::max();

uint64_t shape_key(long prompt, long gen) {
  return (static_cast<uint64_t>(std::min(prompt, kKeyTokens)) << 32) | static_cast<uint64_t>(std::min(gen, kKeyTokens));
}
Shape key_shape(uint64_t key) { return {static_cast<long>(key >> 32), static_cast<long>(key & 0xffffffffu)}; }

bool outside(const std::optional<Span>& bulk, const LoggedRequest& q) {
  return bulk && q.time_s && (*q.time_s < bulk->first || *q.time_s > bulk->second);
}

// Keeps the first `limit` examples of one worker (its lines come in increasing order).
void note(std::vector<SkippedLine>& examples, size_t limit, long line, const std::string& reason) {
  if (examples.size() < limit) examples.push_back({line, reason});
}

// The first examples of all workers, in file order, appended to `out` while it holds fewer than `limit`.
template <typename Sink>
void merge_examples(std::vector<SkippedLine>& out, const std::vector<Sink>& sinks,
                    std::vector<SkippedLine> Sink::*member, size_t limit) {
  std::vector<SkippedLine> all;
  for (const auto& s : sinks) all.insert(all.end(), (s.*member).begin(), (s.*member).end());
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.line < y.line; });
  for (const auto& e : all)
    if (out.size() < limit) out.push_back(e);
}

// Pass 1: lines skipped, arrivals, and the distinct shapes with their counts (inside `bulk` when given).
struct SurveySink final : LogRecordSink {
  std::optional<Span> bulk;
  long max_total_tokens = 0;  // > 0: arrivals of requests this long at most are noted apart (the scored span)
  long requests = 0, skipped_lines = 0, outliers = 0;
  std::vector<SkippedLine> examples, outlier_examples;
  ArrivalBins arrivals, scored_arrivals;
  ShapeMap shapes;
  std::vector<std::pair<long, Shape>> too_long;  // the first requests longer than max_total_tokens: line, shape

  void request(const LoggedRequest& q) override {
    if (q.time_s) arrivals.add(*q.time_s);
    if (outside(bulk, q)) {
      ++outliers;
      if (outlier_examples.size() < kSkippedExamples)  // the reason is formatted only for those named
        note(outlier_examples, kSkippedExamples, q.line, time_outlier_reason(*q.time_s, *bulk));
      return;
    }
    ++requests;
    ++shapes[shape_key(q.prompt_tokens, q.gen_tokens)];
    const bool served = q.prompt_tokens <= max_total_tokens - q.gen_tokens;
    if (q.time_s && served) scored_arrivals.add(*q.time_s);
    if (!served && max_total_tokens > 0 && too_long.size() < kTooLongExamples)
      too_long.push_back({q.line, {q.prompt_tokens, q.gen_tokens}});
  }
  void skipped(long line, const std::string& reason) override {
    ++skipped_lines;
    note(examples, kSkippedExamples, line, reason);
  }
};

struct Survey {
  bool general = false;  // the log has quoted fields: read with the general CSV reader, on one thread
  long requests = 0, skipped_lines = 0, outliers = 0;
  std::vector<SkippedLine> examples, outlier_examples;
  ArrivalBins arrivals, scored_arrivals;
  std::map<uint64_t, long> shapes;
  std::vector<std::pair<long, Shape>> too_long;  // the first ones, in file order
};

Survey merge(const std::vector<SurveySink>& sinks, bool general) {
  Survey s;
  s.general = general;
  for (const auto& k : sinks) {
    s.requests += k.requests, s.skipped_lines += k.skipped_lines, s.outliers += k.outliers;
    s.arrivals.add(k.arrivals);
    s.scored_arrivals.add(k.scored_arrivals);
    k.shapes.for_each([&](uint64_t key, long count) { s.shapes[key] += count; });
  }
  merge_examples(s.examples, sinks, &SurveySink::examples, kSkippedExamples);
  merge_examples(s.outlier_examples, sinks, &SurveySink::outlier_examples, kSkippedExamples);
  for (const auto& k : sinks) s.too_long.insert(s.too_long.end(), k.too_long.begin(), k.too_long.end());
  std::sort(s.too_long.begin(), s.too_long.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return s;
}

std::vector<ShapeCount> shape_counts(const Survey& s) {
  std::vector<ShapeCount> out;
  for (const auto& [key, count] : s.shapes) out.push_back({key_shape(key), count});
  return out;
}

// The account of requests counted per shape, on `table` (the setup's, not yet prepared).
TraceAccount account_counts(ShapeTable& table, const std::vector<ShapeCount>& shapes, const CarbonInputs& carbon,
                            const TraceOptions& o) {
  std::vector<Shape> all;
  for (const auto& s : shapes) all.push_back(s.shape);
  table.prepare(all, o.progress);
  TraceAccount a;
  if (!carbon.embodied.known()) a.embodied_unknown = carbon.embodied.unknown_label();
  TraceTotals totals;
  for (const auto& s : shapes) {
    if (!table.valid(s.shape)) {
      a.skipped_shapes += s.count;
      continue;
    }
    LoggedRequest q;
    q.prompt_tokens = s.shape.prompt_tokens, q.gen_tokens = s.shape.gen_tokens;
    totals.add(figures_of(q, table.at(s.shape), carbon, o.batch), s.count);
  }
  a.predictions_made = table.predictions_made();
  totals.finish(a, o.batch, carbon.gpus);
  return a;
}

// A log without timestamps and without a per-request CSV needs no second pass: the survey's shape counts make its
// account, on the table the survey was sized with.
TraceAccount account_survey(const Survey& s, ShapeTable& table, const PredictorInput& base, const CarbonInputs& carbon,
                            const TraceOptions& o) {
  TraceAccount a = account_counts(table, shape_counts(s), carbon, o);
  a.skipped_lines = s.skipped_lines;
  a.skipped_examples = s.examples;
  for (const auto& [line, shape] : s.too_long)
    if (a.skipped_examples.size() < kTooLongExamples)
      a.skipped_examples.push_back({line, too_long_reason(shape, base, table.max_total_tokens())});
  return a;
}

// Visits the log with one sink per worker (the general reader when a quoted field turns up, or `general`).
template <typename Sink>
bool visit(const LogScanner& scanner, std::vector<Sink>& sinks, bool general, bool progress,
           const std::function<void(size_t)>& after_round) {
  const Sink fresh = sinks.front();  // a clean copy: a fast scan that stops at a quote leaves records behind
  if (!general) {
    std::vector<LogRecordSink*> pointers;
    for (auto& s : sinks) pointers.push_back(&s);
    if (scanner.scan(pointers, after_round, progress)) return false;
  }
  sinks.assign(1, fresh);
  scanner.scan_general(sinks.front());
  after_round(1);
  return true;
}

Survey survey(const LogScanner& scanner, int workers, const std::optional<Span>& bulk, long max_total_tokens,
              bool progress) {
  SurveySink prototype;
  prototype.bulk = bulk;
  prototype.max_total_tokens = max_total_tokens;
  std::vector<SurveySink> sinks(static_cast<size_t>(workers), prototype);
  const bool general = visit(scanner, sinks, false, progress, [](size_t) {});
  Survey s = merge(sinks, general);
  if (s.requests + s.outliers == 0) fail_no_request(scanner.layout().source, s.skipped_lines, s.examples);
  return s;
}

// The survey of the requests to score: time outliers dropped (a second survey inside the bulk when there are any).
Survey survey_kept(const LogScanner& scanner, int workers, bool keep_time_outliers, long max_total_tokens,
                   bool progress, std::optional<Span>& bulk) {
  Survey s = survey(scanner, workers, std::nullopt, max_total_tokens, progress);
  if (keep_time_outliers || s.arrivals.empty()) return s;
  bulk = s.arrivals.bulk();
  if (s.arrivals.count_within(bulk->first, bulk->second) == s.requests) return s;
  return survey(scanner, s.general ? 1 : workers, bulk, max_total_tokens, progress);
}

// Each distinct shape's figures, computed once; too long: no figures.
struct ShapeMemo {
  static constexpr long kTooLong = -1;
  std::string source;
  ShapeMap index;  // into figures, or kTooLong
  std::vector<RequestFigures> figures;
  std::vector<BinSums> one_request;   // each shape's figures as one request of a timeline bin (sums ready to add)
  std::vector<std::string> csv_tail;  // each shape's part of its per-request CSV lines (when they are written)

  const RequestFigures* find(const LoggedRequest& q) const {
    const long* i = index.find(shape_key(q.prompt_tokens, q.gen_tokens));
    if (!i) fail("{}: line {}: the log changed while it was read", source, q.line);
    return *i == kTooLong ? nullptr : &figures[static_cast<size_t>(*i)];
  }
};

ShapeMemo memo_of(const std::map<uint64_t, long>& shapes, const ShapeTable& table, const CarbonInputs& carbon,
                  long batch, std::string source, bool csv) {
  ShapeMemo memo;
  memo.source = std::move(source);
  for (const auto& [key, count] : shapes) {
    const Shape s = key_shape(key);
    if (!table.valid(s)) {
      memo.index[key] = ShapeMemo::kTooLong;
      continue;
    }
    LoggedRequest q;
    q.prompt_tokens = s.prompt_tokens, q.gen_tokens = s.gen_tokens;
    memo.index[key] = static_cast<long>(memo.figures.size());
    memo.figures.push_back(figures_of(q, table.at(s), carbon, batch));
    memo.one_request.emplace_back().add(memo.figures.back());
    if (csv) memo.csv_tail.push_back(request_csv_tail(memo.figures.back()));
  }
  return memo;
}

// Pass 2: each request's figures from the memo, counted per shape, binned, and written to the per-request CSV.
struct AccountSink final : LogRecordSink {
  const ShapeMemo* memo = nullptr;
  const PredictorInput* base = nullptr;
  std::optional<Span> bulk;
  long max_total_tokens = 0;
  double bin_s = 0;  // 0: no timeline
  bool csv = false;
  std::ostream* flush_to = nullptr;  // the general reader's one sink writes its CSV as it goes

  std::vector<long> counts;
  long outliers = 0, too_long = 0;
  std::vector<SkippedLine> outlier_examples, too_long_examples;
  std::unordered_map<long, BinSums> hours, bins;
  std::string csv_text;
  long last_hour = -1, last_bin = -1;  // the bins of the previous request (a log comes in time order, mostly)
  BinSums *last_hour_sums = nullptr, *last_bin_sums = nullptr;

  void request(const LoggedRequest& q) override {
    if (outside(bulk, q)) {
      ++outliers;
      if (outlier_examples.size() < kSkippedExamples)  // the reason is formatted only for those named
        note(outlier_examples, kSkippedExamples, q.line, time_outlier_reason(*q.time_s, *bulk));
      return;
    }
    const RequestFigures* f = memo->find(q);
    if (!f) {
      ++too_long;
      if (too_long_examples.size() < kTooLongExamples)
        note(too_long_examples, kTooLongExamples, q.line,
             too_long_reason({q.prompt_tokens, q.gen_tokens}, *base, max_total_tokens));
      return;
    }
    const auto shape = static_cast<size_t>(f - memo->figures.data());
    ++counts[shape];
    if (bin_s > 0 && q.time_s) {
      bin_of(bins, timeline_bin_index(*q.time_s, bin_s), last_bin, last_bin_sums).add(memo->one_request[shape]);
      if (bin_s != kHour_s)  // else the hourly table is the timeline
        bin_of(hours, timeline_bin_index(*q.time_s, kHour_s), last_hour, last_hour_sums).add(memo->one_request[shape]);
    }
    if (csv) write_line(q, shape);
  }
  static BinSums& bin_of(std::unordered_map<long, BinSums>& map, long index, long& last, BinSums*& last_sums) {
    if (!last_sums || index != last) last = index, last_sums = &map[index];  // map nodes do not move
    return *last_sums;
  }
  void skipped(long, const std::string&) override {}  // counted by the survey

  void write_line(const LoggedRequest& q, size_t shape) {
    append_request_csv_head(csv_text, q.line, q.time_s);
    csv_text += memo->csv_tail[shape];
    if (flush_to && csv_text.size() > kLogBlockBytes) *flush_to << csv_text, csv_text.clear();
  }
};

std::vector<TimelineBin> merged_timeline(const std::vector<AccountSink>& sinks,
                                         std::unordered_map<long, BinSums> AccountSink::*member, double bin_s) {
  std::map<long, BinSums> all;
  for (const auto& s : sinks)
    for (const auto& [index, bin] : s.*member) all[index].add(bin);
  return expand_timeline(all, bin_s);
}

// The account of what the sinks counted.
void finish_account(TraceAccount& a, const std::vector<AccountSink>& sinks, const ShapeMemo& memo, const Survey& s,
                    long batch, int gpus) {
  TraceTotals totals;
  for (size_t i = 0; i < memo.figures.size(); ++i) {
    long count = 0;
    for (const auto& k : sinks) count += k.counts[i];
    if (count > 0) totals.add(memo.figures[i], count);
  }
  totals.finish(a, batch, gpus);
  long outliers = 0;
  for (const auto& k : sinks) outliers += k.outliers, a.skipped_shapes += k.too_long;
  a.skipped_lines = s.skipped_lines + outliers;
  a.skipped_examples = s.examples;
  merge_examples(a.skipped_examples, sinks, &AccountSink::outlier_examples, kSkippedExamples);
  merge_examples(a.skipped_examples, sinks, &AccountSink::too_long_examples, kTooLongExamples);
}

// Pass 2 with a copy of `prototype` per worker; the per-request CSV (when csv_path is set) written in file order.
std::vector<AccountSink> accounting_pass(const LogScanner& scanner, const Survey& s, const AccountSink& prototype,
                                         int workers, const std::filesystem::path& csv_path, bool progress) {
  std::vector<AccountSink> sinks(s.general ? 1 : static_cast<size_t>(workers), prototype);
  std::optional<AtomicFile> csv;
  if (!csv_path.empty()) {
    csv.emplace(csv_path);
    csv->stream() << kRequestCsvHeader;
    if (s.general) sinks.front().flush_to = &csv->stream();
  }
  const auto write_round = [&](size_t filled) {
    for (size_t k = 0; k < filled && csv; ++k) csv->stream() << sinks[k].csv_text, sinks[k].csv_text.clear();
  };
  if (visit(scanner, sinks, s.general, progress, write_round) != s.general)
    fail("{}: the log changed while it was read (a quoted field appeared)", scanner.layout().source);
  if (csv) csv->commit();
  return sinks;
}

}  // namespace

TraceAccount account_trace_file(const std::filesystem::path& path, const Predictor& predictor,
                                const PredictorInput& base, const CarbonInputs& carbon, const TraceOptions& o,
                                const TraceFileOptions& fo) {
  const LogScanner scanner(path);
  const int workers = scanner.workers(fo.threads);
  ShapeTable table(predictor, trace_setup(base, o), o.grid_ratio);
  std::optional<Span> bulk;
  const Survey s = survey_kept(scanner, workers, fo.keep_time_outliers, table.max_total_tokens(), o.progress, bulk);
  if (!scanner.layout().time && fo.requests_csv.empty()) return account_survey(s, table, base, carbon, o);
  std::vector<Shape> shapes;
  for (const auto& [key, count] : s.shapes) shapes.push_back(key_shape(key));
  table.prepare(shapes, o.progress);
  const ShapeMemo memo = memo_of(s.shapes, table, carbon, o.batch, path.string(), !fo.requests_csv.empty());

  const auto scored = s.scored_arrivals.span_within(bulk ? bulk->first : -1.0, bulk ? bulk->second : kMaxTimestamp_s);
  AccountSink prototype;
  prototype.memo = &memo, prototype.base = &base, prototype.bulk = bulk;
  prototype.max_total_tokens = table.max_total_tokens();
  prototype.bin_s = scored ? timeline_bin_width(scored->first, scored->second, o) : 0;
  prototype.csv = !fo.requests_csv.empty();
  prototype.counts.assign(memo.figures.size(), 0);
  const std::vector<AccountSink> sinks = accounting_pass(scanner, s, prototype, workers, fo.requests_csv, o.progress);

  TraceAccount a;
  if (!carbon.embodied.known()) a.embodied_unknown = carbon.embodied.unknown_label();
  a.predictions_made = table.predictions_made();
  finish_account(a, sinks, memo, s, o.batch, carbon.gpus);
  if (prototype.bin_s > 0 && a.requests > 0) {
    a.timeline_bin_s = prototype.bin_s;
    a.timeline = merged_timeline(sinks, &AccountSink::bins, a.timeline_bin_s);
    a.hourly = a.timeline_bin_s == kHour_s ? a.timeline : merged_timeline(sinks, &AccountSink::hours, kHour_s);
  }
  return a;
}

double mean_context_tokens(const std::vector<ShapeCount>& shapes) {
  double tokens = 0, requests = 0;
  for (const ShapeCount& s : shapes) {
    tokens += static_cast<double>(s.count) * static_cast<double>(s.shape.prompt_tokens + s.shape.gen_tokens);
    requests += static_cast<double>(s.count);
  }
  return requests > 0 ? tokens / requests : 0.0;
}

LogShapes survey_log_shapes(const std::filesystem::path& path, const TraceFileOptions& fo, bool progress) {
  const LogScanner scanner(path);
  std::optional<Span> bulk;
  const Survey s = survey_kept(scanner, scanner.workers(fo.threads), fo.keep_time_outliers, 0, progress, bulk);
  LogShapes out;
  out.file = {scanner.layout().source, scanner.layout().format, s.outliers, s.outlier_examples};
  out.shapes = shape_counts(s);
  out.requests = s.requests;
  out.skipped_lines = s.skipped_lines + s.outliers;
  out.skipped_examples = s.examples;
  out.file.outlier_examples.clear();  // those named among the skipped lines, as drop_time_outliers names them
  for (const auto& e : s.outlier_examples)
    if (out.skipped_examples.size() < kSkippedExamples)
      out.skipped_examples.push_back(e), out.file.outlier_examples.push_back(e);
  return out;
}

TraceAccount account_shapes(const std::vector<ShapeCount>& shapes, const Predictor& predictor,
                            const PredictorInput& base, const CarbonInputs& carbon, const TraceOptions& o) {
  ShapeTable table(predictor, trace_setup(base, o), o.grid_ratio);
  return account_counts(table, shapes, carbon, o);
}

}  // namespace llmco2::trace
