// compare/capacity.h - capacity planning: per GPU type, the smallest deployment (tensor-parallel degree x replicas)
// whose replay of a log meets latency objectives at the 95th percentile, and its energy, GPU-hours and CO2.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "carbon/footprint.h"
#include "compare/module.h"
#include "serving/serve_sim.h"

namespace llmco2::compare {

struct ServingSlo {
  double ttft_s = 0;  // 0: no objective on time to first token
  double tpot_s = 0;  // 0: no objective on time per output token
  double quantile = 0.95;
};

// One replayed deployment.
struct CapacityCandidate {
  std::string gpu;
  int tensor_parallel = 1, replicas = 1;
  int pipeline_parallel = 1;  // stages of each replica, each of tensor_parallel GPUs (the search keeps the request's)
  int decode_replicas = 0;  // disaggregated: the decode pool's replicas (`replicas` the prefill pool's); 0: co-located
  bool disaggregated() const { return decode_replicas > 0; }
  std::string unavailable;  // why it cannot serve at all (weights do not fit...), else empty
  bool meets_slo = false;
  long completed = 0, rejected = 0;
  double ttft_q_s = 0, tpot_q_s = 0;  // at the SLO quantile
  double energy_j = 0, gpu_hours = 0, operational_g = 0, embodied_g = 0;
  double mean_batch = 1;  // the requests a replica ran at once, weighted by iteration time (ReplayTotals)
  bool embodied_known = true;
  // Power at the wall it is provisioned for: whole nodes (the deployment's GPUs over the node's GPUs, rounded up)
  // at the node's design power; the GPUs' TDP where the scope has no node (`nodes` 0).
  int nodes = 0;
  double provisioned_w = 0;
  bool over_power_budget = false;  // meets the SLOs, but its provisioned power exceeds CapacitySearch::power_budget_w
  double usd = 0;                  // GPU-hours at the user's price of its type, plus electricity at the wall (x PUE)
  int gpus() const { return tensor_parallel * pipeline_parallel * (replicas + decode_replicas); }
  std::string replicas_words() const {  // "4", or "2:4" prefill:decode
    return disaggregated() ? std::to_string(replicas) + ":" + std::to_string(decode_replicas)
                           : std::to_string(replicas);
  }
  double total_g() const { return operational_g + embodied_g; }
};

struct CapacityPlan {
  std::vector<CapacityCandidate> tried;  // every replay, in search order
  std::vector<size_t> chosen;            // per GPU type that can meet the SLOs: its cheapest deployment, by energy
};

struct CapacitySearch {
  std::vector<int> tensor_parallel = {1, 2, 4, 8};
  int max_replicas = 64;
  bool progress = false;
  long concurrency = 0;     // > 0: the log replayed as a closed loop of this many clients (ReplayOptions::concurrency)
  double prefix_share = 0;  // ReplayOptions::prefix_share
  double power_budget_w = 0;  // > 0: a deployment must be provisioned within this much power at the wall
  // Money: the user's price of a GPU-hour per GPU type (absent: 0) and of a kWh at the wall (the GPUs' energy x PUE).
  std::map<std::string, double> usd_per_gpu_hour;
  double usd_per_kwh = 0;
  // Disaggregated serving too (prefill_unit > 0): beside each co-located search, the fewest multiples k of a unit of
  // prefill_unit prefill and decode_unit decode replicas (both of the row's GPU type and tensor-parallel degree).
  int prefill_unit = 0, decode_unit = 0;
};

// Whole nodes of `node_gpus` GPUs holding `replicas` replicas of `tensor_parallel` GPUs: a replica stays within one
// node when it fits (floor(node_gpus / tensor_parallel) replicas a node), else spans whole nodes of its own.
int provisioned_nodes(int tensor_parallel, int replicas, int node_gpus);

// How the plan orders its chosen deployments: by energy (the default), CO2, dollars or GPU-hours.
enum class RankBy { energy, co2, usd, gpu_hours };
RankBy parse_rank_by(const std::string& name);  // throws Error naming the accepted values
double rank_figure(const CapacityCandidate& c, RankBy by);

// The deployment of one replica of `tensor_parallel` x `gpu`, resolved for that GPU type (its precision after the
// GPU's fallbacks, its energy scope, the scheduler settings); throws Error when it cannot serve.
using DeploymentFor = std::function<Deployment(const Gpu& gpu, int tensor_parallel)>;

// For each GPU type and tensor-parallel degree whose weights fit, the fewest replicas meeting `slo` (a doubling then
// a bisection over replicas: the latency quantiles fall as replicas are added), and with a disaggregation unit the
// fewest multiples of it likewise. The cheapest of a GPU type is the one
// with the fewest GPUs, then the least energy; under a power budget only deployments provisioned within it are
// chosen (more replicas only draw more). The chosen are ordered by `rank_by`.
CapacityPlan plan_capacity(const RequestLog& log, const std::vector<Gpu>& gpu_types,
                           const DeploymentFor& deployment_for, const SimParams& params, const ServingSlo& slo,
                           const CarbonFor& carbon, const CapacitySearch& search, RankBy rank_by = RankBy::energy);

// Writes a bar chart of the chosen deployments' energy, GPU-hours and CO2 (one group per GPU type) and its data as CSV
// into `dir`; returns "" or a warning about the plot.
std::string write_capacity_plot(const CapacityPlan& plan, const std::string& title, const std::filesystem::path& dir);

}  // namespace llmco2::compare
