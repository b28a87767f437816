// evaluation/serving_validation.cc - ML.ENERGY-style load tests: the synthetic log, the steady-state window and the
// comparison with the measured rows.
#include "evaluation/serving_validation.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/csv.h"
#include "core/error.h"
#include "core/progress.h"
#include "sim/label.h"

namespace llmco2::evaluation {

RequestLog load_test_log(const LoadTest& test) {
  if (test.requests < 1 || !(test.gen_mean >= 1) || !(test.prompt_tokens >= 1))
    fail("a load test needs requests, a prompt length and a mean output length of at least 1");
  RequestLog log;
  log.source = "load test";
  log.format = "dataset";
  std::mt19937_64 rng(test.seed);
  const bool spread = test.gen_cv > 0;
  const double shape = spread ? 1.0 / (test.gen_cv * test.gen_cv) : 1.0;
  std::gamma_distribution<double> gen(shape, test.gen_mean / shape);
  for (long i = 0; i < test.requests; ++i) {
    LoggedRequest r;
    r.line = i + 1;
    r.prompt_tokens = std::max(1L, std::lround(test.prompt_tokens));
    long tokens = std::max(1L, std::lround(spread ? gen(rng) : test.gen_mean));
    if (test.max_output_tokens > 0) tokens = std::min(tokens, test.max_output_tokens);
    r.gen_tokens = tokens;
    r.beams = test.beams;
    log.requests.push_back(r);
  }
  return log;
}

namespace {

// The value at which the running weight reaches half the total.
double weighted_median(std::vector<std::pair<double, double>> values) {
  std::sort(values.begin(), values.end());
  double total = 0;
  for (const auto& [v, w] : values) total += w;
  double seen = 0;
  for (const auto& [v, w] : values)
    if ((seen += w) >= total / 2) return v;
  return values.empty() ? 0.0 : values.back().first;
}

// The k-th smallest (0-based) of the values.
double kth(std::vector<double> values, size_t k) {
  std::nth_element(values.begin(), values.begin() + static_cast<long>(k), values.end());
  return values[k];
}

}  // namespace

SteadyState steady_window(const std::vector<StepRecord>& steps, double start_s, double end_s, int replicas) {
  SteadyState out;
  if (!(end_s > start_s)) return out;
  double energy_j = 0, running_s = 0;
  std::vector<std::pair<double, double>> gaps;  // (inter-token gap, how many clients saw it)
  for (const StepRecord& s : steps) {
    const double overlap_s = std::min(end_s, s.start_s + s.time_s) - std::max(start_s, s.start_s);
    if (overlap_s <= 0 || s.time_s <= 0) continue;
    energy_j += s.energy_j * overlap_s / s.time_s;
    running_s += static_cast<double>(s.idle ? 0 : s.running) * overlap_s;
    const double end_of_step = s.start_s + s.time_s;
    if (end_of_step <= start_s || end_of_step > end_s) continue;
    out.tokens += s.sampled;
    if (s.decodes > 0) gaps.emplace_back(s.time_s, static_cast<double>(s.decodes));
  }
  if (out.tokens == 0) return out;
  out.window_s = end_s - start_s;
  out.energy_per_token_j = energy_j / static_cast<double>(out.tokens);
  out.median_itl_s = weighted_median(std::move(gaps));
  out.mean_running = running_s / (out.window_s * replicas);
  out.valid = true;
  return out;
}

// The replay of `log` with every iteration and idle gap recorded.
std::vector<StepRecord> replay_steps(const RequestLog& log, const Deployment& d, const SimParams& params,
                                     const RequestSink& on_request) {
  std::vector<StepRecord> steps;
  ReplayOptions options;
  options.on_step = [&](const StepRecord& s) { steps.push_back(s); };
  replay(log, d, params, options, on_request);
  return steps;
}

SteadyState run_load_test(const Deployment& d, const SimParams& params, const LoadTest& test) {
  std::vector<double> first_token_s, finish_s;
  const std::vector<StepRecord> steps = replay_steps(load_test_log(test), d, params, [&](const ServedRequest& r) {
    if (r.finish_s < 0) return;
    first_token_s.push_back(r.first_token_s);
    finish_s.push_back(r.finish_s);
  });
  const size_t concurrency = static_cast<size_t>(scheduler_limits(d).max_num_seqs) * d.replicas;
  if (finish_s.size() < concurrency + 3) return {};
  const double start_s = kth(first_token_s, concurrency - 1);
  const double end_s = kth(finish_s, finish_s.size() - concurrency - 2);
  return steady_window(steps, start_s, end_s, d.replicas);
}

SteadyState run_open_load_test(const Deployment& d, const SimParams& params, const LoadTest& test, double rate_per_s) {
  if (!(rate_per_s > 0)) fail("an open load test needs a positive arrival rate, got {}", rate_per_s);
  RequestLog log = load_test_log(test);
  std::mt19937_64 rng(test.seed + 7919);
  std::exponential_distribution<double> gap(rate_per_s);
  double t = 0;
  for (LoggedRequest& r : log.requests) r.time_s = (t += gap(rng));
  const size_t n = log.requests.size();
  // The replay's clock starts at the first arrival.
  const double origin_s = *log.requests[0].time_s;
  const double start_s = *log.requests[n / 5].time_s - origin_s, end_s = *log.requests[4 * n / 5].time_s - origin_s;
  double tpot_sum_s = 0;
  long tpot_count = 0;
  const std::vector<StepRecord> steps = replay_steps(log, d, params, [&](const ServedRequest& r) {
    if (r.finish_s < 0 || r.gen_tokens < 2 || r.arrival_s < start_s || r.arrival_s > end_s) return;
    tpot_sum_s += (r.finish_s - r.first_token_s) / static_cast<double>(r.gen_tokens - 1);
    ++tpot_count;
  });
  SteadyState s = steady_window(steps, start_s, end_s, d.replicas);
  if (tpot_count > 0) s.mean_tpot_s = tpot_sum_s / static_cast<double>(tpot_count);
  return s;
}

namespace {

// The harness's task settings (ml-energy/benchmark configs/vllm/<task>/benchmark.yaml, sweep_defaults): requests per
// repeat, max_tokens, and repeats that grow with max_num_seqs so that a steady state exists.
struct TaskSettings {
  long base_requests;
  long max_output_tokens;
};

TaskSettings task_settings(const std::string& task) {
  if (task == "gpqa") return {198, 32768};
  if (task == "sourcegraph-fim") return {1024, 2048};
  return {1024, 4096};  // lm-arena-chat
}

// The source's median inter-token latency (ML.ENERGY v3 keeps it in the notes; its latency_total is a request's time in
// the running batch), else the mean over the row's decode: latency / (gen - 1).
double measured_itl_s(const DatasetRow& row) {
  const std::string median_ms = row.note("median_itl_ms");
  if (median_ms.empty()) return *row.latency_s.total / (row.gen_tokens - 1);
  const std::optional<double> itl_ms = parse_double(median_ms);
  if (!itl_ms || !(*itl_ms > 0)) fail("median_itl_ms must be a positive number of milliseconds, got '{}'", median_ms);
  return *itl_ms / 1000;
}

ServingValidationRow replay_row(const DatasetRow& row, size_t index, const SimParams& params, CatalogCache& catalogs) {
  if (!row.max_batch || !row.energy_j.total || !row.latency_s.total || row.gen_tokens < 2)
    fail("needs max_num_seqs, a total energy and a latency over at least two output tokens");
  const SimConfig config = config_for_row(row, catalogs);
  ServingValidationRow out;
  out.row = index;
  out.model = row.model, out.gpu = row.gpu, out.task = row.note("task");
  out.tensor_parallel = config.request.gpus, out.data_parallel = std::max(1, row.data_parallel);
  Deployment d;
  d.model = *config.model, d.gpu = *config.gpu, d.setup = config.request;
  d.setup.batch = 1;
  d.sampling = config.scenario.sampling;
  d.max_num_seqs = std::max(1L, std::lround(*row.max_batch / out.data_parallel));  // per engine (vLLM's cap)
  d.max_batched_tokens = 8192;  // the harness's vLLM configs (monolithic.config.yaml)
  out.max_num_seqs = d.max_num_seqs;
  const TaskSettings task = task_settings(out.task);
  LoadTest test;
  const long repeats =
      std::max(1L, (2 * d.max_num_seqs * out.data_parallel + task.base_requests - 1) / task.base_requests);
  test.requests = std::max(1L, task.base_requests * repeats / out.data_parallel);
  test.prompt_tokens = row.prompt_tokens;
  test.gen_mean = row.gen_tokens;
  test.gen_cv = row.gen_tokens_cv.value_or(0.0);
  test.max_output_tokens = task.max_output_tokens;
  test.seed = index + 1;
  const SteadyState s = run_load_test(d, params, test);
  if (!s.valid) fail("the load test reached no steady state");
  out.measured_energy_per_request_j = *row.energy_j.total / row.batch;
  out.simulated_energy_per_request_j = s.energy_per_token_j * row.gen_tokens;  // as the source defines it
  out.measured_itl_s = measured_itl_s(row);
  out.simulated_itl_s = s.median_itl_s;
  out.measured_batch = row.batch;
  out.simulated_batch = s.mean_running * out.data_parallel;
  return out;
}

}  // namespace

ServingValidation validate_serving(const std::vector<DatasetRow>& rows,
                                   const std::function<bool(const DatasetRow&)>& chosen_row, const SimParams& params,
                                   bool progress) {
  CatalogCache catalogs;
  return replay_rows<ServingValidation>(
      rows, [&](const DatasetRow& r) { return r.measures == Measures::steady_state && chosen_row(r); },
      "serving validation", progress,
      [&](const DatasetRow& row, size_t index) { return replay_row(row, index, params, catalogs); });
}

Accuracy serving_energy_accuracy(const std::vector<ServingValidationRow>& rows) {
  AccuracyCounter c;
  for (const auto& r : rows) c.add(r.simulated_energy_per_request_j, r.measured_energy_per_request_j);
  return c.result();
}

Accuracy serving_itl_accuracy(const std::vector<ServingValidationRow>& rows) {
  AccuracyCounter c;
  for (const auto& r : rows) c.add(r.simulated_itl_s, r.measured_itl_s);
  return c.result();
}

}  // namespace llmco2::evaluation
