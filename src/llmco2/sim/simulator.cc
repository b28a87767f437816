// sim/simulator.cc - kernel times from Roofline peaks with shape-dependent efficiencies, host overheads and
// all-reduce waits; per-GPU power between idle and TDP from how busy the kernels keep compute and memory.
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "features/features.h"
#include "graph/kernel_graph.h"
#include "graph/layer_kernels.h"

namespace llmco2 {
namespace {

SimKernelClass kernel_class(KernelType type) {
  switch (type) {
    case KernelType::linear: case KernelType::router: case KernelType::lm_head: return SimKernelClass::matrix;
    case KernelType::matmul_qk: case KernelType::matmul_sv: case KernelType::fused_attention:
      return SimKernelClass::attention;
    case KernelType::allreduce: return SimKernelClass::network;
    default: return SimKernelClass::vector;
  }
}

// GEMM rows one launch of the node processes per step; routed experts split the tokens among the loaded experts.
double rows_per_launch(const KernelNode& node, Phase phase, double steps, const ModelSpec& model) {
  const double rows = node.cost(phase).tokens / steps;
  if (node.expert != "routed" || !model.moe) return rows;
  const double loaded = phase == Phase::prefill ? node.experts_loaded_prefill : node.experts_loaded_decode;
  return rows * model.moe->experts_per_token / std::max(loaded, 1.0);
}

SimKernel sim_kernel(const KernelNode& node, Phase phase, double steps, double count, const ModelSpec& model,
                     const GraphFeatures& features, const Gpu& gpu) {
  const KernelCost& c = node.cost(phase);
  SimKernel k;
  k.kind = kernel_class(node.type);
  k.count = count;
  k.ops = c.ops / steps;
  k.mem_bytes = c.mem_bytes() / steps;
  k.net_bytes = c.net_bytes / steps;
  k.rows = rows_per_launch(node, phase, steps, model);
  k.peak_ops_per_s = kernel_roofs(node.type, features, gpu).peak_ops_per_s;
  return k;
}

// One segment of `steps` identical steps of `phase` of the graph built for `request`.
SimSegment segment(const ModelSpec& model, const Gpu& gpu, const Request& request, Phase phase, double steps) {
  const KernelGraph graph = build_kernel_graph(model, request);
  const GraphFeatures features = compute_features(graph, gpu, request);
  const double graph_steps = phase_shape(phase, request).steps;
  SimSegment s;
  s.steps = steps;
  for (const auto& node : graph.nodes)
    s.kernels.push_back(sim_kernel(node, phase, graph_steps, graph.layers, model, features, gpu));
  for (const auto& node : graph.step_nodes)
    s.kernels.push_back(sim_kernel(node, phase, graph_steps, 1, model, features, gpu));
  return s;
}

// Without a KV cache, decode step t is a prefill of prompt + t tokens. Its cost is close to quadratic in the
// length, so Simpson's rule over the first, middle and last step is exact up to the efficiency curves.
std::vector<SimSegment> recompute_decode(const ModelSpec& model, const Gpu& gpu, Request request) {
  const double steps = static_cast<double>(request.gen_tokens - 1);
  if (steps <= 0) return {};
  const long first = request.prompt_tokens + 1, last = request.prompt_tokens + request.gen_tokens - 1;
  std::vector<SimSegment> out;
  for (auto [length, weight] : {std::pair{first, 1.0}, {(first + last) / 2, 4.0}, {last, 1.0}}) {
    request.prompt_tokens = length;
    request.gen_tokens = 1;
    out.push_back(segment(model, gpu, request, Phase::prefill, steps * weight / 6));
  }
  return out;
}

struct StepCost {
  double time_s = 0;       // wall time of one step
  double busy_s = 0;       // time kernels run
  double compute_s = 0;    // ideal time at the compute peaks
  double memory_s = 0;     // ideal time at the memory peak
};

double kernel_time(const SimKernel& k, const SimWorkload& w, const SimParams& p, const GpuAdjust& adjust) {
  const double memory_eff = p.memory_efficiency * adjust.memory_scale * k.mem_bytes / (k.mem_bytes + p.memory_half_bytes);
  const double memory_s = k.mem_bytes > 0 ? k.mem_bytes / (w.memory_bytes_per_s * memory_eff) : 0.0;
  double compute_eff = p.vector_efficiency;
  if (k.kind == SimKernelClass::matrix || k.kind == SimKernelClass::attention) {
    const double base = k.kind == SimKernelClass::matrix ? p.matrix_efficiency : p.attention_efficiency;
    compute_eff = base * adjust.compute_scale * k.rows / (k.rows + p.matrix_half_rows);
  }
  const double compute_s = k.ops > 0 ? k.ops / (k.peak_ops_per_s * std::min(compute_eff, 1.0)) : 0.0;
  return std::max(compute_s, memory_s) + p.kernel_gap_s;
}

StepCost step_cost(const SimSegment& s, const SimWorkload& w, const SimParams& p) {
  const GpuAdjust adjust = p.gpu(w.gpu_id);
  const EngineParams engine = p.engine(w.engine);
  StepCost c;
  double work_s = 0, network_s = 0, launches = 0;
  for (const auto& k : s.kernels) {
    launches += k.count;
    if (k.kind == SimKernelClass::network) {
      const double hops = 2.0 * (w.tp_gpus - 1);
      network_s += k.count * (hops * p.allreduce_hop_s +
                              k.net_bytes / (w.link_bytes_per_s * p.network_efficiency) + p.kernel_gap_s);
      continue;
    }
    work_s += k.count * kernel_time(k, w, p, adjust);
    c.compute_s += k.count * k.ops / k.peak_ops_per_s;
    c.memory_s += k.count * k.mem_bytes / w.memory_bytes_per_s;
  }
  const double wait_s = w.tp_gpus > 1 ? p.sync_wait_fraction * work_s : 0.0;
  c.busy_s = work_s + network_s;
  c.time_s = std::max(c.busy_s + wait_s, launches * engine.launch_overhead_s) + engine.step_overhead_s;
  return c;
}

// Energy (all GPUs) and wall time of a list of segments.
std::pair<double, double> phase_energy_time(const std::vector<SimSegment>& segments, const SimWorkload& w,
                                            const SimParams& p) {
  const double dynamic_w = (w.tdp_w - w.idle_w) * p.gpu(w.gpu_id).power_scale;
  double energy_j = 0, time_s = 0;
  for (const auto& s : segments) {
    const StepCost c = step_cost(s, w, p);
    const double load = (p.power_active * c.busy_s + p.power_compute * c.compute_s + p.power_memory * c.memory_s) /
                        c.time_s;
    const double active_w = std::min(w.idle_w + dynamic_w * std::min(load, 1.0), w.tdp_w);
    const double step_energy_j = w.layer_split ? active_w * c.time_s + (w.gpus_total - 1) * w.idle_w * c.time_s
                                               : w.replicas * w.tp_gpus * active_w * c.time_s;
    energy_j += s.steps * step_energy_j;
    time_s += s.steps * c.time_s;
  }
  return {energy_j, time_s};
}

void set_mean_power(SimResult& r) {
  const double seconds = r.latency_s.total();
  r.mean_power_w = seconds > 0 ? r.energy_j.total() / (seconds * r.gpus) : 0.0;
}

}  // namespace

SimWorkload prepare_workload(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& sc) {
  if (sc.parallelism == Parallelism::layer_split && request.gpus != 1)
    fail("a layer-split simulation runs the graph on one GPU at a time (request.gpus must be 1, got {})", request.gpus);
  if (sc.data_parallel < 1) fail("data_parallel must be at least 1, got {}", sc.data_parallel);
  SimWorkload w;
  w.prefill.push_back(segment(model, gpu, request, Phase::prefill, 1));
  if (request.gen_tokens > 1) {
    if (sc.kv_cache) w.decode.push_back(segment(model, gpu, request, Phase::decode, static_cast<double>(request.gen_tokens - 1)));
    else w.decode = recompute_decode(model, gpu, request);
  }
  w.memory_bytes_per_s = gpu.memory_bandwidth_bytes_per_s;
  w.link_bytes_per_s = request.gpus > 1 ? gpu.network_link(request.gpus).bandwidth_bytes_per_s : 0.0;
  w.tp_gpus = request.gpus;
  w.layer_split = sc.parallelism == Parallelism::layer_split;
  w.gpus_total = w.layer_split ? sc.layer_split_gpus : request.gpus * sc.data_parallel;
  w.replicas = w.layer_split ? 1.0 : sc.data_parallel;
  w.steady_state = sc.measures == Measures::steady_state;
  w.tdp_w = gpu.tdp_w;
  w.idle_w = gpu.idle_w;
  w.gpu_id = gpu.id;
  w.engine = request.engine;
  return w;
}

SimResult run_workload(const SimWorkload& w, const SimParams& p) {
  SimResult r;
  std::tie(r.energy_j.prefill, r.latency_s.prefill) = phase_energy_time(w.prefill, w, p);
  std::tie(r.energy_j.decode, r.latency_s.decode) = phase_energy_time(w.decode, w, p);
  r.gpus = w.gpus_total;
  set_mean_power(r);
  return r;
}

SimResult simulate(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& scenario,
                   const SimParams& params) {
  return run_workload(prepare_workload(model, gpu, request, scenario), params);
}

SimResult add_noise(const SimResult& result, const SimParams& params, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  SimResult r = result;
  // One factor per phase and quantity; log-normal so values stay positive and the median is the noiseless value.
  for (auto* value : {&r.energy_j.prefill, &r.energy_j.decode}) *value *= std::exp(params.energy_noise * normal(rng));
  for (auto* value : {&r.latency_s.prefill, &r.latency_s.decode}) *value *= std::exp(params.latency_noise * normal(rng));
  set_mean_power(r);
  return r;
}

}  // namespace llmco2
