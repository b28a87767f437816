// calibration/report.cc - markdown tables and gnuplot plots of the calibration.
#include "calibration/report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/accuracy.h"
#include "core/csv.h"
#include "core/json_io.h"
#include "core/plot.h"
#include "core/statistics.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::calibration {
namespace {

std::vector<size_t> samples_of(const CalibrationSet& set, const std::string& source) {
  std::vector<size_t> out;
  for (size_t s = 0; s < set.samples.size(); ++s)
    if (set.rows[set.samples[s].row].source == source) out.push_back(s);
  return out;
}

// A MAPE cell, "-" where no row measured the quantity.
std::string mape_cell(const AccuracyStats& a) { return a.n ? percent(a.mape) : std::string("-"); }

std::string accuracy_cells(const AccuracyStats& fit, const AccuracyStats& loso) {
  if (fit.n == 0) return "0 | - | - | - | - | - | -";
  return fmt::format("{} | {} | {} | {} | {} | {} | {}", fit.n, percent(fit.mape), percent(loso.mape),
                     percent(fit.eba10), percent(loso.eba10), percent(fit.eba30), percent(loso.eba30));
}

// Median of predicted / measured over the samples that measured `quantity`: the direction of the error.
std::string median_ratio(const CalibrationSet& set, const std::vector<size_t>& samples,
                         const std::vector<SimEstimate>& predictions, Quantity quantity) {
  std::vector<double> ratios;
  for (size_t k : samples) {
    const bool energy = quantity == Quantity::energy;
    const auto& measured = energy ? set.samples[k].energy_j : set.samples[k].latency_s;
    const double predicted = energy ? predictions[k].energy_j : predictions[k].latency_s;
    if (measured && *measured > 0 && predicted > 0) ratios.push_back(predicted / *measured);
  }
  return ratios.empty() ? std::string("-") : fmt::format("{:.2f}", percentile(ratios, 0.5));
}

// Reasons with their counts, most frequent first, as "N x reason; ...".
std::string reason_counts(const std::map<std::string, int>& reasons) {
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [reason, count] : reasons) sorted.emplace_back(count, reason);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [count, reason] : sorted) out += fmt::format("{}{} x {}", out.empty() ? "" : "; ", count, reason);
  return out;
}

std::string data_section(const CalibrationReport& r) {
  const CalibrationSet& set = *r.set;
  std::string out =
      "## Data\n\nRows of `data/measured/*.csv` (written by `llmco2 import`; `rejected` are the source rows the "
      "importer "
      "refused, listed with their reasons in `<source>.rejects.csv`), the rows the simulator labels and fits "
      "(`used`), and the rows it does not (`not fitted`: model or GPU not in the catalogs, a request the model does "
      "not allow, or rows validated elsewhere), with every reason and its count.\n\n"
      "| source | rejected at import | rows | used | not fitted | why not fitted | why rejected |\n"
      "|---|---:|---:|---:|---:|---|---|\n";
  std::vector<std::string> sources = set.sources();
  for (const auto& [source, rejects] : r.import_rejects)
    if (std::find(sources.begin(), sources.end(), source) == sources.end()) sources.push_back(source);
  for (const auto& source : sources) {
    size_t rows = 0, skipped = 0;
    std::map<std::string, int> reasons, rejected;
    for (const auto& row : set.rows) rows += row.source == source;
    for (const auto& s : set.skipped)
      if (set.rows[s.row].source == source) ++skipped, ++reasons[reason_class(s.reason)];
    const auto found = r.import_rejects.find(source);
    if (found != r.import_rejects.end())
      for (const auto& reject : found->second) ++rejected[reason_class(reject.reason)];
    size_t rejected_rows = 0;
    for (const auto& [reason, count] : rejected) rejected_rows += count;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", source, rejected_rows, rows, rows - skipped, skipped,
                       reason_counts(reasons), reason_counts(rejected));
  }
  if (!r.read_rejects.empty())
    out += fmt::format("\n{} rows were refused by the dataset reader (first: {}).\n", r.read_rejects.size(),
                       r.read_rejects.front().message());
  return out;
}

std::string accuracy_section(const CalibrationReport& r) {
  const CalibrationSet& set = *r.set;
  std::string out =
      "## Accuracy\n\n`fit`: parameters fitted on all sources, scored on the same rows (how well the simulator can "
      "describe the data). `held out`: parameters fitted on all *other* sources, scored on this one (how it does on a "
      "source it never saw; there is no per-GPU parameter, and an engine's host costs are fitted only where the other "
      "sources have 20 rows of that engine, otherwise its sourced defaults from data/engines/engines.json are used). "
      "MAPE = mean |predicted - measured| / measured; "
      "EBA(d) = share of rows within +-d. Totals per row: energy of all GPUs for the row's requests; latency as "
      "defined per row in docs/data.md.\n\n";
  for (const bool energy : {true, false}) {
    out += fmt::format(
        "### {}\n\n| source | rows | MAPE fit | MAPE held out | EBA(10%) fit | EBA(10%) held out | "
        "EBA(30%) fit | EBA(30%) held out | median predicted/measured, held out |\n"
        "|---|---|---|---|---|---|---|---|---|\n",
        energy ? "Energy" : "Latency");
    for (const auto& source : set.sources()) {
      const auto samples = samples_of(set, source);
      if (samples.empty()) continue;  // nothing fitted (node-scope rows have their own section)
      const Quantity q = energy ? Quantity::energy : Quantity::latency;
      out += fmt::format("| {} | {} | {} |\n", source,
                         accuracy_cells(accuracy(set, samples, r.fit, q), accuracy(set, samples, r.leave_one_out, q)),
                         median_ratio(set, samples, r.leave_one_out, q));
    }
    out += "\n";
  }
  return out;
}

