// research/calibrate.cc - fitting the simulator (`llmco2 calibrate`): its parameters on the measurements with
// leave-one-source-out and leave-one-GPU-out scores, and its kernel-time parameters on Vidur's operator profiles.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "calibration/collective_tables.h"
#include "calibration/kernel_profiles.h"
#include "calibration/kernel_tables.h"
#include "calibration/report.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/json_io.h"
#include "core/output_manifest.h"
#include "core/paths.h"
#include "core/progress.h"
#include "evaluation/node_validation.h"
#include "llmco2/research.h"
#include "research/held_out.h"
#include "research/module.h"
#include "research/site.h"
#include "research/throughput_fit.h"

namespace llmco2::research {
namespace {

// The folder an output goes into, created when missing ("params.json" has none to create).
void create_parent(const std::filesystem::path& output) {
  if (!output.parent_path().empty()) std::filesystem::create_directories(output.parent_path());
}

// The whole-node runs (MLPerf power: node_wall_power rows, never fitted) replayed under the shipped parameters, each
// source's table as a report section: every figure in it is held out from its source by construction.
std::string node_section(const std::vector<DatasetRow>& rows, const SimParams& params) {
  std::vector<std::string> sources;
  for (const DatasetRow& r : rows)
    if (r.has_caveat("throughput_row") && std::find(sources.begin(), sources.end(), r.source) == sources.end())
      sources.push_back(r.source);
  std::string out =
      "## Whole nodes: energy at the wall and throughput\n\nRuns of whole servers are never in the fit above (the "
      "fit is on GPU energy and request latency); they are replayed through the serving simulation at node scope "
      "(docs/node-energy.md) with the parameters fitted above: leave one source out by construction, except for the "
      "AMD runs (mlperf-amd), on which the CDNA 3 kernel entry is fitted (their held-out figures are in "
      "docs/kernel-fit.md). Energy per output token where measured, throughput of Offline runs, mean time per output "
      "token of Server and Interactive runs; MAPE and bias (geometric mean of simulated / measured) per GPU and "
      "benchmark.\n\n";
  for (const std::string& source : sources) {
    check_interrupt();
    std::cerr << fmt::format("calibrate: replaying the {} runs at node scope\n", source);
    const NodeValidation v = validate_node_rows(
        rows, [&](const DatasetRow& r) { return r.source == source; }, params, true);
    out += "### " + source + "\n\n" +
           node_validation_markdown(v, source, "the parameters fitted above (on all GPU-scope sources)") + "\n";
  }
  return out;
}

}  // namespace

CalibrateSummary calibrate(const CalibrateOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::filesystem::path dir = measured_dir(o.data_dir);
  CalibrationReport report;
  DatasetReadResult read = read_dataset_folder(dir);
  report.read_rejects = std::move(read.rejects);
  const CalibrationSet set = prepare_calibration(std::move(read.rows));
  CalibrateSummary summary;
  summary.rows = static_cast<long>(set.rows.size());
  summary.simulatable = static_cast<long>(set.samples.size());
  summary.skipped = static_cast<long>(set.skipped.size());
  std::cerr << fmt::format("calibrate: {} rows, {} simulatable, {} skipped\n", set.rows.size(), set.samples.size(),
                           set.skipped.size());
  FitOptions fit;
  fit.max_evaluations = o.max_evaluations;
  const unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  report.set = &set;
  std::map<std::string, SimParams> without_source;  // each source's held-out fit
  if (!o.fit_only) {
    report.leave_one_out.resize(set.samples.size());
    without_source = leave_one_group_out(
        set, fit, threads, [&](size_t s) { return set.rows[set.samples[s].row].source; }, report.leave_one_out,
        "calibrate");
    report.leave_one_gpu_out.resize(set.samples.size());
    leave_one_group_out(
        set, fit, threads, [&](size_t s) { return set.rows[set.samples[s].row].gpu; }, report.leave_one_gpu_out,
        "calibrate");
  }
  std::vector<size_t> all(set.samples.size());
  for (size_t s = 0; s < all.size(); ++s) all[s] = s;
  report.params = fit_params(set, all, default_sim_params(), fit);
  report.at_bounds = params_at_bounds(report.params, set, all, fit);
  for (const auto& sample : set.samples) report.fit.push_back(predict(sample, report.params));
  report.import_rejects = read_import_rejects(dir);
  if (!o.fit_only) {
    report.appendix.push_back(site_study_markdown(set, without_source, report.params));
    report.appendix.push_back(node_section(set.rows, report.params));
  }
  const auto params_path = o.params_out.empty() ? default_sim_params_path() : std::filesystem::path(o.params_out);
  const std::filesystem::path md = o.report, plots = md.parent_path() / "calibration";
  create_parent(params_path);
  RunManifest manifest(o.fit_only ? manifest_beside(params_path) : manifest_in_folder(plots));
  write_file_atomic(params_path, sim_params_to_json(report.params).dump(2) + "\n");
  summary.params_written = params_path.string();
  report.seconds = seconds_since(start);
  report.command = "llmco2 calibrate";
  if (!o.rows_out.empty()) write_calibration_rows(report, o.rows_out);
  if (!o.fit_only) {
    const std::string warning = write_calibration_report(report, md, plots);
    if (!warning.empty()) summary.warnings.push_back(warning);
    summary.report_written = md.string();
  }
  manifest.commit();
  summary.seconds = seconds_since(start);
  return summary;
}

namespace {

// The block-scaled share the simulator runs with now (data/sim/params.json; the report's block-scaled rows are
// scored with it), or the built-in default with a warning when that file cannot be read.
double current_block_scaled_efficiency(std::vector<std::string>& warnings) {
  const auto path = default_sim_params_path();
  try {
    return read_json_file(path).at("shared").at("block_scaled_efficiency").get<double>();
  } catch (const std::exception& e) {
    warnings.push_back(fmt::format("{}: no shared.block_scaled_efficiency ({}); block-scaled GEMMs scored at {}",
                                   path.string(), e.what(), SimParams{}.block_scaled_efficiency));
    return SimParams{}.block_scaled_efficiency;
  }
}

// AMD CDNA 3 has no kernel table: its entry is fitted to MLPerf's MI300X and MI325X runs, replayed with the kernel
// parameters just fitted and the request-level parameters the simulator runs with now (data/sim/params.json).
// Without those runs (a dataset folder that has none) CDNA 3 keeps the "default" entry, and the report says so.
std::optional<ThroughputFit> fit_cdna(const KernelFitOptions& o, const KernelParams& kernels) {
  const DatasetReadResult read = read_dataset_folder(measured_dir(o.data_dir));
  if (std::none_of(read.rows.begin(), read.rows.end(), [](const DatasetRow& r) { return r.source == "mlperf-amd"; }))
    return std::nullopt;
  SimParams base = load_sim_params_or_default("");
  base.kernels = kernels;
  // The MI325X is the MI300X's dies on a 1,000 W board (750 W): its runs are 1.24-1.30x the MI300X's at 1.13x the
  // bandwidth, the compute dies holding their clocks under the higher limit. Its own compute scale, from these runs.
  return fit_generation_on_throughput(read.rows, "mlperf-amd", "cdna", "mi325x", base, true);
}

std::string cdna_markdown(const std::optional<ThroughputFit>& fit, const std::string& data_dir) {
  if (fit) return throughput_fit_markdown(*fit);
  return fmt::format(
      "## cdna from whole-node throughput\n\nNot fitted: {} holds no mlperf-amd runs (`llmco2 import --source "
      "mlperf-amd`); AMD CDNA 3 GPUs take the \"default\" entry.\n",
      measured_dir(data_dir).string());
}

}  // namespace

KernelFitSummary fit_kernels(const KernelFitOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::filesystem::path dir = o.vidur_dir.empty() ? default_vidur_dir() : std::filesystem::path(o.vidur_dir);
  const std::filesystem::path tables_dir =
      o.tables_dir.empty() ? default_kernel_tables_dir() : std::filesystem::path(o.tables_dir);
  const KernelProfileSet set = read_kernel_profiles(dir, tables_dir);
  KernelFitSummary summary;
  summary.compute_samples = static_cast<long>(set.compute.size());
  summary.network_samples = static_cast<long>(set.network.size());
  std::cerr << fmt::format("calibrate --kernels: {} operator samples from {}, {} all-reduce samples from it and {}\n",
                           set.compute.size(), dir.string(), set.network.size(), tables_dir.string());
  KernelFit fit = fit_kernel_params(set);
  const KernelTableSet tables = read_kernel_tables(tables_dir);
  const AllReduceTableSet allreduces = read_allreduce_tables(tables_dir / "allreduce.csv");
  summary.table_samples = static_cast<long>(tables.samples.size() + allreduces.direct.size());
  std::cerr << fmt::format("calibrate --kernels: {} AIConfigurator kernel and {} engine all-reduce samples from {}\n",
                           tables.samples.size(), allreduces.direct.size(), tables_dir.string());
  const KernelTableFit table_fit =
      fit_kernel_tables(tables.samples, fit.params, {current_block_scaled_efficiency(summary.warnings)}, true);
  const DirectAllReduceFit direct_fit = fit_direct_allreduce(allreduces.direct, fit.params);
  const std::optional<ThroughputFit> cdna = fit_cdna(o, fit.params);
  if (cdna) {
    fit.params.generations[cdna->generation] = cdna->efficiency;
    fit.params.gpus[cdna->gpu] = cdna->gpu_efficiency;
  }
  const auto out = o.kernels_out.empty() ? default_kernel_params_path() : std::filesystem::path(o.kernels_out);
  const std::filesystem::path md = o.report;
  const std::filesystem::path png = md.parent_path() / "kernel-fit" / "held_out.png";
  create_parent(out);
  std::filesystem::create_directories(png.parent_path());
  RunManifest manifest(manifest_in_folder(png.parent_path()));
  Json params_json = kernel_fit_json(set, fit);
  params_json["fit"]["tables"] = kernel_tables_json(score_kernel_tables(tables.samples, table_fit));
  params_json["fit"]["direct_allreduce"] = kernel_tables_json(score_direct_allreduce(allreduces.direct, direct_fit));
  if (cdna)
    params_json["fit"]["throughput"] = {{"generation", cdna->generation},
                                        {"source", cdna->source},
                                        {"compute_scale", cdna->scales.compute},
                                        {"memory_scale", cdna->scales.memory},
                                        {"gpu", cdna->gpu},
                                        {"gpu_compute_scale", cdna->scales.gpu_compute}};
  params_json["fit"]["tables_source"] =
      "data/measured/aiconfigurator (NVIDIA AIConfigurator kernel tables, ai-dynamo/aiconfigurator 095f58a51)";
  write_file_atomic(out, params_json.dump(2) + "\n");
  const std::string warning = plot_kernel_fit(set, fit, png);
  if (!warning.empty()) summary.warnings.push_back(warning);
  const std::string plot = warning.empty() ? "kernel-fit/held_out.png" : "";
  write_file_atomic(md, kernel_fit_markdown(set, fit, plot, "llmco2 calibrate --kernels") + "\n" +
                            kernel_tables_markdown(tables, table_fit) + "\n" +
                            allreduce_tables_markdown(allreduces, direct_fit) + "\n" + cdna_markdown(cdna, o.data_dir));
  manifest.commit();
  summary.kernels_written = out.string();
  summary.report_written = md.string();
  summary.seconds = seconds_since(start);
  return summary;
}

}  // namespace llmco2::research
