// research/serve_validate.cc - measured load tests replayed through the serving simulation as their harness ran
// them (`llmco2 serve-validate`, docs/serving.md): ML.ENERGY's steady-state runs (energy per request, median
// inter-token latency) and MLPerf's whole-node runs (energy per token at the wall, throughput), simulated against
// measured, under parameters that never saw the rows replayed.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "calibration/calibration.h"
#include "core/accuracy.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/paths.h"
#include "dataset/dataset_csv.h"
#include "evaluation/node_validation.h"
#include "evaluation/serving_validation.h"
#include "llmco2/research.h"
#include "research/module.h"
#include "sim/label.h"
#include "sim/simulator.h"

namespace llmco2::research {
namespace {

std::string table_line(const std::string& gpu, const std::string& model,
                       const std::vector<ServingValidationRow>& rows) {
  const Accuracy e = serving_energy_accuracy(rows), l = serving_itl_accuracy(rows);
  return fmt::format("| {} | {} | {} | {:.1f} | x{:.2f} | {:.1f} | x{:.2f} |\n", gpu, model, rows.size(), 100 * e.mape,
                     e.bias, 100 * l.mape, l.bias);
}

std::string markdown(const ServingValidation& v, const std::string& source, const std::string& how) {
  std::map<std::pair<std::string, std::string>, std::vector<ServingValidationRow>> groups;
  std::map<std::string, std::vector<ServingValidationRow>> by_gpu;
  for (const auto& r : v.rows) {
    groups[{r.gpu, r.model}].push_back(r);
    by_gpu[r.gpu].push_back(r);
  }
  std::string out = fmt::format(
      "Simulated vs measured, {} steady-state rows ({} replayed, {} skipped) under {}; MAPE in %, bias as the "
      "geometric mean of simulated / measured.\n\n| GPU | model | rows | energy/request MAPE | bias | median ITL MAPE "
      "| bias |\n"
      "|---|---|---:|---:|---:|---:|---:|\n",
      source, v.rows.size(), v.skipped.size(), how);
  for (const auto& [key, rows] : groups) out += table_line(key.first, key.second, rows);
  for (const auto& [gpu, rows] : by_gpu) out += table_line(gpu, "**all**", rows);
  out += table_line("**all**", "**all**", v.rows);
  return out;
}

void write_rows(const ServingValidation& v, const std::vector<DatasetRow>& rows, const std::string& path) {
  AtomicFile file(path);
  file.stream()
      << "source_ref,model,gpu,task,tensor_parallel,data_parallel,max_num_seqs,measured_batch,simulated_batch,"
         "measured_energy_per_request_j,simulated_energy_per_request_j,measured_itl_ms,simulated_itl_ms\n";
  for (const auto& r : v.rows)
    file.stream() << fmt::format("{},{},{},{},{},{},{},{:.2f},{:.2f},{:.3f},{:.3f},{:.4f},{:.4f}\n",
                                 rows[r.row].source_ref, r.model, r.gpu, r.task, r.tensor_parallel, r.data_parallel,
                                 r.max_num_seqs, r.measured_batch, r.simulated_batch, r.measured_energy_per_request_j,
                                 r.simulated_energy_per_request_j, 1000 * r.measured_itl_s, 1000 * r.simulated_itl_s);
  file.commit();
}

// Leave one GPU type out: for each GPU type of the validated source's rows, parameters fitted without any row of
// that type (every source), then `replay(chosen rows, params)` of the source's rows of that type; results joined.
template <class Validation, class Replay>
Validation per_gpu_held_out(const std::vector<DatasetRow>& rows, const CalibrationSet& set,
                            const std::function<bool(const DatasetRow&)>& of_source, const Replay& replay) {
  std::vector<std::string> gpus;
  for (const DatasetRow& r : rows)
    if (of_source(r) && std::find(gpus.begin(), gpus.end(), r.gpu) == gpus.end()) gpus.push_back(r.gpu);
  Validation all;
  for (const std::string& gpu : gpus) {
    const auto of_gpu = [&](const DatasetRow& r) { return r.gpu == gpu; };
    const SimParams params = fit_params_without(set, of_gpu, default_sim_params(), FitOptions{});
    const std::function<bool(const DatasetRow&)> chosen = [&](const DatasetRow& r) {
      return of_source(r) && of_gpu(r);
    };
    Validation v = replay(chosen, params);
    all.rows.insert(all.rows.end(), v.rows.begin(), v.rows.end());
    all.skipped.insert(all.skipped.end(), v.skipped.begin(), v.skipped.end());
  }
  return all;
}

// The replays under parameters that never saw the rows they replay: fitted without the validated source
// (--held-out source), without each GPU type in turn (gpu), or the shipped parameters (none: a description, not a
// prediction, since they were fitted on these rows too).
ServingValidation replay(const std::vector<DatasetRow>& rows, const ServeValidateOptions& f, const CalibrationSet& set,
                         const std::function<bool(const DatasetRow&)>& of_source, std::string& how) {
  if (f.held_out == "none") {
    how = f.params.empty() ? "the shipped parameters (fitted on these rows too)" : "the parameters of " + f.params;
    return validate_serving(rows, of_source, load_sim_params_or_default(f.params), f.progress);
  }
  const FitOptions fit;
  if (f.held_out == "source") {
    how = fmt::format("parameters fitted without {} (leave one source out)", f.source);
    const SimParams params = fit_params_without(set, of_source, default_sim_params(), fit);
    return validate_serving(rows, of_source, params, f.progress);
  }
  how = "parameters fitted without the row's GPU type, on every source (leave one GPU type out)";
  return per_gpu_held_out<ServingValidation>(rows, set, of_source, [&](const auto& chosen, const SimParams& params) {
    return validate_serving(rows, chosen, params, f.progress);
  });
}

// The source's rows that calibration screens out as not GPU-bound (calibration/screening.h) are not replayed either,
// since no deployment of their GPUs explains them: they join the skipped rows with the reason.
ServingValidation validate(const std::vector<DatasetRow>& rows, const ServeValidateOptions& f, std::string& how) {
  const CalibrationSet set = prepare_calibration(rows);  // once, for every held-out fit
  std::map<std::string, const SkippedRow*> screened;     // by source_ref
  for (const SkippedRow& s : set.skipped)
    if (s.not_gpu_bound && rows[s.row].source == f.source) screened[rows[s.row].source_ref] = &s;
  const std::function<bool(const DatasetRow&)> of_source = [&](const DatasetRow& r) {
    return r.source == f.source && r.pipeline_parallel == 1 && !screened.count(r.source_ref);
  };
  ServingValidation v = replay(rows, f, set, of_source, how);
  for (const auto& [ref, s] : screened) v.skipped.emplace_back(s->row, s->reason);
  return v;
}

void write_node_rows(const NodeValidation& v, const std::vector<DatasetRow>& rows, const std::string& path) {
  AtomicFile file(path);
  file.stream() << "source_ref,node,gpu,model,benchmark,scenario,tensor_parallel,replicas,power_cap_w,"
                   "measured_energy_per_token_j,simulated_energy_per_token_j,measured_tokens_per_s,"
                   "simulated_tokens_per_s,measured_node_w,simulated_node_w\n";
  for (const auto& r : v.rows)
    file.stream() << fmt::format("{},{},{},{},{},{},{},{},{:.0f},{:.4f},{:.4f},{:.1f},{:.1f},{:.0f},{:.0f}\n",
                                 rows[r.row].source_ref, r.node, r.gpu, r.model, r.benchmark, r.scenario,
                                 r.tensor_parallel, r.replicas, r.power_cap_w, r.measured_energy_per_token_j,
                                 r.simulated_energy_per_token_j, r.measured_tokens_per_s, r.simulated_tokens_per_s,
                                 r.measured_node_w, r.simulated_node_w);
  file.commit();
}

// Node-scope rows are never fitted, so every parameter set is held out from their source; `gpu` refits without
// each GPU type in turn (hardware the simulator was not fitted on), `none` replays --params as given.
NodeValidation validate_nodes(const std::vector<DatasetRow>& rows, const ServeValidateOptions& f, std::string& how) {
  const auto of_source = [&](const DatasetRow& r) { return r.source == f.source; };
  if (f.held_out != "gpu") {
    how =
        f.params.empty() ? "the shipped parameters (fitted on the GPU-scope sources)" : "the parameters of " + f.params;
    return validate_node_rows(rows, of_source, load_sim_params_or_default(f.params), f.progress);
  }
  how = "parameters fitted without the run's GPU type, on every source (leave one GPU type out)";
  return per_gpu_held_out<NodeValidation>(rows, prepare_calibration(rows), of_source,
                                          [&](const auto& chosen, const SimParams& params) {
                                            return validate_node_rows(rows, chosen, params, f.progress);
                                          });
}

// The skipped rows, one line per reason (the screening's specifics left out).
std::vector<std::string> skipped_lines(const ServingValidation& v) {
  std::map<std::string, int> reasons;
  for (const auto& [row, reason] : v.skipped) {
    const bool screened = reason.find("not GPU-bound (") != std::string::npos;
    ++reasons[reason.substr(0, reason.find(screened ? " (" : " (did you mean"))];
  }
  std::vector<std::string> lines;
  for (const auto& [reason, count] : reasons) lines.push_back(fmt::format("skipped {} rows: {}", count, reason));
  return lines;
}

api::Result node_result(const ServeValidateOptions& f, const std::vector<DatasetRow>& rows, const std::string& dir) {
  std::string how;
  const NodeValidation v = validate_nodes(rows, f, how);
  if (v.rows.empty()) fail("{}: no {} node-scope row could be replayed", dir, f.source);
  api::Result result;
  result.text = node_validation_markdown(v, f.source, how);
  if (!f.rows_out.empty()) write_node_rows(v, rows, f.rows_out);
  if (!f.markdown_out.empty()) write_file_atomic(f.markdown_out, result.text);
  for (const auto& [row, reason] : v.skipped)
    result.warnings.push_back(fmt::format("skipped {}: {}", rows[row].source_ref, reason));
  return result;
}

// A steady-state row with pipeline stages against the simulator's figures for the same configuration.
struct PipelineRow {
  size_t row = 0;
  double measured_j = 0, simulated_j = 0, measured_s = 0, simulated_s = 0;
};

// Pipeline rows are never fitted (DatasetRow::why_not_a_label): each is simulated as calibration labels a row (its
// mean running batch over the stages' micro-batches, its steady state) under parameters fitted without its source
// (source), without its GPU type (gpu) or as given (none).
std::vector<PipelineRow> pipeline_rows(const std::vector<DatasetRow>& rows, const ServeValidateOptions& f,
                                       std::string& how) {
  const auto of_source = [&](const DatasetRow& r) { return r.source == f.source; };
  CatalogCache catalogs;
  const auto score = [&](const DatasetRow& row, size_t i, const SimParams& params) {
    const SimConfig c = config_for_row(row, catalogs);
    const SimResult result = simulate(*c.model, *c.gpu, c.request, c.scenario, params);
    return PipelineRow{i, *row.energy_j.total, *simulated_energy(result, c).total, *row.latency_s.total,
                       *simulated_latency(result, c).total};
  };
  std::vector<PipelineRow> out;
  // The rows with stages, and for reference the source's stage-less rows of the same model on the same GPU type
  // (fitted under `none` like the rest of the source; under `source` and `gpu` held out like the rows with stages).
  std::set<std::pair<std::string, std::string>> staged_setups;
  for (const DatasetRow& r : rows)
    if (of_source(r) && r.pipeline_parallel > 1) staged_setups.emplace(r.model, r.gpu);
  const auto staged = [&](const DatasetRow& r) { return of_source(r) && staged_setups.count({r.model, r.gpu}) > 0; };
  if (f.held_out == "none") {
    how = f.params.empty() ? "the shipped parameters (fitted on the source's other rows)"
                           : "the parameters of " + f.params;
    const SimParams params = load_sim_params_or_default(f.params);
    for (size_t i = 0; i < rows.size(); ++i)
      if (staged(rows[i])) out.push_back(score(rows[i], i, params));
    return out;
  }
  const CalibrationSet set = prepare_calibration(rows);
  const bool by_gpu = f.held_out == "gpu";
  how = by_gpu ? "parameters fitted without the row's GPU type (leave one GPU type out)"
               : fmt::format("parameters fitted without {} (leave one source out)", f.source);
  std::map<std::string, SimParams> fitted;  // by GPU type, or one set under ""
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!staged(rows[i])) continue;
    const std::string key = by_gpu ? rows[i].gpu : "";
    if (!fitted.count(key)) {
      const std::function<bool(const DatasetRow&)> left_out =
          by_gpu ? std::function<bool(const DatasetRow&)>([&](const DatasetRow& r) { return r.gpu == key; })
                 : std::function<bool(const DatasetRow&)>(of_source);
      fitted.emplace(key, fit_params_without(set, left_out, default_sim_params(), FitOptions{}));
    }
    out.push_back(score(rows[i], i, fitted.at(key)));
  }
  return out;
}

