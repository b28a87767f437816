// compare/setup_comparison.h - one request (or a whole log) on every GPU type and count that can serve it: energy,
// latency, operational and embodied CO2, CO2 per GPU, and the lowest-carbon setup meeting a latency objective.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "carbon/footprint.h"
#include "compare/module.h"
#include "predictor/input.h"
#include "trace/trace_account.h"
#include "trace/trace_stream.h"

namespace llmco2::compare {

struct SetupRow {
  std::string gpu;  // GPU id
  int gpus = 1;
  int stages = 1;                  // pipeline stages, each of `gpus` GPUs
  std::string unavailable;         // why the setup cannot serve (empty when it can)
  std::string scope = "gpu";       // the energy's scope: "gpu", or the node id whose wall power it is
  std::string dtype;               // the precision the setup runs, after its GPU's fallbacks
  std::vector<std::string> notes;  // the setup's own notes (fallbacks, waves, node)
  double energy_j = 0, latency_s = 0, operational_g = 0, embodied_g = 0;
  double output_tokens = 0;            // generated tokens the energy paid for (the request's batch x gen, or the log's)
  std::optional<Footprint> footprint;  // one request's, per phase (unset for a log)
  bool embodied_known = true;  // false: the GPU has no embodied figure, embodied_g is 0 and total_g() operational only
  double total_g() const { return operational_g + embodied_g; }
  double per_gpu_g() const { return total_g() / (gpus * stages); }
  bool meets_slo = true;
};

struct Comparison {
  std::vector<SetupRow> rows;   // GPU types in the order given, counts ascending
  std::optional<size_t> best;   // lowest total CO2 among the rows that serve and meet the objective
  std::string latency_meaning;  // "request latency" or "p90 request latency of the log"
};

// One setup of a comparison as the caller resolved it for its GPU type and count: what runs (the model, the GPU, the
// precision after that GPU's fallbacks, engine, scenario, and the request's batch and tokens) and how its carbon
// counts. The caller resolves and checks each setup on its own (api/resolve.h): nothing is copied between rows.
struct ComparedSetup {
  PredictorInput config;
  CarbonInputs carbon;
  std::vector<std::string> notes;
};
// The setup of `gpus` x `gpu`; throws Error when it cannot serve (the row is marked unavailable with the message).
using SetupFor = std::function<ComparedSetup(const Gpu& gpu, int gpus)>;

// `slo_s`: latency objective.
Comparison compare_request(const Predictor& predictor, const std::vector<Gpu>& gpu_types,
                           const std::vector<int>& counts, const SetupFor& setup_for, std::optional<double> slo_s);

// The same over a request log (the setups' tokens come from the log, their batch from the setup): totals of the log,
// latency = the 90th-percentile request latency. Rows of GPUs without an embodied figure compete on operational CO2
// alone (embodied_known false); the embodied share is small for inference (under 1% of the total for H100 at
// 430 g/kWh), so the choice rarely turns on it.
Comparison compare_log(const Predictor& predictor, const RequestLog& log, const std::vector<Gpu>& gpu_types,
                       const std::vector<int>& counts, const SetupFor& setup_for, std::optional<double> slo_s,
                       double grid_ratio);
// The same over a log reduced to its shapes (survey_log_shapes), the setups scored on `threads` workers (0: every
// core); the rows equal compare_log's on the same requests.
Comparison compare_log_shapes(const Predictor& predictor, const std::vector<ShapeCount>& shapes,
                              const std::vector<Gpu>& gpu_types, const std::vector<int>& counts,
                              const SetupFor& setup_for, std::optional<double> slo_s, double grid_ratio, int threads);

// The paper's figures 12-14: for each (batch, prompt) pair and GPU count on one GPU type, a request's operational
// CO2 per GPU and total CO2. Setups that cannot serve are left out.
struct SweepPoint {
  long batch = 1, prompt_tokens = 0;
  int gpus = 1;
  double latency_s = 0, operational_per_gpu_g = 0, total_g = 0, embodied_g = 0;
  bool embodied_known = true;  // false: embodied_g is 0 and total_g operational only
};
// The setup of `gpus` GPUs of the plotted type at `batch` and `prompt_tokens`; throws Error when it cannot serve.
using SweepSetupFor = std::function<ComparedSetup(int gpus, long batch, long prompt_tokens)>;
std::vector<SweepPoint> sweep_gpu_counts(const Predictor& predictor, const std::vector<long>& batches,
                                         const std::vector<long>& prompts, const std::vector<int>& counts,
                                         const SweepSetupFor& setup_for);

// Writes the comparison as the table shows it: setups.csv (every row, those that cannot serve with the reason) and
// setups.png (total CO2 and latency of each setup that serves, the lowest-carbon one marked) into `dir`; returns "" or
// a warning about the plot.
std::string write_setups_plot(const Comparison& comparison, const std::string& title, const std::filesystem::path& dir);

// Writes the two plots (operational CO2 per GPU and total CO2 against GPU count, one line per batch/prompt) and the
// data as CSV into `dir`; returns "" or a warning about the plots.
std::string write_sweep(const std::vector<SweepPoint>& points, const std::string& title,
                        const std::filesystem::path& dir);

}  // namespace llmco2::compare
