// api/trace.cc - Session::score_trace and score_requests: a whole request log on one setup (totals, distribution,
// energy per token, timeline, prefill/decode shares), with the report folder and per-request CSV when asked for.
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "api/format.h"
#include "api/resolve.h"
#include "api/session_impl.h"
#include "core/error.h"
#include "core/output_manifest.h"
#include "trace/trace_report.h"

namespace llmco2::api {
namespace {

std::string setup_line(const ResolvedRequest& r) {
  return fmt::format("{} on {} x {} ({}), {}", r.model.id, r.request.gpus, r.gpu.id, r.request.engine,
                     r.request.precision.to_string());
}

RequestLog log_from_columns(const LogColumns& c) {
  const size_t n = c.prompt_tokens.size();
  if (c.gen_tokens.size() != n) fail("{}: {} prompt token counts but {} gen token counts", c.source, n, c.gen_tokens.size());
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

}  // namespace

Result Session::score_trace(const std::string& path, const Request& setup, const TraceOptions& o) const {
  if (!impl_->settings.allow_paths) fail("{}: reading a log from a path is not allowed here", path);
  return impl_->score(read_request_log(path, o.progress), setup, o);
}

Result Session::score_requests(const LogColumns& columns, const Request& setup, const TraceOptions& o) const {
  return impl_->score(log_from_columns(columns), setup, o);
}

Result Session::Impl::score(RequestLog log, const Request& setup, const TraceOptions& o) const {
  const bool paths = settings.allow_paths;
  Request smallest = setup;  // tokens come from the log; the setup is checked on the smallest request
  smallest.prompt_tokens = 1;
  smallest.gen_tokens = 1;
  const ResolvedRequest r = resolve_request(smallest, paths);
  const CarbonInputs carbon = resolve_carbon(setup, r.gpu, r.request.gpus, paths);
  const LoadedPredictor& p = predictor(setup.predictor);
  if (!o.keep_time_outliers) drop_time_outliers(log);
  llmco2::TraceOptions options;
  options.batch = r.request.batch;
  options.grid_ratio = o.grid_ratio;
  options.timeline_bin_s = o.bin_s;
  options.progress = o.progress;
  std::vector<RequestFigures> figures;
  const bool keep_figures = !o.report_dir.empty() || !o.by_request_csv.empty();
  const TraceAccount account =
      account_trace(log, *p.predictor, config_for_request(r.model, r.gpu, r.request), carbon,
                    p.bands ? &*p.bands : nullptr, options, keep_figures ? &figures : nullptr);
  const TraceContext context{log.source,       log.format,  setup_line(r),       p.predictor->name(),
                             carbon_inputs_lines(carbon), p.bands_note, options, carbon.scope.name(),
                             carbon.scope.node ? carbon.scope.node->id : ""};
  Result out;
  out.warnings = r.notes;
  {
    // The report folder's manifest, written last, lists the outputs of this run (the per-request CSV too).
    std::optional<RunManifest> manifest;
    if (!o.report_dir.empty()) {
      manifest.emplace(manifest_in_folder(o.report_dir));
      const std::string warning = write_trace_report(account, figures, context, o.report_dir);
      if (!warning.empty()) out.warnings.push_back(warning);
    }
    if (!o.by_request_csv.empty()) write_request_csv(figures, o.by_request_csv);
    if (manifest) manifest->commit();
  }
  out.json = trace_summary_json(account, context);
  out.text = trace_summary_text(account, context);
  if (!o.report_dir.empty()) out.text += "  report: " + (std::filesystem::path(o.report_dir) / "report.md").string() + "\n";
  return out;
}

}  // namespace llmco2::api
