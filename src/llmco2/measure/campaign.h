// measure/campaign.h - a measurement campaign: each configuration of a plan run on real GPUs by a runner process,
// its energy read from NVML, repeated, split into prefill and decode, and appended to a dataset file (fsynced) as
// soon as it is done; re-running the same command resumes with the configurations not yet measured.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "dataset/plan.h"
#include "measure/module.h"

namespace llmco2::measure {

struct CampaignOptions {
  std::filesystem::path plan, out;
  std::string runner;  // the runner's command line
  int repeats = 5, warmup = 1;
  std::vector<int> devices;  // NVML indices of the GPUs to use; empty: 0 .. gpus-1 of each configuration
  std::string nvml_library = "libnvidia-ml.so.1";
  double idle_s = 5;        // idle power sampling before the campaign
  double timeout_s = 1800;  // longest wait for one answer of the runner (model loading included)
  std::string source = "nvml";
  std::chrono::milliseconds sample_interval{20};  // power sampling, for GPUs without an energy counter
  bool progress = true;
};

struct CampaignResult {
  long planned = 0, already_done = 0, measured = 0, failed = 0, rejected_plan_rows = 0;
  std::vector<double> idle_w;      // per device used, measured before the campaign
  std::filesystem::path failures;  // where failed configurations are listed
};

// Runs the campaign (throws Error when it cannot start: no NVML, unreadable plan, ...). Files beside `out`:
// <out>.failures.csv (every failed configuration with its error), <out>.runner.log (the runner's stderr),
// <out>.campaign.json (driver, GPUs, idle power, settings).
CampaignResult run_campaign(const CampaignOptions& options);

// Mean and relative sample standard deviation (0 for a single value) of repeated measurements.
struct RepeatStats {
  double mean = 0, spread = 0;
};
RepeatStats repeat_stats(const std::vector<double>& values);

// What identifies a configuration across runs of a campaign: model, GPU, GPU count, batch, tokens, precision.
std::string configuration_key(const std::string& model, const std::string& gpu, int gpus, long batch, long prompt,
                              long gen, const std::string& dtype);

// Makes `path` end on a complete line: drops a partial last line left by an interrupted write. Returns the number
// of bytes dropped.
size_t repair_torn_tail(const std::filesystem::path& path);

// Appends `text` (whole lines) to `path`: the old contents and `text` go to a unique temporary file, fsynced and
// renamed over `path`, so a reader never sees a torn line and the file always matches the run's manifest (rows are few:
// a campaign measures minutes per row). Appenders to one file (two campaigns sharing an --out, one per GPU) take turns
// through an exclusive lock on `<path>.lock`, left beside it, so that neither renames its copy over the other's row.
void append_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace llmco2::measure
