// calibration/kernel_profiles.h - Vidur's measured per-operator latencies as kernel samples, and the fit of the
// kernel-time model's parameters (KernelParams) to them with held-out scores.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "calibration/module.h"
#include "hardware/gpu.h"
#include "sim/kernel_time.h"

namespace llmco2::calibration {

// The shapes of one profiled model as Vidur's mlp.csv states them.
struct VidurModelShape {
  int n_head = 0;
  int n_kv_head = 0;
  int n_embd = 0;
  int n_expanded_embd = 0;  // MLP intermediate size
  bool gated_mlp = true;
};

// One measured kernel: what it did, where, and how long it took (median of Vidur's repeats).
struct KernelSample {
  std::string gpu_id;      // catalog id whose datasheet roofs are used ("a100-80gb-sxm")
  std::string generation;  // "ampere", "hopper"
  std::string group;       // compute: the model ("meta-llama/Llama-2-7b-hf"); network: the link class
  std::string op;          // "attn_pre_proj", ..., "all_reduce"
  std::string engine;      // the engine whose kernels ran (AIConfigurator tables: vllm, sglang, trtllm); else empty
  int tokens = 0;          // compute: GEMM rows; network: 0
  int gpus = 1;            // TP degree (compute) or all-reduce workers (network)
  double size_bytes = 0;   // network: the all-reduced message
  KernelWork work;
  DeviceRoofs roofs;
  double measured_s = 0;
};

// The operators of Vidur's mlp.csv, in the file's order.
const std::vector<std::string>& vidur_compute_ops();

// The work of one operator on one GPU at `tokens` rows and TP degree `tp` (fp16 weights and activations).
KernelWork vidur_op_work(const std::string& op, const VidurModelShape& shape, int tokens, int tp, const Gpu& gpu);

// Every row x operator of one mlp.csv as samples; `model` names the group ("org/name").
std::vector<KernelSample> read_vidur_mlp(const std::filesystem::path& csv, const Gpu& gpu, const std::string& model);
// An all-reduce of `bytes` over `gpus` GPUs of `gpu`'s type (op "all_reduce x<gpus>", group: the link class), timed at
// `measured_s`.
KernelSample allreduce_sample(const Gpu& gpu, int gpus, double bytes, double measured_s);
// The single-node all-reduces of one all_reduce.csv (num_workers == devices_per_node >= 2) on `gpu`'s links.
std::vector<KernelSample> read_vidur_all_reduce(const std::filesystem::path& csv, const Gpu& gpu);

struct KernelProfileSet {
  std::vector<KernelSample> compute;
  std::vector<KernelSample> network;
};

// Reads dir/compute/{a100,h100}/<org>/<model>/mlp.csv and dir/network/<node>/all_reduce.csv with the SKUs Vidur
// profiled: a100 -> a100-80gb-sxm, h100 -> h100-sxm; *_dgx on those; *_pairwise_nvlink on a100-80gb-pcie / h100-nvl.
KernelProfileSet read_vidur_profiles(const std::filesystem::path& dir);
// data_dir()/measured/vidur.
std::filesystem::path default_vidur_dir();

// The operators the compute fit uses. `emb` is read and scored but not fitted (see docs/kernel-fit.md).
bool fitted_compute_op(const std::string& op);

// Predicted seconds of a sample under `params` (its generation's curve, or its link class's network values).
double predict_sample_s(const KernelSample& sample, const KernelParams& params);

// The KernelEfficiency fields Vidur's operator profiles identify (no attention, no fp8 or fp4 GEMMs).
const std::vector<std::string>& vidur_fitted_fields();
// Fits one generation's vidur_fitted_fields on `samples[indices]` (the others neutral), minimising the
// squared log error by a bounded, deterministic pattern search inside kernel_param_ranges().
KernelEfficiency fit_kernel_efficiency(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices);
// The same for the fields named in `fields` only, the others kept at `start`'s values.
KernelEfficiency fit_kernel_efficiency(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices,
                                       const KernelEfficiency& start, const std::vector<std::string>& fields);
// Fits one link class's NetworkEfficiency the same way. call_latency_s only where every sample is an nccl-tests row
// (engine "nccl": GPU time); Vidur's all-reduces, eager calls timed with the host's launch in them (small messages take
// 7-60 us without a trend in size or GPU count), do not separate a call cost from the ring steps, so their classes keep
// the two-field ring (call_latency_s 0) they had before the tables.
NetworkEfficiency fit_network_efficiency(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices);
// Fits an engine's own all-reduce the same way, each sample timed as the simulator times it: the shorter of that and
// NCCL's ring with `params`' entry for the sample's generation and link class.
DirectAllReduceEfficiency fit_direct_allreduce_efficiency(const std::vector<KernelSample>& samples,
                                                          const std::vector<size_t>& indices,
                                                          const KernelParams& params);

// The decade of a network sample's message bytes (3 for 1-10 kB): the fold a leave-one-decade-out fit leaves out.
int size_decade(const KernelSample& sample);

// The field-by-field mean of fitted entries (a "default" entry for what has no entry of its own).
template <typename Struct>
Struct mean_of(const std::map<std::string, Struct>& entries,
               const std::vector<std::pair<const char*, double Struct::*>>& fields) {
  Struct mean;
  for (auto [name, field] : fields) {
    double sum = 0;
    for (const auto& [key, value] : entries) sum += value.*field;
    mean.*field = sum / static_cast<double>(entries.size());
  }
  return mean;
}

struct KernelFit {
  KernelParams params;
  std::vector<double> compute_fitted_s, compute_held_out_s;  // per compute sample
  std::vector<double> network_fitted_s, network_held_out_s;  // per network sample, "<generation>/<class>" entries
  std::vector<double> network_other_gpu_s;  // per network sample: the class fitted on the other generations only
};

// The whole fit: per generation on every model, held out by leaving one model out; per generation and link class on
// every size, held out by leaving one decade of message sizes out; per link class pooled over generations (the entry
// other generations use), scored on each generation when fitted on the others. Defaults: means of the fitted entries.
KernelFit fit_kernel_params(const KernelProfileSet& set);

// Mean absolute percentage error of one (gpu, op) group.
struct OpScore {
  std::string gpu_id;
  std::string op;
  size_t samples = 0;
  double fitted_mape = 0;
  double held_out_mape = 0;
  double other_gpu_mape = 0;      // network: the pooled class fitted without this generation
  size_t long_samples = 0;        // measured >= kLongKernelS: past the timer's 1 us resolution and the floor
  double held_out_mape_long = 0;  // held-out MAPE over those
};
constexpr double kLongKernelS = 10e-6;
std::vector<OpScore> score_by_op(const std::vector<KernelSample>& samples, const std::vector<double>& fitted_s,
                                 const std::vector<double>& held_out_s, const std::vector<double>& other_gpu_s = {});

// Scatter plot of held-out predicted vs measured seconds (log-log, one colour per GPU) into `png`; returns "" or a
// one-line warning (gnuplot missing).
std::string plot_kernel_fit(const KernelProfileSet& set, const KernelFit& fit, const std::filesystem::path& png);

// The generated report (docs/kernel-fit.md): tables, fitted values, bounds; `plot` names a PNG beside it or is empty.
std::string kernel_fit_markdown(const KernelProfileSet& set, const KernelFit& fit, const std::string& plot,
                                const std::string& command);
// The kernels.json content: the parameters plus the reported per-op MAPE (read back by the tests).
Json kernel_fit_json(const KernelProfileSet& set, const KernelFit& fit);

}  // namespace llmco2::calibration