std::string pipeline_markdown(const std::vector<PipelineRow>& v, const std::vector<DatasetRow>& rows,
                              const std::string& source, const std::string& how) {
  std::string out = fmt::format(
      "\n\nPipeline-parallel steady states of {} (never fitted), and its rows of the same models and GPUs without "
      "stages, "
      "simulated under {}: energy of all GPUs for the running batch's requests and the time per request in the "
      "steady state, simulated / measured.\n\n"
      "| model | GPU | TP x PP | mean batch | energy J measured | simulated / measured | latency s measured | "
      "simulated / measured |\n|---|---|---|---:|---:|---:|---:|---:|\n",
      source, how);
  AccuracyCounter energy, latency;  // of the rows with stages
  for (const PipelineRow& p : v) {
    const DatasetRow& r = rows[p.row];
    if (r.pipeline_parallel == 1) continue;
    out += fmt::format("| {} | {} | {} x {} | {:.0f} | {:.0f} | {:.2f} | {:.1f} | {:.2f} |\n", r.model, r.gpu,
                       r.tensor_parallel, r.pipeline_parallel, r.batch, p.measured_j, p.simulated_j / p.measured_j,
                       p.measured_s, p.simulated_s / p.measured_s);
    energy.add(p.simulated_j, p.measured_j), latency.add(p.simulated_s, p.measured_s);
  }
  for (const PipelineRow& p : v) {  // the stage-less rows after
    const DatasetRow& r = rows[p.row];
    if (r.pipeline_parallel > 1) continue;
    out += fmt::format("| {} | {} | {} x 1 | {:.0f} | {:.0f} | {:.2f} | {:.1f} | {:.2f} |\n", r.model, r.gpu,
                       r.tensor_parallel, r.batch, p.measured_j, p.simulated_j / p.measured_j, p.measured_s,
                       p.simulated_s / p.measured_s);
  }
  const Accuracy e = energy.result(), l = latency.result();
  out +=
      fmt::format("\nWith stages ({} rows): energy MAPE {:.1f}% (bias x{:.2f}), latency MAPE {:.1f}% (bias x{:.2f}).\n",
                  e.n, 100 * e.mape, e.bias, 100 * l.mape, l.bias);
  return out;
}

}  // namespace

