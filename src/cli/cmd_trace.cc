// cli/cmd_trace.cc - `llmco2 trace FILE`: the energy and carbon of a whole request log (Azure trace or dataset format)
// on one setup: totals, per-request distribution, energy per token, timeline, prefill/decode shares, plots.
#include <iostream>

#include <filesystem>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/predictor_flags.h"
#include "cli/request_flags.h"

namespace llmco2::cli {
namespace {

struct TraceFlags {
  std::string file, out, by_request, format = "table";
  double grid_ratio = 1.1, bin_s = 0;
  int threads = 0;
  bool quiet = false, keep_time_outliers = false;
};

void run_trace(const TraceFlags& t, const api::Request& setup, const api::Settings& settings) {
  api::TraceOptions options;
  options.report_dir = t.out;  // files only when asked for
  options.by_request_csv = t.by_request;
  options.grid_ratio = t.grid_ratio;
  options.bin_s = t.bin_s;
  options.progress = !t.quiet;
  options.keep_time_outliers = t.keep_time_outliers;
  options.threads = t.threads;
  const api::Result result = api::Session(settings).score_trace(t.file, setup, options);
  std::cout << (t.format == "json" ? result.json.dump(2) + "\n" : result.text);
  print_warnings(result.warnings);
}

}  // namespace

void add_trace_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "trace", "energy and CO2 of a whole request log (Azure trace or dataset CSV) on one GPU setup, with plots");
  auto t = std::make_shared<TraceFlags>();
  auto request = std::make_shared<api::Request>();
  auto settings = std::make_shared<api::Settings>();
  command->add_option("file", t->file, "request log: TIMESTAMP,ContextTokens,GeneratedTokens or a dataset CSV")
      ->required();
  add_request_flags(*command, *request, false);
  add_predictor_flags(*command, *request, *settings);
  add_carbon_flags(*command, *request);
  command->add_option("--plot,--out", t->out,
                      "folder for the report (report.md, plots and their data); none when not "
                      "given (--out: its former name)");
  command->add_option("--by-request", t->by_request, "write every request's figures to this CSV");
  command
      ->add_option("--grid", t->grid_ratio,
                   "token grid ratio of the shape table (1: predict every distinct shape exactly)")
      ->capture_default_str();
  command->add_option("--bin", t->bin_s, "timeline bin in seconds (default: a minute, an hour for logs over 6 h)");
  command->add_option("--format", t->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command
      ->add_option("--threads", t->threads,
                   "workers reading the log (0: every core; at most one per MiB of log; the figures do not "
                   "depend on it)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  command->add_flag("--quiet", t->quiet, "no progress lines");
  command->add_flag(
      "--keep-time-outliers", t->keep_time_outliers,
      "keep requests dated more than 30 days away from the rest of the log (dropped and named by default)");
  command->callback([=] { run_trace(*t, *request, *settings); });
}

}  // namespace llmco2::cli
