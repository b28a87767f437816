// cli/cmd_trace.cc - `llmco2 trace FILE`: the energy and carbon of a whole request log (Azure trace or dataset format)
// on one setup: totals, per-request distribution, energy per token, timeline, prefill/decode shares, plots.
#include <iostream>

#include <fmt/format.h>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/predictor_flags.h"
#include "cli/request_flags.h"
#include "core/output_manifest.h"
#include "trace/trace_report.h"

namespace llmco2::cli {
namespace {

struct TraceFlags {
  std::string file, out, by_request, format = "table";
  double grid_ratio = 1.1, bin_s = 0;
  bool quiet = false, keep_time_outliers = false;
};

std::string setup_line(const ResolvedRequest& r) {
  return fmt::format("{} on {} x {} ({}), {}", r.model.id, r.request.gpus, r.gpu.id, r.request.engine,
                     r.request.precision.to_string());
}

void run_trace(const TraceFlags& t, RequestFlags request_flags, const PredictorFlags& pf, const CarbonFlags& cf) {
  request_flags.prompt = 1;  // tokens come from the log; the setup is checked on the smallest request
  request_flags.gen = 1;
  const ResolvedRequest r = resolve_request(request_flags);
  const CarbonInputs carbon = resolve_carbon(cf, r.gpu, r.request.gpus);
  const LoadedPredictor p = load_predictor_from_flags(pf);
  RequestLog log = read_request_log(t.file, !t.quiet);
  if (!t.keep_time_outliers) drop_time_outliers(log);
  TraceOptions options;
  options.batch = r.request.batch;
  options.grid_ratio = t.grid_ratio;
  options.timeline_bin_s = t.bin_s;
  options.progress = !t.quiet;
  std::vector<RequestFigures> figures;
  const TraceAccount account =
      account_trace(log, *p.predictor, config_for_request(r.model, r.gpu, r.request), carbon, p.bands ? &*p.bands : nullptr, options, &figures);
  TraceContext context{log.source, log.format, setup_line(r), p.predictor->name(), carbon_inputs_lines(carbon),
                       p.bands_note, options, carbon.scope.name(),
                       carbon.scope.node ? carbon.scope.node->id : ""};
  const std::filesystem::path out =
      t.out.empty() ? std::filesystem::path("llmco2-trace-" + std::filesystem::path(t.file).stem().string())
                    : std::filesystem::path(t.out);
  RunManifest manifest(manifest_in_folder(out));  // written last: lists the outputs of this run
  const std::string warning = write_trace_report(account, figures, context, out);
  if (!t.by_request.empty()) write_request_csv(figures, t.by_request);
  manifest.commit();
  if (t.format == "json") {
    std::cout << trace_summary_json(account, context).dump(2) << "\n";
  } else {
    std::cout << trace_summary_text(account, context) << "  report: " << (out / "report.md").string() << "\n";
  }
  if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
}

}  // namespace

void add_trace_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "trace", "energy and CO2 of a whole request log (Azure trace or dataset CSV) on one GPU setup, with plots");
  auto t = std::make_shared<TraceFlags>();
  auto request_flags = std::make_shared<RequestFlags>();
  auto predictor_flags = std::make_shared<PredictorFlags>();
  auto carbon_flags = std::make_shared<CarbonFlags>();
  command->add_option("file", t->file, "request log: TIMESTAMP,ContextTokens,GeneratedTokens or a dataset CSV")
      ->required();
  add_request_flags(*command, *request_flags, false);
  add_predictor_flags(*command, *predictor_flags);
  add_carbon_flags(*command, *carbon_flags);
  command->add_option("--out", t->out, "report folder (default: llmco2-trace-<file name>)");
  command->add_option("--by-request", t->by_request, "write every request's figures to this CSV");
  command->add_option("--grid", t->grid_ratio,
                      "token grid ratio of the shape table (1: predict every distinct shape exactly)")
      ->capture_default_str();
  command->add_option("--bin", t->bin_s, "timeline bin in seconds (default: a minute, an hour for logs over 6 h)");
  command->add_option("--format", t->format, "table or json")->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->add_flag("--quiet", t->quiet, "no progress lines");
  command->add_flag("--keep-time-outliers", t->keep_time_outliers,
                    "keep requests dated more than 30 days away from the rest of the log (dropped and named by default)");
  command->callback([=] { run_trace(*t, *request_flags, *predictor_flags, *carbon_flags); });
}

}  // namespace llmco2::cli
