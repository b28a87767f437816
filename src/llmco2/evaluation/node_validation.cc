// evaluation/node_validation.cc - MLPerf power runs replayed at node scope.
#include "evaluation/node_validation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/error.h"
#include "core/progress.h"
#include "hardware/node.h"
#include "sim/label.h"

namespace llmco2::evaluation {

namespace {

// What the benchmark's outputs look like beyond their mean: a cut at its max_new_tokens (SOURCE.md section 6) and a
// spread of cv 1 (an exponential law, the maximum-entropy law of a positive length whose mean alone is known).
constexpr double kOutputCv = 1.0;
long max_new_tokens(const std::string& benchmark) { return benchmark.starts_with("gptj") ? 128 : 1024; }

Deployment deployment_for(const DatasetRow& row, const SimConfig& config) {
  Deployment d;
  d.model = *config.model, d.gpu = *config.gpu, d.setup = config.request;
  d.setup.batch = 1;
  d.sampling = config.scenario.sampling;
  d.scope.node = NodeCatalog::bundled().resolve(row.note("node"));
  if (const std::string cap = row.note("power_cap_w"); !cap.empty()) d.power.cap_w = std::stod(cap);
  if (row.max_batch) d.max_num_seqs = std::lround(*row.max_batch / std::max(1, row.data_parallel));  // per engine
  if (const std::string tokens = row.note("max_tokens"); !tokens.empty()) d.max_batched_tokens = std::stol(tokens);
  return d;
}

NodeValidationRow replay_node_row(const DatasetRow& row, size_t index, const SimParams& params,
                                  CatalogCache& catalogs) {
  if (!row.latency_s.total || row.gen_tokens < 1) fail("needs the node's time per sample");
  if (row.has_caveat("run_settings_unknown"))
    fail(
        "how the submitter ran it (batch and power limits) was not found or is not public (data/mlperf/benchmarks.json "
        "'missing'; measured/mlperf_amd.cc): a replay at the board's TDP and the engine's default limits would not be "
        "the run that was measured");
  const SimConfig config = config_for_row(row, catalogs);
  NodeValidationRow out;
  out.row = index;
  out.node = row.note("node");
  out.scenario = row.note("scenario");
  out.benchmark = row.note("benchmark");
  out.gpu = row.gpu, out.model = row.model;
  out.tensor_parallel = config.request.gpus, out.replicas = std::max(1, row.data_parallel);
  const Deployment d = deployment_for(row, config);
  out.power_cap_w = d.power.cap_w;
  const long max_seqs = scheduler_limits(d).max_num_seqs;
  LoadTest test;
  test.requests = std::max(2000L, 4 * max_seqs);
  test.prompt_tokens = row.prompt_tokens, test.gen_mean = row.gen_tokens, test.gen_cv = kOutputCv;
  test.max_output_tokens = max_new_tokens(out.benchmark);
  if (const std::string beams = row.note("beams"); !beams.empty()) test.beams = std::stoi(beams);
  // The run's own seed, whatever else the dataset holds: a saturated Server replay moves by several percent with
  // its draw of output lengths.
  test.seed = fnv1a64(row.source_ref);
  const double samples_per_s = 1.0 / *row.latency_s.total;
  // Server and Interactive: Poisson arrivals at the rate the run sustained; Offline: every query at once.
  const SteadyState s = out.scenario == "Offline" ? run_load_test(d, params, test)
                                                  : run_open_load_test(d, params, test, samples_per_s / out.replicas);
  if (!s.valid) fail("the replay reached no steady state");
  if (row.energy_j.total) {
    out.measured_energy_per_token_j = *row.energy_j.total / row.gen_tokens;
    out.measured_node_w = *row.energy_j.total * samples_per_s;
  }
  out.measured_tokens_per_s = samples_per_s * row.gen_tokens;
  if (const std::string tpot_ms = row.note("mean_tpot_ms"); !tpot_ms.empty()) {
    out.measured_tpot_s = std::stod(tpot_ms) / 1000;
    out.simulated_tpot_s = s.mean_tpot_s;
  }
  out.simulated_energy_per_token_j = s.energy_per_token_j;
  out.simulated_tokens_per_s = static_cast<double>(s.tokens) / s.window_s * out.replicas;
  out.simulated_node_w = out.simulated_energy_per_token_j * out.simulated_tokens_per_s;
  return out;
}

}  // namespace

NodeValidation validate_node_rows(const std::vector<DatasetRow>& rows,
                                  const std::function<bool(const DatasetRow&)>& chosen_row, const SimParams& params,
                                  bool progress) {
  CatalogCache catalogs;
  return replay_rows<NodeValidation>(
      rows, [&](const DatasetRow& r) { return r.has_caveat("throughput_row") && chosen_row(r); }, "node validation",
      progress, [&](const DatasetRow& row, size_t index) { return replay_node_row(row, index, params, catalogs); });
}

Accuracy node_energy_accuracy(const std::vector<NodeValidationRow>& rows) {
  AccuracyCounter c;
  for (const auto& r : rows)
    if (r.measured_energy_per_token_j > 0) c.add(r.simulated_energy_per_token_j, r.measured_energy_per_token_j);
  return c.result();
}

Accuracy node_tpot_accuracy(const std::vector<NodeValidationRow>& rows) {
  AccuracyCounter c;
  for (const auto& r : rows)
    if (r.measured_tpot_s > 0) c.add(r.simulated_tpot_s, r.measured_tpot_s);
  return c.result();
}

Accuracy node_throughput_accuracy(const std::vector<NodeValidationRow>& rows) {
  AccuracyCounter c;
  for (const auto& r : rows)
    if (r.scenario == "Offline") c.add(r.simulated_tokens_per_s, r.measured_tokens_per_s);
  return c.result();
}

namespace {

// "<measured> | <simulated>" in `format`, or "- | -" where the source measured none.
std::string figure_cells(double measured, double simulated, const char* format) {
  if (!(measured > 0)) return "- | -";
  return fmt::format(fmt::runtime(format), measured) + " | " + fmt::format(fmt::runtime(format), simulated);
}
std::string mape_cell(const Accuracy& a) {
  return a.n > 0 ? fmt::format("{:.1f} | x{:.2f}", 100 * a.mape, a.bias) : "- | -";
}

}  // namespace

std::string node_validation_markdown(const NodeValidation& v, const std::string& source, const std::string& how) {
  std::string out = fmt::format(
      "Simulated vs measured, {} runs ({} replayed, {} skipped) at node scope (energy: wall power of the node's GPUs, "
      "host and supplies, where measured), under {}.\n\n"
      "| node | GPU | benchmark | scenario | TP x replicas | cap W | measured J/token | simulated | measured tok/s | "
      "simulated | measured node kW | simulated | measured TPOT ms | simulated |\n"
      "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      source, v.rows.size(), v.skipped.size(), how);
  for (const auto& r : v.rows)
    out += fmt::format(
        "| {} | {} | {} | {} | {} x {} | {} | {} | {:.0f} | {:.0f} | {} | {} |\n", r.node, r.gpu, r.benchmark,
        r.scenario, r.tensor_parallel, r.replicas, r.power_cap_w > 0 ? fmt::format("{:.0f}", r.power_cap_w) : "TDP",
        figure_cells(r.measured_energy_per_token_j, r.simulated_energy_per_token_j, "{:.3f}"), r.measured_tokens_per_s,
        r.simulated_tokens_per_s, figure_cells(r.measured_node_w / 1000, r.simulated_node_w / 1000, "{:.2f}"),
        figure_cells(1000 * r.measured_tpot_s, 1000 * r.simulated_tpot_s, "{:.1f}"));
  std::map<std::string, std::vector<NodeValidationRow>> by_group;
  for (const auto& r : v.rows) by_group[r.gpu + " | " + r.benchmark.substr(0, r.benchmark.find("-99"))].push_back(r);
  by_group["**all** | **all**"] = v.rows;
  out +=
      "\n| GPU | benchmark | runs | energy/token MAPE | bias | Offline throughput MAPE | bias | TPOT MAPE | bias |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [group, rows] : by_group)
    out += fmt::format("| {} | {} | {} | {} | {} |\n", group, rows.size(), mape_cell(node_energy_accuracy(rows)),
                       mape_cell(node_throughput_accuracy(rows)), mape_cell(node_tpot_accuracy(rows)));
  std::map<std::string, int> reasons;
  for (const auto& [row, reason] : v.skipped) ++reasons[reason];
  if (!reasons.empty()) out += "\nNot replayed:\n";
  for (const auto& [reason, count] : reasons) out += fmt::format("- {} runs: {}\n", count, reason);
  return out;
}

}  // namespace llmco2::evaluation
