// cli/cmd_calibrate.cc - `llmco2 calibrate`: binds the flags to research::calibrate (the simulator's parameters with
// leave-one-source-out scores) or, with --kernels, research::fit_kernels (its kernel-time parameters), and prints
// what was written.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {
namespace {

struct CalibrateFlags {
  research::CalibrateOptions options;
  research::KernelFitOptions kernels;
  bool fit_kernels = false;
  research::SiteCalibrateOptions site;
};

// --data for the global fits: one folder ("" for data/measured). Several entries are for --site only.
std::string data_folder(const std::vector<std::string>& data) {
  if (data.size() > 1)
    throw Error(
        fmt::format("--data: one folder of dataset CSVs, got {} entries (several files are for --site)", data.size()));
  return data.empty() ? "" : data.front();
}

void print_warnings(const std::vector<std::string>& warnings, const char* command) {
  for (const auto& warning : warnings) std::cerr << command << ": " << warning << "\n";
}

void run(CalibrateFlags f) {
  if (!f.site.name.empty()) {
    const research::SiteCalibrateSummary s = research::calibrate_site(f.site);
    std::cout << s.report;
    for (const auto& skipped : s.skipped) std::cerr << "calibrate --site: skipped " << skipped << "\n";
    std::cerr << fmt::format("calibrate --site: wrote {} ({} of {} rows fitted)\n", s.written, s.simulatable, s.rows);
    return;
  }
  f.options.data_dir = data_folder(f.site.data);
  if (f.fit_kernels) {
    research::KernelFitOptions kernels = f.kernels;
    kernels.data_dir = f.options.data_dir;  // --data: the MLPerf AMD runs that fit CDNA 3
    const research::KernelFitSummary s = research::fit_kernels(kernels);
    print_warnings(s.warnings, "calibrate --kernels");
    std::cerr << fmt::format("calibrate --kernels: wrote {} and {} in {:.0f} s\n", s.kernels_written, s.report_written,
                             s.seconds);
    return;
  }
  const research::CalibrateSummary s = research::calibrate(f.options);
  print_warnings(s.warnings, "calibrate");
  if (f.options.fit_only)
    std::cerr << fmt::format("calibrate --fit-only: wrote {}{} in {:.0f} s (no report: it needs the held-out fits)\n",
                             s.params_written, f.options.rows_out.empty() ? "" : " and " + f.options.rows_out,
                             s.seconds);
  else
    std::cerr << fmt::format("calibrate: wrote {} and {} in {:.0f} s\n", s.params_written, s.report_written, s.seconds);
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto* command = app.add_subcommand("calibrate", "fit the reference simulator on the imported measurements");
  auto f = std::make_shared<CalibrateFlags>();
  research::CalibrateOptions& o = f->options;
  command
      ->add_option("--data", f->site.data,
                   "folder of dataset CSVs (default: data/measured); with --site: the site's dataset CSVs or "
                   "folders, comma-separated")
      ->delimiter(',');
  command->add_option("--params-out", o.params_out, "fitted parameters (default: data/sim/params.json)");
  command->add_option("--report", o.report, "markdown report; plots go to <its folder>/calibration/")
      ->capture_default_str();
  command->add_option("--max-evaluations", o.max_evaluations, "objective evaluations per fit")
      ->check(CLI::Range(10, 1000000))
      ->capture_default_str();
  command->add_option("--rows-out", o.rows_out,
                      "also write a CSV of every simulatable row: measured, fitted and held-out predictions");
  command->add_flag("--fit-only", o.fit_only,
                    "fit on all sources only (no held-out fits, no report): quick, for studying the rows");
  command->add_option("--threads", o.threads, "parallel leave-one-source-out fits (default: all cores)");
  command->add_option("--site", f->site.name,
                      "instead: fit a site profile NAME on the site's own rows (--data FILES) -> site-NAME.json, "
                      "for predict --site (docs/calibration.md)");
  command->add_option("--site-out", f->site.out, "with --site: output (default: site-NAME.json)");
  command->add_option("--params", f->site.params,
                      "with --site: the global parameters it corrects (default: data/sim/params.json)");
  research::KernelFitOptions& k = f->kernels;
  command->add_flag("--kernels", f->fit_kernels,
                    "instead: fit the kernel-time parameters on Vidur's operator profiles and NVIDIA's AIConfigurator "
                    "kernel tables, and AMD CDNA 3's on the MLPerf AMD runs of --data -> data/sim/kernels.json");
  command->add_option("--vidur", k.vidur_dir, "with --kernels: Vidur profiles folder (default: data/measured/vidur)");
  command->add_option("--kernel-tables", k.tables_dir,
                      "with --kernels: AIConfigurator tables folder (default: data/measured/aiconfigurator)");
  command->add_option("--kernels-out", k.kernels_out, "with --kernels: output (default: data/sim/kernels.json)");
  command->add_option("--kernels-report", k.report, "with --kernels: markdown report")->capture_default_str();
  command->callback([f] { run(*f); });
}

}  // namespace llmco2::cli
