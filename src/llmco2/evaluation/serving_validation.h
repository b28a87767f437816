// evaluation/serving_validation.h - measured steady-state load tests (ML.ENERGY v3) replayed through the serving
// simulation as their harness ran them, and the simulated energy per request and inter-token latency scored against
// the measured ones.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/accuracy.h"
#include "core/progress.h"
#include "dataset/record.h"
#include "dataset/request_log.h"
#include "evaluation/module.h"
#include "serving/serve_sim.h"

namespace llmco2::evaluation {

// A closed load test as the ML.ENERGY benchmark runs one (mlenergy/benchmark/llm/benchmark.py): every request sent at
// once (request rate inf), the engine's max_num_seqs as the only throttle, prompts of one length, outputs drawn
// from the measured length distribution (mean and coefficient of variation; a gamma law of that mean and spread, cut
// at the harness's max_tokens).
struct LoadTest {
  long requests = 1024;
  double prompt_tokens = 0;
  double gen_mean = 0, gen_cv = 0;
  long max_output_tokens = 0;  // 0: no cut
  int beams = 1;               // sequences each request decodes (beam search, MLPerf gptj: 4)
  uint64_t seed = 1;
};

RequestLog load_test_log(const LoadTest& test);

// The harness's steady state: from the moment max_num_seqs requests have their first token to the moment all but
// max_num_seqs + 1 requests have finished. Energy per output token is the window's energy (busy and idle, all GPUs)
// over the tokens produced in it; the inter-token latency is the median gap a streaming client sees in it.
struct SteadyState {
  double window_s = 0;
  double energy_per_token_j = 0;
  double median_itl_s = 0;
  double mean_running = 0;  // requests running per replica, time-weighted
  double mean_tpot_s = 0;   // open load tests: mean over the window's arrivals of (finish - first token) / (tokens - 1)
  long tokens = 0;
  bool valid = false;  // false when the run never reached a steady state (too few requests)
};

SteadyState run_load_test(const Deployment& deployment, const SimParams& params, const LoadTest& test);

// An open load test (MLPerf Server): requests arrive as a Poisson process of `rate_per_s`. The steady state is the
// window between the arrivals of the 20th and 80th percentile requests.
SteadyState run_open_load_test(const Deployment& deployment, const SimParams& params, const LoadTest& test,
                               double rate_per_s);

// The figures of the steps inside [start_s, end_s] (steps cut at the edges count in proportion; tokens and
// inter-token gaps of the steps ending inside): invalid when nothing was produced there.
SteadyState steady_window(const std::vector<StepRecord>& steps, double start_s, double end_s, int replicas);

// One measured steady-state row and its replay.
struct ServingValidationRow {
  size_t row = 0;  // index into the rows given
  std::string model, gpu, task;
  int tensor_parallel = 1, data_parallel = 1;
  long max_num_seqs = 0;
  double measured_energy_per_request_j = 0, simulated_energy_per_request_j = 0;
  double measured_itl_s = 0, simulated_itl_s = 0;
  double measured_batch = 0, simulated_batch = 0;
};

struct ServingValidation {
  std::vector<ServingValidationRow> rows;
  std::vector<std::pair<size_t, std::string>> skipped;  // row index and why it was not replayed
};

// Replays each row of `rows` that `take` accepts with `replay(row, index)`, with a progress line; a row whose replay
// throws goes to `skipped` with the reason. Shared by the GPU-scope and node-scope validations.
template <typename Validation, typename Take, typename Replay>
Validation replay_rows(const std::vector<DatasetRow>& rows, Take take, const char* what, bool progress, Replay replay) {
  Validation v;
  std::vector<size_t> chosen;
  for (size_t i = 0; i < rows.size(); ++i)
    if (take(rows[i])) chosen.push_back(i);
  Progress bar(what, static_cast<long>(chosen.size()), progress);
  for (size_t k = 0; k < chosen.size(); ++k) {
    try {
      v.rows.push_back(replay(rows[chosen[k]], chosen[k]));
    } catch (const std::exception& e) {
      v.skipped.emplace_back(chosen[k], e.what());
    }
    bar.update(static_cast<long>(k + 1));
  }
  bar.finish();
  return v;
}

// Replays every steady_state row of `rows` that `chosen` accepts.
ServingValidation validate_serving(const std::vector<DatasetRow>& rows,
                                   const std::function<bool(const DatasetRow&)>& chosen, const SimParams& params,
                                   bool progress);

// MAPE and EBA of energy per request and of median inter-token latency over the chosen rows.
Accuracy serving_energy_accuracy(const std::vector<ServingValidationRow>& rows);
Accuracy serving_itl_accuracy(const std::vector<ServingValidationRow>& rows);

}  // namespace llmco2::evaluation
