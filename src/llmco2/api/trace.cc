// api/trace.cc - Session::score_trace and score_requests: a whole request log on one setup (totals, distribution,
// energy per token, timeline, prefill/decode shares), with the report folder and per-request CSV when asked for.
#include <cmath>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "api/evidence.h"
#include "api/format.h"
#include "api/resolve.h"
#include "api/session_impl.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_manifest.h"
#include "dataset/log_scanner.h"
#include "trace/trace_report.h"
#include "trace/trace_stream.h"

namespace llmco2::api {
namespace {

std::string setup_line(const ResolvedRequest& r) {
  const std::string spec = r.speculation.active()
                               ? fmt::format(", {} speculation k={}", r.speculation.method, r.speculation.draft_tokens)
                               : "";
  return fmt::format("{} on {}{} x {} ({}{}), {}", r.model.id, r.request.gpus, stages_words(r.request), r.gpu.id,
                     r.request.engine, spec, r.request.precision.to_string());
}

RequestLog log_from_columns(const LogColumns& c) {
  const size_t n = c.prompt_tokens.size();
  if (c.gen_tokens.size() != n)
    fail("{}: {} prompt token counts but {} gen token counts", c.source, n, c.gen_tokens.size());
  if (!c.time_s.empty() && c.time_s.size() != n)
    fail("{}: {} requests but {} timestamps (give one per request, or none)", c.source, n, c.time_s.size());
  RequestLog log;
  log.source = c.source;
  log.format = c.time_s.empty() ? "dataset" : "azure";
  log.requests.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    LoggedRequest r;
    r.prompt_tokens = c.prompt_tokens[i], r.gen_tokens = c.gen_tokens[i], r.line = static_cast<long>(i + 1);
    if (r.prompt_tokens < 1 || r.gen_tokens < 1)
      fail("{}: request {}: expected at least 1 prompt and 1 generated token, got {} and {}", c.source, i,
           r.prompt_tokens, r.gen_tokens);
    if (!c.time_s.empty()) {
      if (!std::isfinite(c.time_s[i]) || c.time_s[i] < 0 || c.time_s[i] > kMaxTimestamp_s)
        fail("{}: request {}: expected a time in seconds since 1970, got {}", c.source, i, c.time_s[i]);
      r.time_s = c.time_s[i];
    }
    log.requests.push_back(r);
  }
  if (n == 0) fail("{}: no request to score", c.source);
  return log;
}

// The setup of a log, resolved once: model, GPU, carbon inputs, predictor and the accountant's options.
struct ScoringSetup {
  ResolvedRequest resolved;
  const LoadedPredictor* predictor = nullptr;
  trace::TraceOptions options;
};

// (Session::Impl is Session's private type: deduced here, not named.)
template <typename SessionImpl>
ScoringSetup scoring_setup(const SessionImpl& impl, const Request& setup, const TraceOptions& o) {
  ScoringSetup s{resolve_log_setup(setup, impl.settings.allow_paths), nullptr, {}};
  s.predictor = &impl.predictor(setup.predictor);
  s.options.batch = s.resolved.request.batch;
  s.options.grid_ratio = o.grid_ratio;
  s.options.timeline_bin_s = o.bin_s;
  s.options.progress = o.progress;
  return s;
}

// The summary, and the report folder when asked for; `account_and_write_csv` accounts the log and writes the
// per-request CSV when asked for, inside the report's manifest (written last).
Result scored(const ScoringSetup& s, const TraceOptions& o, const std::string& source, const std::string& format,
              const std::function<TraceAccount()>& account_and_write_csv) {
  const LoadedPredictor& p = *s.predictor;
  Result out;
  out.warnings = s.resolved.notes;
  std::optional<RunManifest> manifest;
  if (!o.report_dir.empty()) manifest.emplace(manifest_in_folder(o.report_dir));
  TraceAccount account = account_and_write_csv();
  // The log's evidence: its setup at its batch and its requests' mean context; the totals' intervals are its kind's.
  const RequestEvidence evidence = request_evidence(
      p, s.resolved,
      account.requests > 0
          ? static_cast<double>(account.prompt_tokens + account.gen_tokens) / static_cast<double>(account.requests)
          : 0.0);
  set_intervals(account, evidence.bands ? &*evidence.bands : nullptr);
  const TraceContext context{source,
                             format,
                             setup_line(s.resolved),
                             p.predictor->name(),
                             carbon_inputs_lines(s.resolved.carbon),
                             evidence.interval_note,
                             s.options,
                             s.resolved.carbon.scope.name(),
                             s.resolved.carbon.scope.node ? s.resolved.carbon.scope.node->id : "",
                             carbon_inputs_json(s.resolved.carbon)};
  if (manifest) {
    const std::string warning = write_trace_report(account, context, o.report_dir);
    if (!warning.empty()) out.warnings.push_back(warning);
    manifest->commit();
  }
  out.json = trace_summary_json(account, context);
  out.json["speculation"] = speculation_json(s.resolved.speculation);
  out.json["evidence"] = evidence_json(evidence);
  out.text = trace_summary_text(account, context) + evidence_label_line(evidence);
  if (!o.report_dir.empty())
    out.text += "  report: " + (std::filesystem::path(o.report_dir) / "report.md").string() + "\n";
  return out;
}

}  // namespace

Result Session::score_trace(const std::string& path, const Request& setup, const TraceOptions& o) const {
  if (!impl_->settings.allow_paths) fail("{}: reading a log from a path is not allowed here", path);
  const ScoringSetup s = scoring_setup(*impl_, setup, o);
  TraceFileOptions file_options;
  file_options.threads = o.threads;
  file_options.keep_time_outliers = o.keep_time_outliers;
  file_options.requests_csv = o.by_request_csv;
  refuse_output_over_input(o.by_request_csv, "--by-request", path, "request log");
  const std::string format = LogScanner(path).layout().format;  // an unreadable log fails before any output
  return scored(s, o, path, format, [&] {
    return account_trace_file(path, *s.predictor->predictor, input_for(s.resolved), s.resolved.carbon, s.options,
                              file_options);
  });
}

Result Session::score_requests(const LogColumns& columns, const Request& setup, const TraceOptions& o) const {
  return impl_->score(log_from_columns(columns), setup, o);
}

Result Session::Impl::score(RequestLog log, const Request& setup, const TraceOptions& o) const {
  const ScoringSetup s = scoring_setup(*this, setup, o);
  if (!o.keep_time_outliers) drop_time_outliers(log);
  return scored(s, o, log.source, log.format, [&] {
    std::vector<RequestFigures> figures;
    TraceAccount account = account_trace(log, *s.predictor->predictor, input_for(s.resolved), s.resolved.carbon,
                                         s.options, o.by_request_csv.empty() ? nullptr : &figures);
    if (!o.by_request_csv.empty()) write_request_csv(figures, o.by_request_csv);
    return account;
  });
}

}  // namespace llmco2::api
