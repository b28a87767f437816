// serving/timeline.h - a replay's meter readings in fixed time bins (power, running batch, queue, KV-cache use,
// all replicas together) and its plots: the time series and the CDF of request latencies.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/log_histogram.h"
#include "serving/module.h"
#include "serving/serve_sim.h"

namespace llmco2::serving {

// One bin of a replay's timeline (a trace's timeline bins are trace/trace_account.h's TimelineBin).
struct ReplayBin {
  double energy_j = 0;    // all GPUs
  double busy_s = 0;      // replica-seconds in iterations
  double running_s = 0;   // integral of running requests (all replicas) over time
  double waiting_s = 0;   // integral of waiting requests
  double kv_share_s = 0;  // integral of the KV share, summed over replicas
};

// A timeline holds at most kMaxServingBins bins: when a replay runs longer, neighbouring bins merge in pairs and the
// bin width doubles (so memory stays bounded whatever the arrival times).
inline constexpr size_t kMaxServingBins = 100000;

class Timeline {
 public:
  Timeline(double bin_s, int replicas);
  void add(const StepRecord& step);  // spreads the record over the bins it spans (bin_s() may double)
  double bin_s() const { return bin_s_; }
  const std::vector<ReplayBin>& bins() const { return bins_; }
  // CSV: bin start, mean power (W, all GPUs), mean running, mean waiting, mean KV share (per replica), busy share.
  std::string csv() const;

 private:
  void coarsen();  // merges bins in pairs, doubling bin_s_
  double bin_s_;
  int replicas_;
  std::vector<ReplayBin> bins_;
};

struct LatencyHistograms {
  LogHistogram queue_s, ttft_s, tpot_s, e2e_s;
};

// Writes timeline.csv, timeline.png (four panels) and latency-cdf.png into `dir`; returns "" or a warning.
std::string write_serving_plots(const Timeline& timeline, const LatencyHistograms& latencies, const std::string& title,
                                const std::filesystem::path& dir);

}  // namespace llmco2::serving