std::vector<std::string> gpus_of(const CalibrationSet& set) {
  std::vector<std::string> out;
  for (const auto& sample : set.samples) {
    const std::string& gpu = set.rows[sample.row].gpu;
    if (std::find(out.begin(), out.end(), gpu) == out.end()) out.push_back(gpu);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string gpu_section(const CalibrationReport& r) {
  const CalibrationSet& set = *r.set;
  if (r.leave_one_gpu_out.size() != set.samples.size()) return "";
  std::string out =
      "## Leave one GPU type out\n\nParameters fitted without any row of the GPU type (every source), scored on "
      "that GPU's rows: how the simulator does on hardware it was not fitted on, from its datasheet figures "
      "alone.\n\n| GPU | energy rows | energy MAPE fit | energy MAPE held out | latency rows | latency MAPE fit | "
      "latency MAPE held out |\n|---|---|---|---|---|---|---|\n";
  for (const auto& gpu : gpus_of(set)) {
    std::vector<size_t> samples;
    for (size_t s = 0; s < set.samples.size(); ++s)
      if (set.rows[set.samples[s].row].gpu == gpu) samples.push_back(s);
    const auto ef = accuracy(set, samples, r.fit, Quantity::energy);
    const auto eh = accuracy(set, samples, r.leave_one_gpu_out, Quantity::energy);
    const auto lf = accuracy(set, samples, r.fit, Quantity::latency);
    const auto lh = accuracy(set, samples, r.leave_one_gpu_out, Quantity::latency);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", gpu, ef.n, mape_cell(ef), mape_cell(eh), lf.n,
                       mape_cell(lf), mape_cell(lh));
  }
  return out + "\n";
}

// The architecture generation of each catalog GPU id of the set's samples.
std::map<std::string, std::string> generations_of(const CalibrationSet& set) {
  std::map<std::string, std::string> out;
  for (const auto& gpu : gpus_of(set)) out[gpu] = gpu_generation(GpuCatalog::bundled().resolve(gpu));
  return out;
}

std::string generation_engine_section(const CalibrationReport& r) {
  const CalibrationSet& set = *r.set;
  if (r.leave_one_gpu_out.size() != set.samples.size()) return "";
  const auto generation = generations_of(set);
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<size_t>> groups;
  for (size_t s = 0; s < set.samples.size(); ++s) {
    const auto& row = set.rows[set.samples[s].row];
    groups[{generation.at(row.gpu), row.engine, row.source}].push_back(s);
  }
  std::string out =
      "## By GPU generation and engine\n\nEvery fitted source's rows per GPU generation and engine: MAPE fitted on "
      "all sources (`fit`), with the row's source left out (`source out`) and with the row's GPU type left out (`GPU "
      "out`), as in the two sections above. No source with energy or latency of AMD's CDNA3 (MI300X, MI325X) is "
      "fitted: MLPerf's AMD results measure throughput only.\n\n"
      "| generation | engine | source | energy rows | energy fit | energy source out | energy GPU out | latency rows "
      "| latency fit | latency source out | latency GPU out |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [key, samples] : groups) {
    const auto& [gen, engine, source] = key;
    std::string cells;
    for (const Quantity q : {Quantity::energy, Quantity::latency}) {
      const auto fit = accuracy(set, samples, r.fit, q);
      cells += fmt::format(" {} | {} | {} | {} |", fit.n, mape_cell(fit),
                           mape_cell(accuracy(set, samples, r.leave_one_out, q)),
                           mape_cell(accuracy(set, samples, r.leave_one_gpu_out, q)));
    }
    out += fmt::format("| {} | {} | {} |{}\n", gen, engine, source, cells);
  }
  return out + "\n";
}

std::string params_section(const CalibrationReport& r) {
  std::string bounds = r.at_bounds.empty() ? "No fitted parameter ended at an end of its range.\n"
                                           : "Fitted parameters that ended at an end of their range (the data push "
                                             "past what is physical there; see docs/simulator.md):\n\n";
  for (const auto& b : r.at_bounds) bounds += "- " + b + "\n";
  return fmt::format(
      "## Fitted parameters\n\nShipped in `data/sim/params.json` (fitted on all sources; the kernel "
      "efficiencies come from `data/sim/kernels.json`, the engine defaults from "
      "`data/engines/engines.json`):\n\n```json\n{}\n```\n\n{}",
      sim_params_to_json(r.params).dump(2), bounds);
}

