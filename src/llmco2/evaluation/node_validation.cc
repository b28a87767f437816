// evaluation/node_validation.cc - MLPerf power runs replayed at node scope.
#include "evaluation/node_validation.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "core/progress.h"
#include "hardware/node.h"
#include "sim/label.h"

namespace llmco2 {

std::string note_value(const DatasetRow& row, std::string_view key) {
  const std::string needle = std::string(key) + " ";
  for (size_t at = 0; (at = row.notes.find(needle, at)) != std::string::npos; at += needle.size()) {
    if (at > 0 && row.notes[at - 1] != ' ' && row.notes[at - 1] != ';') continue;
    const size_t start = at + needle.size(), end = row.notes.find(';', start);
    return row.notes.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  return "";
}

namespace {

// Energy and tokens of the steps inside [start_s, end_s] (steps cut at the edges count in proportion).
SteadyState window_of(const std::vector<StepRecord>& steps, double start_s, double end_s, int replicas) {
  SteadyState out;
  double energy_j = 0, running_s = 0;
  for (const StepRecord& s : steps) {
    const double overlap_s = std::min(end_s, s.start_s + s.time_s) - std::max(start_s, s.start_s);
    if (overlap_s <= 0 || s.time_s <= 0) continue;
    energy_j += s.energy_j * overlap_s / s.time_s;
    running_s += static_cast<double>(s.idle ? 0 : s.running) * overlap_s;
    const double end_of_step = s.start_s + s.time_s;
    if (end_of_step > start_s && end_of_step <= end_s) out.tokens += s.sampled;
  }
  if (out.tokens == 0 || !(end_s > start_s)) return out;
  out.window_s = end_s - start_s;
  out.energy_per_token_j = energy_j / static_cast<double>(out.tokens);
  out.mean_running = running_s / (out.window_s * replicas);
  out.valid = true;
  return out;
}

}  // namespace

SteadyState run_open_load_test(const Deployment& d, const SimParams& params, const LoadTest& test,
                               double rate_per_s) {
  if (!(rate_per_s > 0)) fail("an open load test needs a positive arrival rate, got {}", rate_per_s);
  RequestLog log = load_test_log(test);
  std::mt19937_64 rng(test.seed + 7919);
  std::exponential_distribution<double> gap(rate_per_s);
  double t = 0;
  for (LoggedRequest& r : log.requests) r.time_s = (t += gap(rng));
  std::vector<StepRecord> steps;
  ReplayOptions options;
  options.on_step = [&](const StepRecord& s) { steps.push_back(s); };
  replay(log, d, params, options, [](const ServedRequest&) {});
  const size_t n = log.requests.size();
  return window_of(steps, *log.requests[n / 5].time_s, *log.requests[4 * n / 5].time_s, d.replicas);
}

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
  d.scope.node = NodeCatalog::bundled().resolve(note_value(row, "node"));
  if (const std::string cap = note_value(row, "power_cap_w"); !cap.empty()) d.power_cap_w = std::stod(cap);
  if (const std::string batch = note_value(row, "max_batch"); !batch.empty()) d.max_num_seqs = std::stol(batch);
  if (const std::string tokens = note_value(row, "max_tokens"); !tokens.empty()) d.max_batched_tokens = std::stol(tokens);
  return d;
}

NodeValidationRow replay_node_row(const DatasetRow& row, size_t index, const SimParams& params, CatalogCache& catalogs) {
  if (!row.energy_j.total || !row.latency_s.total || row.gen_tokens < 1)
    fail("needs the node's energy per sample and its time per sample");
  const SimConfig config = config_for_row(row, catalogs);
  NodeValidationRow out;
  out.row = index;
  out.node = note_value(row, "node"), out.scenario = note_value(row, "scenario"),
  out.benchmark = note_value(row, "benchmark");
  out.gpu = row.gpu, out.model = row.model;
  out.tensor_parallel = config.request.gpus, out.replicas = std::max(1, row.data_parallel);
  const Deployment d = deployment_for(row, config);
  out.power_cap_w = d.power_cap_w;
  const long max_seqs = scheduler_limits(d).max_num_seqs;
  LoadTest test;
  test.requests = std::max(2000L, 4 * max_seqs);
  test.prompt_tokens = row.prompt_tokens, test.gen_mean = row.gen_tokens, test.gen_cv = kOutputCv;
  test.max_output_tokens = max_new_tokens(out.benchmark);
  test.seed = index + 1;
  const double samples_per_s = 1.0 / *row.latency_s.total;
  const SteadyState s = out.scenario == "Server" ? run_open_load_test(d, params, test, samples_per_s / out.replicas)
                                                 : run_load_test(d, params, test);
  if (!s.valid) fail("the replay reached no steady state");
  out.measured_energy_per_token_j = *row.energy_j.total / row.gen_tokens;
  out.measured_tokens_per_s = samples_per_s * row.gen_tokens;
  out.measured_node_w = *row.energy_j.total * samples_per_s;
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
      rows, [&](const DatasetRow& r) { return r.has_caveat("node_wall_power") && chosen_row(r); }, "node validation",
      progress, [&](const DatasetRow& row, size_t index) { return replay_node_row(row, index, params, catalogs); });
}

Accuracy node_energy_accuracy(const std::vector<NodeValidationRow>& rows) {
  AccuracyCounter c;
  for (const auto& r : rows) c.add(r.simulated_energy_per_token_j, r.measured_energy_per_token_j);
  return c.result();
}

Accuracy node_throughput_accuracy(const std::vector<NodeValidationRow>& rows) {
  AccuracyCounter c;
  for (const auto& r : rows)
    if (r.scenario == "Offline") c.add(r.simulated_tokens_per_s, r.measured_tokens_per_s);
  return c.result();
}

}  // namespace llmco2