api::Result serve_validate(const ServeValidateOptions& f) {
  if (f.held_out != "source" && f.held_out != "gpu" && f.held_out != "none")
    fail("serve-validate: held_out '{}' (expected source, gpu or none)", f.held_out);
  const std::filesystem::path dir = measured_dir(f.data_dir);
  const DatasetReadResult read = read_dataset_folder(dir);
  if (std::any_of(read.rows.begin(), read.rows.end(),
                  [&](const DatasetRow& r) { return r.source == f.source && r.has_caveat("throughput_row"); }))
    return node_result(f, read.rows, dir.string());
  std::string how;
  const ServingValidation v = validate(read.rows, f, how);
  if (v.rows.empty()) fail("{}: no {} steady-state row could be replayed", dir.string(), f.source);
  api::Result result;
  result.text = markdown(v, f.source, how);
  std::string pipeline_how;
  const std::vector<PipelineRow> staged = pipeline_rows(read.rows, f, pipeline_how);
  if (!staged.empty()) result.text += pipeline_markdown(staged, read.rows, f.source, pipeline_how);
  if (!f.rows_out.empty()) write_rows(v, read.rows, f.rows_out);
  if (!f.markdown_out.empty()) write_file_atomic(f.markdown_out, result.text);
  result.warnings = skipped_lines(v);
  return result;
}

}  // namespace llmco2::research