// Held-out against measured, one series per source (gnuplot datablocks), written atomically; returns "" or a warning.
std::string plot(const CalibrationReport& r, bool energy, const std::filesystem::path& svg) {
  const CalibrationSet& set = *r.set;
  std::string blocks, series;
  int index = 0;
  for (const auto& source : set.sources()) {
    std::string points;
    for (size_t s : samples_of(set, source)) {
      const auto& measured = energy ? set.samples[s].energy_j : set.samples[s].latency_s;
      const double predicted = energy ? r.leave_one_out[s].energy_j : r.leave_one_out[s].latency_s;
      if (measured && predicted > 0) points += fmt::format("{} {}\n", *measured, predicted);
    }
    if (points.empty()) continue;
    blocks += gnuplot_datablock(fmt::format("s{}", index), points);
    series += fmt::format(", $s{} using 1:2 title '{}' pt 7 ps 0.4", index++, source);
  }
  const std::string script = fmt::format(
      "{}set logscale xy\nset grid\nset key left top\nset xlabel 'measured {}'\n"
      "set ylabel 'simulated {}, source held out'\nset title '{} (each source predicted with parameters fitted on the "
      "others)'\nplot x title 'y = x' lc rgb 'black'{}",
      blocks, energy ? "energy (J)" : "latency (s)", energy ? "energy (J)" : "latency (s)",
      energy ? "Energy" : "Latency", series);
  return plot_to_file(script, svg, 760, 620);
}

}  // namespace

std::string write_calibration_report(const CalibrationReport& r, const std::filesystem::path& markdown,
                                     const std::filesystem::path& plot_dir) {
  std::filesystem::create_directories(plot_dir);
  std::string warning = plot(r, true, plot_dir / "energy.svg");
  if (warning.empty()) warning = plot(r, false, plot_dir / "latency.svg");
  const auto relative = plot_dir.filename().string();
  std::string md = fmt::format(
      "# Calibration of the reference simulator\n\nWritten by `{}` in {:.0f} s; do not edit by hand. The simulator and "
      "its parameters are described in docs/simulator.md, the dataset format and every source's caveats in "
      "docs/data.md.\n\nAll figures below are on **measured** data (the public sources imported into data/measured), "
      "never on simulated data. The `held out` columns are leave-one-source-out: the honest figure for a source the "
      "simulator was not fitted on.\n\n",
      r.command, r.seconds);
  md += data_section(r) + "\n" + accuracy_section(r) + gpu_section(r) + generation_engine_section(r);
  for (const auto& section : r.appendix) md += section + "\n";
  md += warning.empty()
            ? fmt::format("## Plots\n\n![energy]({0}/energy.svg)\n\n![latency]({0}/latency.svg)\n\n", relative)
            : fmt::format("## Plots\n\nNot written: {}.\n\n", warning);
  md += params_section(r);
  write_file_atomic(markdown, md);
  return warning;
}

void write_calibration_rows(const CalibrationReport& r, const std::filesystem::path& csv) {
  const CalibrationSet& set = *r.set;
  std::string out;
  append_csv_record(
      out, {"source", "source_ref", "model", "gpu", "gpus", "dtype", "engine", "measures", "batch", "prompt_tokens",
            "gen_tokens", "energy_measured_j", "energy_fit_j", "energy_held_out_j", "energy_gpu_held_out_j",
            "latency_measured_s", "latency_fit_s", "latency_held_out_s", "latency_gpu_held_out_s"});
  auto value = [](const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
  auto estimate = [](const std::vector<SimEstimate>& v, size_t s, bool energy) {
    if (s >= v.size()) return std::string();
    return fmt::format("{:.6g}", energy ? v[s].energy_j : v[s].latency_s);
  };
  for (size_t s = 0; s < set.samples.size(); ++s) {
    const CalibrationSample& sample = set.samples[s];
    const DatasetRow& row = set.rows[sample.row];
    append_csv_record(out, {row.source, row.source_ref, row.model, row.gpu, std::to_string(row.gpus), row.dtype,
                            row.engine, std::string(measures_name(row.measures)), fmt::format("{:g}", row.batch),
                            fmt::format("{:g}", row.prompt_tokens), fmt::format("{:g}", row.gen_tokens),
                            value(sample.energy_j), estimate(r.fit, s, true), estimate(r.leave_one_out, s, true),
                            estimate(r.leave_one_gpu_out, s, true), value(sample.latency_s), estimate(r.fit, s, false),
                            estimate(r.leave_one_out, s, false), estimate(r.leave_one_gpu_out, s, false)});
  }
  write_file_atomic(csv, out);
}

}  // namespace llmco2::calibration
