// sim/simulator.cc - step times from kernel work at achievable efficiencies plus the engine's host costs; per-GPU
// power between idle and TDP from how much of the compute and memory roofs the step uses.
#include "sim/simulator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "core/error.h"
#include "engine/engine_profile.h"
#include "features/features.h"
#include "features/memory_fit.h"
#include "graph/graph_template.h"
#include "graph/kernel_graph.h"
#include "graph/layer_kernels.h"
#include "hardware/fabric.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::sim {
namespace {

KernelClass kernel_class(KernelType type) {
  switch (type) {
    case KernelType::linear:
    case KernelType::router:
    case KernelType::lm_head:
      return KernelClass::matrix;
    case KernelType::matmul_qk:
    case KernelType::matmul_sv:
    case KernelType::fused_attention:
      return KernelClass::attention;
    case KernelType::allreduce:
      return KernelClass::network;
    default:
      return KernelClass::vector;
  }
}

bool is_routed(const KernelNode& node, const ModelSpec& model) { return node.expert == "routed" && model.moe; }

// GEMM rows one launch of the node processes per step; routed experts split their token rows (tokens x top-k, which
// the routed nodes' cost already counts) among the loaded experts. A node of the mean layer run by a share of the
// layers (DeepSeek's MoE layers) holds that share of their rows.
double rows_per_launch(const KernelNode& node, const KernelCost& c, Phase phase, double steps, bool routed) {
  const double rows = quotient(quotient(c.tokens, steps), node.layer_share);
  if (!routed) return rows;
  return rows / std::max(node.experts_loaded(phase), 1.0);
}

// The share of the fp32 peak a matrix kernel reaches on the CUDA cores, 0 when it runs on tensor units (see
// KernelWork::simt_efficiency): its peak is the fp32 one, at fp32 inputs or converted from a narrower type.
double simt_efficiency(KernelClass kind, const GraphFeatures& features) {
  if (kind != KernelClass::matrix && kind != KernelClass::attention) return 0.0;
  const ComputePeak& peak = kind == KernelClass::matrix ? features.matrix_peak : features.attention_peak;
  if (!peak.cuda_cores) return 0.0;
  const bool native = peak.requested == DType::fp32 || peak.requested == DType::tf32;
  return native ? kSimtGemmEfficiency : kEmulatedGemmEfficiency;
}

// The narrow input type of the layer GEMMs with per-tensor scales on tensor units (KernelWork::narrow).
NarrowGemm narrow_gemms(const GraphFeatures& features) {
  const ComputePeak& peak = features.matrix_peak;
  if (peak.cuda_cores || features.block_scaled_gemms) return NarrowGemm::none;
  if (peak.dtype == DType::fp8) return NarrowGemm::fp8;
  if (peak.dtype == DType::fp4 || peak.dtype == DType::mxfp4 || peak.dtype == DType::nvfp4) return NarrowGemm::fp4;
  return NarrowGemm::none;
}

// The part of a launch of `node` that the setup decides (class, roofs, sampler) and its launches per step.
void set_kernel_setup(SimKernel& k, const KernelNode& node, double count, const GraphFeatures& features,
                      const Gpu& gpu) {
  k.count = count;
  k.work.kind = kernel_class(node.type);
  k.work.peak_ops_per_s = kernel_roofs(node.type, features, gpu).peak_ops_per_s;
  k.work.vector_peak_ops_per_s = features.vector_peak_ops_per_s;
  k.work.simt_efficiency = simt_efficiency(k.work.kind, features);
  k.work.block_scaled = node.type == KernelType::linear && features.block_scaled_gemms;
  k.work.narrow = node.type == KernelType::linear ? narrow_gemms(features) : NarrowGemm::none;
  k.sampler = node.kernel == kSamplerKernel;
}

// The request's part: one launch's work of `node` in `phase` at cost `c` (the node's, or scaled), whose phase runs
// `steps` forward passes.
void set_kernel_work(KernelWork& w, const KernelNode& node, const KernelCost& c, Phase phase, double steps,
                     const ModelSpec& model, bool routed) {
  const double per_launch = steps * node.layer_share;  // the mean layer's cost spread over the layers that run it
  if (per_launch == 1.0) {                             // x / 1 = x: no division
    w.ops = c.ops, w.mem_bytes = c.mem_bytes(), w.net_bytes = c.net_bytes;
  } else {  // adjacent quotients by one divisor, which the compiler pairs into one vector division
    w.ops = c.ops / per_launch, w.mem_bytes = c.mem_bytes() / per_launch;
    w.net_bytes = quotient(c.net_bytes, per_launch);
  }
  w.rows = std::max(1.0, rows_per_launch(node, c, phase, steps, routed));
  w.keys_per_query = c.keys_per_query();
  // A model with latent attention runs it in every attention layer (graph/mla_layer.cc); its decode runs MLA's own
  // kernels (absorbed: all heads over the latent cache), its prefill the expanded form, multi-head attention through
  // the engine's FMHA kernels as any other prefill.
  w.latent = node.type == KernelType::fused_attention && model.mla.has_value() && phase == Phase::decode;
  w.dequant_ops = quotient(c.dequant_ops, per_launch);
  const bool looped = routed && !model.moe->batched_in_hf;
  w.loop_experts = looped ? node.experts_loaded(phase) : 0.0;
}

// Sets `k` (in place: a returned copy stalled on store forwarding) to one launch of `node` in `phase` at cost `c`.
void set_sim_kernel(SimKernel& k, const KernelNode& node, const KernelCost& c, Phase phase, double steps, double count,
                    const ModelSpec& model, const GraphFeatures& features, const Gpu& gpu) {
  set_kernel_setup(k, node, count, features, gpu);
  set_kernel_work(k.work, node, c, phase, steps, model, is_routed(node, model));
}

// The part of a prefill's attention that a chunk does: the last c queries of the causal prefill of its n = p + c
// tokens (p cached before it). `pairs`: its share of the query-key pairs (operations, the span); `tokens`: c / n of
// the query rows (Q read, O written). Every key's K/V is read once, as by the whole prefill: the chunk's query tiles
// share the cached prefix through L2.
struct ChunkShare {
  double pairs = 1, tokens = 1;
};

// `full`, the whole prefill's cost of an attention node, cut to the chunk's part (its token rows kept: they set the
// tile padding).
KernelCost chunk_cost(const KernelCost& full, const ChunkShare& share) {
  KernelCost c = full;
  c.ops *= share.pairs, c.dequant_ops *= share.pairs, c.score_pairs *= share.pairs;
  c.act_load_bytes *= share.tokens, c.act_store_bytes *= share.tokens, c.kv_store_bytes *= share.tokens;
  c.weight_bytes *= share.tokens, c.net_bytes *= share.tokens, c.query_rows *= share.tokens;
  return c;
}

// Appends to `s` the kernels of `graph` in `phase` that `keep(node, is_layer_node)` selects: layer nodes launched once
// per layer, step nodes once per step; with `chunk`, each node's cost cut to a prefill chunk's part (chunk_cost).
template <typename Keep>
void add_kernels(SimSegment& s, const ModelSpec& model, const Gpu& gpu, const KernelGraph& graph,
                 const GraphFeatures& features, Phase phase, double steps, Keep keep,
                 const ChunkShare* chunk = nullptr) {
  auto add = [&](const KernelNode& node, double count, bool layer) {
    if (!keep(node, layer)) return;
    const KernelCost& cost = node.cost(phase);
    set_sim_kernel(s.kernels.emplace_back(), node, chunk ? chunk_cost(cost, *chunk) : cost, phase, steps, count, model,
                   features, gpu);
  };
  for (const auto& node : graph.nodes) add(node, graph.layers * node.layer_share, true);
  for (const auto& node : graph.step_nodes) add(node, 1, false);
}

// Fills `s` (its kernels replaced, their storage kept) with `steps` identical steps of `phase` of `graph`, whose
// phase runs `phase_steps` forward passes.
void set_segment_shape(SimSegment& s, const Request& request, Phase phase, double steps) {
  s.steps = steps;
  s.sequences = static_cast<double>(request.batch);
  s.step_tokens = static_cast<double>(request.batch * (phase == Phase::prefill ? request.prompt_tokens : 1L));
}

void fill_segment(SimSegment& s, const ModelSpec& model, const Gpu& gpu, const Request& request,
                  const KernelGraph& graph, const GraphFeatures& features, Phase phase, double steps,
                  double phase_steps) {
  set_segment_shape(s, request, phase, steps);
  s.kernels.clear();
  add_kernels(s, model, gpu, graph, features, phase, phase_steps, [](const KernelNode&, bool) { return true; });
}

// One segment of `steps` identical steps of `phase` of `graph`.
SimSegment segment(const ModelSpec& model, const Gpu& gpu, const Request& request, const KernelGraph& graph,
                   const GraphFeatures& features, Phase phase, double steps) {
  SimSegment s;
  fill_segment(s, model, gpu, request, graph, features, phase, steps, phase_shape(phase, request).steps);
  return s;
}

// `phase` of `request`'s own graph (built for it), repeated `steps` times.
SimSegment built_segment(const ModelSpec& model, const Gpu& gpu, const Request& request, Phase phase, double steps) {
  const KernelGraph graph = build_kernel_graph(model, request);
  return segment(model, gpu, request, graph, compute_features(graph, gpu, request), phase, steps);
}

SimSegment prefill_segment(const ModelSpec& model, const Gpu& gpu, const Request& request, double steps) {
  return built_segment(model, gpu, request, Phase::prefill, steps);
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
    out.push_back(prefill_segment(model, gpu, request, steps * weight / 6));
  }
  return out;
}

struct StepCost {
  double time_s = 0;           // wall time of one step
  double busy_s = 0;           // time kernels run on the GPU
  double compute_bound_s = 0;  // of busy_s: kernels held by the tensor/CUDA cores (they slow when clocks drop)
  double compute_s = 0;        // the step's operations at the compute peaks (tensor units; vector kernels' at fp32)
  double simt_s = 0;        // the step's GEMM operations on the CUDA cores (no tensor units for the type) at fp32 peak
  double simt_bound_s = 0;  // the same at the share of that peak the CUDA-core GEMMs reach
  double memory_s = 0;      // the step's bytes at the peak bandwidth
};

// A kernel's work repeated `passes` times (the sampler's passes over the logits).
KernelWork scaled_work(KernelWork work, double passes) {
  work.ops *= passes, work.mem_bytes *= passes;
  return work;
}

// The share of a step's layers in which the host waits for the GPU before launching on (kernels_wall_s). An engine
// that loops over a MoE layer's experts in Python (HF transformers' MixtralSparseMoeBlock): every layer, since it asks
// the GPU which tokens each expert got (torch.where on the routing mask: a nonzero, which "causes host-device
// synchronization", PyTorch's torch.nonzero docs). Layers split over G GPUs by accelerate (device_map="auto"): every
// GPU but the first, an empirical rule: Wilkins et al.'s Llama-2-70B and Falcon-40B steps take the sum of host and GPU
// time there, not the larger. The mechanism is not established: AlignDevicesHook copies each block's tensor arguments
// (the model-level mask, position ids and rotary tables live on the first GPU) to the block's GPU, but PyTorch's
// device-to-device copies only order streams with events (aten/src/ATen/native/cuda/Copy.cu), without a host sync.
double host_wait_share(const SimWorkload& w, bool loops_experts) {
  if (loops_experts) return 1.0;
  return w.layer_split && w.gpus_total > 1 ? (w.gpus_total - 1.0) / w.gpus_total : 0.0;
}

StepCost step_cost(const SimSegment& s, const SimWorkload& w, const ResolvedParams& r) {
  const KernelEfficiency& eff = r.efficiency;
  const NetworkEfficiency& net = r.network;
  const EngineProfile& engine = r.engine;
  StepCost c;
  double work_s = 0, network_s = 0, launches = 0;
  double kernel_s = 0, compute_s = 0, memory_s = 0;  // of the last kernel timed, for the launches that repeat it
  double tensor_bound_s = 0;    // the tensor-unit operations at the share of the peak their kernels reach
  bool looped_experts = false;  // the engine loops over a MoE layer's experts on the host, waiting for the GPU
  for (const auto& k : s.kernels) {
    // An engine looping over the routed experts in Python launches each loaded expert's kernels (and the glue that
    // gathers its tokens) itself, instead of one fused MoE kernel per routed node.
    const bool looped = engine.expert_loop_launches > 0 && k.work.loop_experts > 0;
    looped_experts = looped_experts || looped;
    launches += looped ? k.count * k.work.loop_experts * engine.expert_loop_launches : k.count;
    if (k.work.kind == KernelClass::network) {
      network_s += k.count * allreduce_s(k.work, w.roofs, net, r.direct_allreduce ? &*r.direct_allreduce : nullptr);
      continue;
    }
    if (!k.repeats_previous) {
      // The sampler: the one pass the graph counts, scaled to the engine's sampler (its time, operations and bytes).
      const double passes = k.sampler ? r.sampler_passes : 1.0;
      kernel_s = k.sampler ? kernel_time_s(scaled_work(k.work, passes), w.roofs, eff, net)
                           : kernel_time_s(k.work, w.roofs, eff, net);
      compute_s = k.work.ops > 0 ? k.count * passes * k.work.ops / k.work.peak_ops_per_s : 0.0;
      memory_s = k.count * passes * k.work.mem_bytes / w.roofs.memory_bytes_per_s;
    }
    work_s += k.count * kernel_s;
    // A block-scaled GEMM loses its (1 - block_scaled_efficiency) share of time to work on the SMs' CUDA cores, not
    // to idling: the scales applied to each K block's partial sums and their FP32 accumulation (the DeepSeek-V3
    // report, section 3.3.2, "promotion to CUDA cores"). The power model counts that share as CUDA-core work at its
    // peak.
    const double block = k.work.block_scaled ? eff.block_scaled_efficiency : 1.0;
    c.simt_s += k.count * kernel_s * (1.0 - block);
    if (k.work.simt_efficiency > 0) {
      c.simt_s += compute_s;
      c.simt_bound_s += compute_s / k.work.simt_efficiency;
    } else if (k.work.ops > 0) {
      c.compute_s += compute_s;
      tensor_bound_s += compute_s / tensor_efficiency(k.work, eff);
    }
    c.memory_s += memory_s;
  }
  const double wait_s = w.roofs.tp_gpus > 1 ? r.params.sync_wait_fraction * work_s : 0.0;
  c.busy_s = work_s + network_s;
  c.compute_bound_s = std::min(work_s, tensor_bound_s + c.simt_bound_s);
  const double launch_s = engine.launch_s(launches, s.step_tokens) + (s.draft_pass ? engine.draft_pass_host_s : 0.0);
  c.time_s = kernels_wall_s(c.busy_s + wait_s, launch_s, host_wait_share(w, looped_experts)) +
             (s.draft_pass ? 0.0 : engine.serial_s(s.sequences, w.roofs.tp_gpus)) +
             (s.verifies ? engine.spec_step_host_s : 0.0);
  return c;
}

// The time a step's `compute_bound_s` of compute-bound kernels gain at a share `clock` of the maximum SM clock: they
// slow with it; memory-bound work keeps its pace (the HBM runs on its own clock), and so do the waits on the host.
double stretch_s(double compute_bound_s, double clock) { return compute_bound_s * (1.0 / clock - 1.0); }

// A step's dynamic power on one working GPU as a function of the share f of its maximum SM clock it runs at. Dynamic
// CMOS power is C V^2 f, and over the DVFS range the voltage follows the clock, so the parts that toggle every cycle
// (clock tree, instruction issue: `active` while kernels run, `wait` while the host works) draw f^3 per second,
// while an operation switches its gates once at C V^2, so the step's operations cost f^2 of their energy at the
// maximum clock. A byte moved to or from HBM costs the same at any SM clock. Work is measured against the reference
// board's roofs: the same operations and bytes draw the same power.
struct ClockedPower {
  double cycled_w = 0;      // per second of kernels running, at the maximum clock
  double waited_j = 0;      // the host waits inside the step
  double operations_j = 0;  // tensor-core and CUDA-core operations
  double memory_j = 0;      // HBM traffic
  double busy_s = 0, time_s = 0, compute_bound_s = 0;

  ClockedPower(const StepCost& c, const SimWorkload& w, const PowerParams& power) {
    const DiePower& d = w.die;
    const double dynamic_w = d.dynamic_w > 0 ? d.dynamic_w : w.tdp_w - w.idle_w;
    cycled_w = dynamic_w * d.clock_ratio * power.active;
    waited_j = dynamic_w * d.clock_ratio * power.wait * std::max(0.0, c.time_s - c.busy_s);
    operations_j = dynamic_w * d.clock_ratio * (power.compute * c.compute_s + power.simt * c.simt_s);
    memory_j = dynamic_w * d.bandwidth_ratio * power.memory * c.memory_s;
    busy_s = c.busy_s, time_s = c.time_s, compute_bound_s = c.compute_bound_s;
  }
  double at(double f) const {  // the dynamic power at f (may exceed the board's limit)
    const double extra_s = stretch_s(compute_bound_s, f);
    const double energy_j = f * f * (f * (cycled_w * (busy_s + extra_s) + waited_j) + operations_j) + memory_j;
    return std::max(0.0, energy_j / (time_s + extra_s));
  }
  // The clock below `from` at which the step draws `limit_w`, where at(from) > limit_w. at(f) = limit_w times f is
  // the quartic q(f) = c4 f^4 + c3 f^3 + c1 f + c0 with c4, c3 >= 0 and c0 <= 0 (busy_s >= compute_bound_s), convex
  // for f > 0, so Newton's steps from `from` fall monotonically onto its largest root. Returns 0 when there is none.
  double clock_at(double limit_w, double from) const {
    const double c4 = cycled_w * (busy_s - compute_bound_s) + waited_j, c3 = cycled_w * compute_bound_s + operations_j;
    const double c1 = memory_j - limit_w * (time_s - compute_bound_s), c0 = -limit_w * compute_bound_s;
    double f = from;
    for (int i = 0; i < 60 && f > 0; ++i) {
      const double q = ((c4 * f + c3) * f * f + c1) * f + c0, slope = (4 * c4 * f + 3 * c3) * f * f + c1;
      if (!(slope > 0)) return 0.0;
      const double next = f - q / slope;
      if (std::abs(next - f) <= 1e-13 * f) return next;
      f = next;
    }
    return std::max(0.0, f);
  }
};

// The step at the workload's SM clock (locked, or the maximum), lowered further where its work would draw more than
// the board's limit (TDP or cap): the clock drops to where the step draws the limit, down to kMinClockShare (where
// it draws the limit, as a GPU that cannot go lower would), and the compute-bound kernels stretch by its inverse.
// Returns the step's power per working GPU (between idle and the limit) and stretches `c` to the clock it runs at.
double throttled_power_w(StepCost& c, const SimWorkload& w, const PowerParams& power) {
  const double headroom_w = w.tdp_w - w.idle_w;
  const ClockedPower clocked(c, w, power);
  double clock = w.clock_share, dynamic_w = clocked.at(clock);
  if (dynamic_w > headroom_w)
    clock = std::max(kMinClockShare, clocked.clock_at(headroom_w, clock)), dynamic_w = headroom_w;
  const double extra_s = stretch_s(c.compute_bound_s, clock);
  c.time_s += extra_s, c.busy_s += extra_s;
  return w.idle_w + dynamic_w;
}

double dense_peak(const Gpu& gpu) {
  return gpu.matrix_peak(gpu.has_tensor_units(DType::bf16) ? DType::bf16 : DType::fp16).ops_per_s;
}

// A step of `s` through the workload's pipeline stages, from `c`, one micro-batch's pass through every stage on one
// tensor-parallel group (its kernels' time busy_s, its host work time_s - busy_s). A micro-batch's step runs its host
// work, the stages one after another and a send of its hidden state and residual at each boundary (the chain). The
// stages pass one micro-batch each at a time and the engine's host works for one micro-batch at a time (vLLM's
// virtual engines share one Python process), so a step repeated in a steady pipeline takes the longest of the chain
// and the micro-batches' turns at a stage or at the host; a step run once (a prefill) fills the pipeline: the chain
// plus a turn for each micro-batch behind the first. Each GPU runs its stage for every micro-batch: microbatches /
// stages of one pass's work, and waits the rest of the step (for the host, a send or another stage) as a GPU waits
// for its host. Sets `c` to the step on one GPU; its clock and power limit then act on that average (with fewer
// micro-batches than stages a stage's GPUs may exceed the limit during their turn: docs/serving.md).
void pipelined(StepCost& c, const SimSegment& s, const SimPipeline& p, bool once) {
  const double stages = p.stages, m = s.microbatches;
  const double host_s = std::max(0.0, c.time_s - c.busy_s), stage_s = c.busy_s / stages;
  const double send_s = 2 * p.latency_s + s.step_tokens * p.boundary_bytes_per_token / p.link_bytes_per_s;
  const double chain_s = c.time_s + (stages - 1) * send_s, turn_s = std::max(host_s, stage_s);
  c.time_s = once ? chain_s + (m - 1) * turn_s : std::max(chain_s, m * turn_s);
  const double share = m / stages;
  for (double* work : {&c.busy_s, &c.compute_bound_s, &c.compute_s, &c.simt_s, &c.simt_bound_s, &c.memory_s})
    *work *= share;
}

// Energy (all GPUs) and wall time of a list of segments; `once`: a phase the pipeline runs once (it fills it).
std::pair<double, double> phase_energy_time(const std::vector<SimSegment>& segments, const SimWorkload& w,
                                            const ResolvedParams& r, bool once = false) {
  double energy_j = 0, time_s = 0;
  for (const auto& s : segments) {
    StepCost c = step_cost(s, w, r);
    if (w.pipeline.stages > 1) pipelined(c, s, w.pipeline, once);
    const double active_w = throttled_power_w(c, w, r.power);
    const double step_energy_j = w.layer_split ? active_w * c.time_s + (w.gpus_total - 1) * w.idle_w * c.time_s
                                               : w.replicas * w.roofs.tp_gpus * w.pipeline.stages * active_w * c.time_s;
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

std::optional<DirectAllReduceEfficiency> engine_direct_allreduce(const KernelParams& kernels, const SimWorkload& w,
                                                                 const EngineProfile& engine) {
  if (!engine.custom_allreduce || w.link == "pcie") return std::nullopt;
  if (engine.cuda_graphs) return kernels.direct_allreduce(w.generation, engine.allreduce_kernel);
  const NetworkEfficiency& eager = kernels.network(w.generation, engine_link_class(w.link, false));
  return DirectAllReduceEfficiency{2 * eager.step_latency_s, eager.bus_efficiency};
}

ResolvedParams resolve_params(const SimWorkload& w, const SimParams& p) {
  const EngineProfile& engine = p.engines.get(w.engine);
  return {p.efficiency(w.generation, w.gpu_id),
          p.kernels.network(w.generation, engine_link_class(w.link, engine.cuda_graphs)),
          engine,
          p,
          p.power_on(w.gpu_id),
          engine.sampler_bytes_per_logit(w.sampling) / kSamplerPassBytesPerLogit,
          engine_direct_allreduce(p.kernels, w, engine)};
}

DiePower die_power(const Gpu& gpu) {
  const Gpu* reference = &GpuCatalog::reference_board(gpu);
  DiePower d;
  d.dynamic_w = reference->tdp_w - reference->idle_w;
  d.clock_ratio = dense_peak(gpu) / dense_peak(*reference);
  d.bandwidth_ratio = gpu.memory_bandwidth_bytes_per_s / reference->memory_bandwidth_bytes_per_s;
  return d;
}

SimPipeline pipeline_of(const ModelSpec& model, const Gpu& gpu, const Request& request) {
  SimPipeline p;
  p.stages = request.pipeline_parallel;
  // vLLM sends the hidden state and the residual (16-bit) at each boundary, each GPU of the group its 1/tp slice,
  // all-gathered on the receiving side (send_tensor_dict with the tensor-parallel group).
  p.boundary_bytes_per_token =
      2.0 * static_cast<double>(model.hidden) * dtype_bytes(request.precision.unquantised_dtype()) / request.gpus;
  // One NVLink domain (8 GPUs of a DGX, 72 of an NVL72 rack, whatever its nodes), else one node's PCIe, else the
  // nodes' network.
  const int total = request.total_gpus();
  const std::optional<hardware::FabricLink> link = hardware::fabric_joining(gpu, total);
  if (!link)
    fail("{} pipeline stages of {} x {} span {} nodes, and {} names no network between nodes (scale_out in data/nodes)",
         p.stages, request.gpus, gpu.id, hardware::nodes_spanned(gpu, total), hardware::node_name_for(gpu));
  p.link_bytes_per_s = link->bytes_per_s_per_gpu, p.latency_s = link->latency_s;
  return p;
}

namespace {

// Prefill under continuous batching at saturation when the engine runs prefills as steps of their own (vLLM v0
// without chunked prefill): every step in which a request finishes is followed by a prefill-only step for its
// replacement from the queue. With B running requests of G tokens, B/G finish per decode step; taking completions as
// Poisson, a share p = 1 - exp(-B/G) of decode steps is followed by a prefill step of (B/G)/p prompts. The batch's B
// prompts thus run in B/k steps of k prompts each (each step streams the weights once), not in one step of B prompts.
std::vector<SimSegment> stalled_prefill(const ModelSpec& model, const Gpu& gpu, Request request) {
  const double batch = static_cast<double>(request.batch), gen = static_cast<double>(request.gen_tokens);
  const double per_step = batch / gen, share = 1.0 - std::exp(-per_step);
  const long prompts = std::clamp(std::lround(per_step / share), 1L, request.batch);
  request.batch = prompts;
  return {prefill_segment(model, gpu, request, batch / static_cast<double>(prompts))};
}

// Decode of a fixed batch run to its longest response (SimScenario::decode_steps): `steps` steps at the mean running
// batch that generates the batch's decode tokens over them, batch x (gen - 1) / steps, whose sequences reach the
// context of the longest (prompt + steps / 2 on average over the run).
SimSegment ran_to_cap_decode(const ModelSpec& model, const Gpu& gpu, Request request, long steps) {
  const double tokens = static_cast<double>(request.batch) * static_cast<double>(request.gen_tokens - 1);
  request.batch = std::max(1L, std::lround(tokens / static_cast<double>(steps)));
  request.gen_tokens = steps + 1;
  return built_segment(model, gpu, request, Phase::decode, static_cast<double>(steps));
}

bool length_biased(const SimScenario& sc) { return sc.measures == Measures::steady_state && sc.gen_tokens_cv > 0; }

// Decode of a steady state whose requests generate G tokens with coefficient of variation cv: the step costs of a
// request of G (1 + cv^2) tokens (its mean context prompt + E[G^2] / 2E[G] is that of the length-biased running
// batch), repeated for the G - 1 steps one request of mean length takes.
SimSegment length_biased_decode(const ModelSpec& model, const Gpu& gpu, Request request, double cv) {
  const double steps = static_cast<double>(request.gen_tokens - 1);
  request.gen_tokens = std::max(2L, std::lround(static_cast<double>(request.gen_tokens) * (1.0 + cv * cv)));
  return built_segment(model, gpu, request, Phase::decode, steps);
}

// The GPU, link, engine and power figures of a workload (everything but its segments).
void set_device(SimWorkload& w, const Gpu& gpu, const Request& request, const SimScenario& sc) {
  w.roofs.memory_bytes_per_s = gpu.memory_bandwidth_bytes_per_s;
  w.roofs.link_bytes_per_s = request.gpus > 1 ? gpu.network_link(request.gpus).bandwidth_bytes_per_s : 0.0;
  w.roofs.tp_gpus = request.gpus;
  w.generation = gpu_generation(gpu);
  w.gpu_id = gpu.id;
  w.link = link_class(gpu, request.gpus);
  w.engine = request.engine;
  w.layer_split = sc.parallelism == Parallelism::layer_split;
  w.gpus_total = w.layer_split ? sc.layer_split_gpus : request.total_gpus() * sc.data_parallel;
  w.replicas = w.layer_split ? 1.0 : sc.data_parallel;
  w.steady_state = sc.measures == Measures::steady_state;
  w.sampling = sc.sampling;
  w.idle_w = gpu.idle_w;
  w.tdp_w = std::clamp(power_limit_w(sc.power, gpu), gpu.idle_w, gpu.tdp_w);
  w.clock_share = sc.power.clock_share;
  w.die = die_power(gpu);
}

bool is_attention(KernelType type) {
  return type == KernelType::matmul_qk || type == KernelType::softmax || type == KernelType::matmul_sv ||
         type == KernelType::fused_attention;
}
bool samples(const KernelNode& node) { return node.type == KernelType::lm_head || node.kernel == kSamplerKernel; }

// Appends the kernels of `graph`, the graph of `request`, in `phase` (see add_kernels).
template <typename Keep>
void append_kernels(SimSegment& s, const ModelSpec& model, const Gpu& gpu, const GraphFeatures& features,
                    const KernelGraph& graph, const Request& request, Phase phase, Keep keep,
                    const ChunkShare* chunk = nullptr) {
  add_kernels(s, model, gpu, graph, features, phase, phase_shape(phase, request).steps, keep, chunk);
}

// Appends the kernels of `model` for `step` to `s`: token-wise kernels from the graph of the step's tokens on
// `unbounded` (the model without its context window), attention and the LM head from graphs of `model`. A decoding
// sequence verifying q positions (speculation) runs the decode attention q times over the KV it reads once (its
// cost cut as a chunk's: q times the query rows and operations). `lm_head_only`: no sampler (a draft's argmax).
template <typename GraphOf>
void append_step_kernels(SimSegment& s, const ModelSpec& model, const ModelSpec& unbounded, const Gpu& gpu,
                         const GraphFeatures& features, const Request& setup, const MixedStep& step, GraphOf&& graph_of,
                         bool lm_head_only = false) {
  const long tokens = step.decodes * step.decode_positions + step.prefill_tokens;
  // Token-wise kernels: every token of the step is one GEMM row; the embedding and final norm run over all of them.
  // The step's tokens belong to many sequences, so their count is not a position: no context-window check (a
  // 2048-token-window model still runs 8192-token steps).
  Request flat = setup;
  flat.batch = 1, flat.prompt_tokens = tokens, flat.gen_tokens = 1;
  append_kernels(s, unbounded, gpu, features, graph_of(unbounded, flat), flat, Phase::prefill,
                 [](const KernelNode& n, bool layer) { return layer ? !is_attention(n.type) : !samples(n); });
  auto layer_attention = [](const KernelNode& n, bool layer) { return layer && is_attention(n.type); };
  if (step.decodes > 0) {
    Request decode = setup;
    decode.batch = step.decodes;
    decode.prompt_tokens = std::max(1L, std::lround(step.decode_context) - 1);
    decode.gen_tokens = 2;
    const double q = static_cast<double>(step.decode_positions);
    const ChunkShare verify{q, q};
    append_kernels(s, model, gpu, features, graph_of(model, decode), decode, Phase::decode, layer_attention,
                   step.decode_positions > 1 ? &verify : nullptr);
  }
  if (step.prefill_tokens > 0) {
    // A chunk of c tokens after p cached ones: the causal prefill of p + c tokens, of which the chunk's queries do
    // c p + c (c + 1) / 2 of the (p + c)(p + c + 1) / 2 query-key pairs, reading all p + c keys' K/V.
    const long chunks = std::max(1L, step.prefill_chunks);
    const double c = static_cast<double>(step.prefill_tokens) / static_cast<double>(chunks);
    const double p = std::max(0.0, step.prefill_context);
    Request chunk = setup;
    chunk.batch = chunks;
    chunk.prompt_tokens = std::max(1L, std::lround(p + c));
    chunk.gen_tokens = 1;
    const double n = static_cast<double>(chunk.prompt_tokens);
    const ChunkShare share{std::min(1.0, (c * p + c * (c + 1) / 2) / (n * (n + 1) / 2)), std::min(1.0, c / n)};
    append_kernels(s, model, gpu, features, graph_of(model, chunk), chunk, Phase::prefill, layer_attention, &share);
  }
  if (step.logits > 0) {
    Request head = setup;
    head.batch = step.logits, head.prompt_tokens = 1, head.gen_tokens = 2;
    append_kernels(s, model, gpu, features, graph_of(model, head), head, Phase::decode,
                   [lm_head_only](const KernelNode& n, bool layer) {
                     return !layer && (lm_head_only ? n.type == KernelType::lm_head : samples(n));
                   });
  }
}

// `model` without its context window: a step's token count is not a position, and a draft runs at the target's
// contexts, which the target's own graphs check.
ModelSpec without_context_window(ModelSpec model) {
  model.max_positions.reset();
  return model;
}

// The draft's passes of a speculative step, in segments of their own inside it (SimSegment::draft_pass), as vLLM's
// EagleProposer.propose runs them (vllm/v1/spec_decode/eagle.py): the first over every token of the step (each
// decoding sequence's k + 1 verified positions, whose KV the draft keeps too, and the prompt chunks), the other k - 1
// over one token per decoding sequence; each ends in the draft's LM head over the sequences that propose (an argmax:
// no sampler).
template <typename GraphOf>
void fill_draft_passes(SimSegment& first, SimSegment& rest, const ModelSpec& draft, const Gpu& gpu,
                       const GraphFeatures& features, const Request& setup, const MixedStep& step, GraphOf&& graph_of) {
  auto begin = [](SimSegment& s, double steps, long tokens, long sequences) {
    s.steps = steps, s.step_tokens = static_cast<double>(tokens), s.sequences = static_cast<double>(sequences);
    s.draft_pass = true, s.verifies = false;
    s.kernels.clear();
  };
  MixedStep pass = step;
  pass.logits = step.decodes + std::max(0L, step.logits - step.decodes * step.decode_positions);
  begin(first, 1, step.decodes * step.decode_positions + step.prefill_tokens, step.decodes + step.prefill_chunks);
  append_step_kernels(first, draft, draft, gpu, features, setup, pass, graph_of, true);
  begin(rest, step.decodes > 0 ? std::max(0.0, step.draft_passes - 1) : 0.0, step.decodes, step.decodes);
  if (rest.steps <= 0) return;
  MixedStep next;
  next.decodes = step.decodes;
  next.decode_context = step.decode_context;
  next.logits = step.decodes;
  append_step_kernels(rest, draft, draft, gpu, features, setup, next, graph_of, true);
}

// The one step of `step` in `segments` (their kernels replaced, their storage kept): the target's kernels and, with
// draft passes, the draft's two segments (`draft` without its context window; null: no draft on the GPU).
// `graph_of(model, request)` gives the graph of a request: built (mixed_step_workload) or a setup's template
// re-costed (MixedStepWorkloads); `features` are the setup's device features.
template <typename GraphOf>
void fill_mixed_step(std::vector<SimSegment>& segments, const ModelSpec& model, const ModelSpec& unbounded,
                     const Gpu& gpu, const GraphFeatures& features, const Request& setup, const MixedStep& step,
                     GraphOf&& graph_of, const ModelSpec* draft = nullptr) {
  const long tokens = step.decodes * step.decode_positions + step.prefill_tokens;
  if (tokens <= 0 || step.decodes < 0 || step.prefill_tokens < 0 || step.decode_positions < 1)
    fail("a serving step needs at least one token");
  const bool drafts = draft && step.draft_passes > 0;
  segments.resize(drafts ? 3 : 1);
  SimSegment& s = segments[0];
  s.steps = 1;
  s.step_tokens = static_cast<double>(tokens);
  s.sequences = static_cast<double>(step.decodes + step.prefill_chunks);
  s.draft_pass = false;
  s.verifies = step.decodes > 0 && step.decode_positions > 1;
  s.kernels.clear();
  append_step_kernels(s, model, unbounded, gpu, features, setup, step, graph_of);
  if (drafts) fill_draft_passes(segments[1], segments[2], *draft, gpu, features, setup, step, graph_of);
}

// The device half of a serving step's workload: a steady state with the engine's `sampling`, through the setup's
// pipeline stages.
void set_step_device(SimWorkload& w, const ModelSpec& model, const Gpu& gpu, const Request& setup,
                     const SamplingMode& sampling, const PowerSetting& power) {
  SimScenario scenario;
  scenario.measures = Measures::steady_state;
  scenario.sampling = sampling;
  scenario.power = power;
  set_device(w, gpu, setup, scenario);
  if (setup.pipeline_parallel > 1) w.pipeline = pipeline_of(model, gpu, setup);
}

// Throws Error for a scenario the simulator cannot run on a request of `gpus` GPUs.
void check_scenario(const SimScenario& sc, int gpus) {
  if (sc.parallelism == Parallelism::layer_split && gpus != 1)
    fail("a layer-split simulation runs the graph on one GPU at a time (request.gpus must be 1, got {})", gpus);
  if (sc.data_parallel < 1) fail("data_parallel must be at least 1, got {}", sc.data_parallel);
}
void check_scenario(const SimScenario& sc, const Request& request) {
  check_scenario(sc, request.gpus);
  if (request.pipeline_parallel == 1) return;
  if (sc.parallelism == Parallelism::layer_split) fail("a layer-split simulation has no pipeline stages");
  if (sc.speculation.active()) fail("speculative decoding is not simulated with pipeline stages");
  if (!sc.kv_cache) fail("a simulation without KV cache has no pipeline stages");
}

// Decoding with speculation: the mean verification steps that yield gen - 1 tokens (about (gen - 1) / E, E the tokens
// one verification yields; a whole step for the last few) of the whole batch at the mean context prompt + gen / 2,
// each verifying k + 1 positions per sequence (their logits too) after the draft's k passes. A steady state or a run to
// max_tokens decodes the same way (their mean context is not used).
std::vector<SimSegment> speculative_decode(const ModelSpec& model, const Gpu& gpu, const Request& request,
                                           const SimScenario& sc) {
  const Speculation& spec = sc.speculation;
  if (!sc.kv_cache) fail("speculative decoding verifies against the KV cache: it cannot run without one");
  MixedStep step;
  step.decodes = request.batch;
  step.decode_context = static_cast<double>(request.prompt_tokens) + static_cast<double>(request.gen_tokens) / 2;
  step.decode_positions = spec.verify_positions();
  step.draft_passes = spec.draft_passes();
  step.logits = request.batch * spec.verify_positions();
  const std::optional<ModelSpec> draft =
      spec.draft ? std::optional<ModelSpec>(without_context_window(*spec.draft)) : std::nullopt;
  std::vector<SimSegment> segments;
  fill_mixed_step(
      segments, model, without_context_window(model), gpu, device_features(gpu, request), request, step,
      [](const ModelSpec& m, const Request& r) { return build_kernel_graph(m, r); }, draft ? &*draft : nullptr);
  for (SimSegment& s : segments) s.steps *= spec.verification_steps(request.gen_tokens - 1);
  return segments;
}

// The draft's prefill of the prompt (its own KV cache of it, and its first proposal), inside the target's prefill
// step: its layers over the batch's prompts and its LM head once per sequence.
SimSegment draft_prefill(const ModelSpec& draft, const Gpu& gpu, const Request& request) {
  const ModelSpec unbounded = without_context_window(draft);
  MixedStep step;
  step.prefill_tokens = request.batch * request.prompt_tokens;
  step.prefill_chunks = request.batch;
  step.logits = request.batch;
  SimSegment s;
  s.steps = 1, s.step_tokens = static_cast<double>(step.prefill_tokens),
  s.sequences = static_cast<double>(request.batch);
  s.draft_pass = true;
  append_step_kernels(
      s, unbounded, unbounded, gpu, device_features(gpu, request), request, step,
      [](const ModelSpec& m, const Request& r) { return build_kernel_graph(m, r); }, true);
  return s;
}

}  // namespace

SimWorkload prepare_workload(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& sc,
                             const KernelGraph& graph, const GraphFeatures& features) {
  check_scenario(sc, request);
  SimWorkload w;
  const bool stalls = sc.measures == Measures::steady_state && sc.kv_cache &&
                      EngineCatalog::bundled().get(request.engine).prefill_stalls_decode;
  if (stalls) w.prefill = stalled_prefill(model, gpu, request);
  else w.prefill.push_back(segment(model, gpu, request, graph, features, Phase::prefill, 1));
  if (sc.speculation.draft) w.prefill.push_back(draft_prefill(*sc.speculation.draft, gpu, request));
  if (request.gen_tokens > 1) {
    const double steps = static_cast<double>(request.gen_tokens - 1);
    if (sc.speculation.active()) w.decode = speculative_decode(model, gpu, request, sc);
    else if (!sc.kv_cache) w.decode = recompute_decode(model, gpu, request);
    else if (sc.decode_steps > request.gen_tokens - 1)
      w.decode.push_back(ran_to_cap_decode(model, gpu, request, sc.decode_steps));
    else if (length_biased(sc)) w.decode.push_back(length_biased_decode(model, gpu, request, sc.gen_tokens_cv));
    else w.decode.push_back(segment(model, gpu, request, graph, features, Phase::decode, steps));
  }
  set_device(w, gpu, request, sc);
  if (request.pipeline_parallel > 1) w.pipeline = pipeline_of(model, gpu, request);
  return w;
}

SimWorkload prepare_workload(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& sc) {
  return describe_workload(model, gpu, request, sc).sim;
}

namespace {

// Appends the segments of the last wave: the same request with its `sequences` (fewer than a full wave, so it fits).
void append_last_wave(SimWorkload& w, const ModelSpec& model, const Gpu& gpu, Request request, const SimScenario& sc,
                      long sequences) {
  request.batch = sequences;
  const SimWorkload wave = prepare_workload(model, gpu, request, sc);
  w.prefill.insert(w.prefill.end(), wave.prefill.begin(), wave.prefill.end());
  w.decode.insert(w.decode.end(), wave.decode.begin(), wave.decode.end());
}

}  // namespace

Workload describe_workload(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& sc) {
  // When the KV cache of the whole batch does not fit, the engine runs as many sequences as fit, the rest in waves.
  const MemoryPlan plan = plan_memory(model, request, gpu);
  const bool waves = plan.runs() && plan.waves > 1 && sc.parallelism == Parallelism::tensor;
  Request first = request;
  if (waves) first.batch = plan.sequences_per_wave;
  // Pipeline stages: the batch runs as micro-batches, one per stage; the workload is the largest micro-batch's, and
  // counts batch / that of them (the work of the batch's sequences, not of whole micro-batches).
  const double microbatches = static_cast<double>(first.batch) / static_cast<double>(first.microbatch());
  first.batch = first.microbatch();
  Workload w;
  w.graph = build_kernel_graph(model, first);
  w.features = compute_features(w.graph, gpu, first);
  w.sim = prepare_workload(model, gpu, first, sc, w.graph, w.features);
  for (auto* segments : {&w.sim.prefill, &w.sim.decode})
    for (SimSegment& segment : *segments) segment.microbatches = microbatches;
  if (!waves) return w;
  for (auto* segments : {&w.sim.prefill, &w.sim.decode})
    for (SimSegment& segment : *segments) segment.steps *= static_cast<double>(plan.waves - 1);
  append_last_wave(w.sim, model, gpu, request, sc, plan.last_wave_sequences);
  w.features.notes.push_back(plan.note);
  return w;
}

SimWorkload mixed_step_workload(const ModelSpec& model, const Gpu& gpu, const Request& setup, const MixedStep& step,
                                const SamplingMode& sampling, const PowerSetting& power, const ModelSpec* draft) {
  const std::optional<ModelSpec> draft_unbounded =
      draft ? std::optional<ModelSpec>(without_context_window(*draft)) : std::nullopt;
  SimWorkload w;
  fill_mixed_step(
      w.decode, model, without_context_window(model), gpu, device_features(gpu, setup), setup, step,
      [](const ModelSpec& m, const Request& r) { return build_kernel_graph(m, r); },
      draft_unbounded ? &*draft_unbounded : nullptr);
  set_step_device(w, model, gpu, setup, sampling, power);
  return w;
}

SimResult run_workload(const SimWorkload& w, const SimParams& p) { return run_workload(w, resolve_params(w, p)); }

SimResult run_workload(const SimWorkload& w, const ResolvedParams& resolved) {
  SimResult r;
  std::tie(r.energy_j.prefill, r.latency_s.prefill) = phase_energy_time(w.prefill, w, resolved, !w.steady_state);
  std::tie(r.energy_j.decode, r.latency_s.decode) = phase_energy_time(w.decode, w, resolved);
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
  for (auto* value : {&r.latency_s.prefill, &r.latency_s.decode})
    *value *= std::exp(params.latency_noise * normal(rng));
  set_mean_power(r);
  return r;
}

}  // namespace llmco2::sim

namespace llmco2::sim {
namespace {

// The setup with counts every model accepts (1 sequence, 1 prompt token, 2 generated): the graph's structure does
// not depend on them, and validating it checks only the setup.
Request with_unit_counts(Request setup) {
  setup.batch = 1, setup.prompt_tokens = 1, setup.gen_tokens = 2;
  return setup;
}

// Whether the `n` doubles at `a` and `b` are equal bit for bit, read one at a time as they were written (a wider read
// of fields just stored stalls on store forwarding; memcmp reads 32 bytes at a time).
bool same_bits(const double* a, const double* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i])) return false;
  return true;
}

// Whether `node` in `phase` has exactly the inputs of `before` that a launch's work depends on besides the setup's:
// its costs and experts loaded, bit for bit.
bool same_phase_inputs(const KernelNode& node, const KernelNode& before, Phase phase) {
  static_assert(sizeof(KernelCost) == 11 * sizeof(double), "KernelCost is compared as 11 doubles");
  return same_bits(&node.cost(phase).ops, &before.cost(phase).ops, 11) &&
         same_bits(&node.experts_loaded(phase), &before.experts_loaded(phase), 1);
}

}  // namespace

SetupSimulator::SetupSimulator(const ModelSpec& model, const Gpu& gpu, const Request& setup,
                               const SimScenario& scenario, const SimParams& params)
    : model_(model),
      gpu_(gpu),
      scenario_(scenario),
      params_(params),
      prepared_(scenario.measures != Measures::steady_state && scenario.kv_cache && setup.pipeline_parallel == 1),
      graph_(model, with_unit_counts(setup)),
      memory_(model, setup, gpu),
      features_(device_features(gpu, setup)) {
  check_scenario(scenario, setup);
  set_device(workload_, gpu, setup, scenario);
  resolved_ = std::make_unique<ResolvedParams>(resolve_params(workload_, params));
  const KernelGraph& graph = graph_.evaluate(with_unit_counts(setup));
  workload_.prefill.resize(1);
  workload_.decode.resize(1);
  // Each kernel's setup part (class, roofs, launches per step); its work is set per request (refill_segment).
  for (SimSegment* s : {&workload_.prefill[0], &workload_.decode[0]})
    add_kernels(*s, model, gpu, graph, features_, Phase::prefill, 1, [](const KernelNode&, bool) { return true; });
  set_kernel_slots(graph);
}

void SetupSimulator::set_kernel_slots(const KernelGraph& graph) {
  auto add = [&](const std::vector<KernelNode>& nodes) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const KernelNode& n = nodes[i];
      const bool routed = is_routed(n, model_);
      const KernelNode* before = i > 0 ? &nodes[i - 1] : nullptr;
      slots_.push_back({routed, before && before->type == n.type && before->layer_share == n.layer_share &&
                                    is_routed(*before, model_) == routed && before->kernel != kSamplerKernel &&
                                    n.kernel != kSamplerKernel});
    }
  };
  add(graph.nodes);
  add(graph.step_nodes);
}

void SetupSimulator::refill_segment(SimSegment& s, const KernelGraph& graph, const Request& request, Phase phase,
                                    double steps, double phase_steps) {
  set_segment_shape(s, request, phase, steps);
  size_t slot = 0;
  for (const std::vector<KernelNode>* nodes : {&graph.nodes, &graph.step_nodes})
    for (size_t i = 0; i < nodes->size(); ++i, ++slot) {
      SimKernel& k = s.kernels[slot];
      const KernelNode& node = (*nodes)[i];
      k.repeats_previous = slots_[slot].may_repeat && same_phase_inputs(node, (*nodes)[i - 1], phase);
      if (k.repeats_previous) k.work = s.kernels[slot - 1].work;
      else set_kernel_work(k.work, node, node.cost(phase), phase, phase_steps, model_, slots_[slot].routed);
    }
}

SetupSimulator::~SetupSimulator() = default;

SimResult SetupSimulator::simulate(const Request& request) {
  template_graph_ = nullptr;
  validate_counts(request, model_);
  const MemoryPlan plan = memory_.plan(request);
  const bool waves = plan.runs() && plan.waves > 1 && scenario_.parallelism == Parallelism::tensor;
  const bool ran_to_cap = scenario_.decode_steps > request.gen_tokens - 1;  // its decode is not the template's
  if (!prepared_ || waves || ran_to_cap || scenario_.speculation.active())
    return sim::simulate(model_, gpu_, request, scenario_, params_);
  const KernelGraph& graph = graph_.evaluate(request);
  template_graph_ = &graph;
  refill_segment(workload_.prefill[0], graph, request, Phase::prefill, 1, graph_.shape(Phase::prefill).steps);
  if (request.gen_tokens > 1) {
    const double steps = static_cast<double>(request.gen_tokens - 1);
    refill_segment(workload_.decode[0], graph, request, Phase::decode, steps, graph_.shape(Phase::decode).steps);
    return run_workload(workload_, *resolved_);
  }
  workload_.decode.swap(spare_decode_);  // one generated token: no decode, its segment set aside meanwhile
  const SimResult result = run_workload(workload_, *resolved_);
  workload_.decode.swap(spare_decode_);
  return result;
}

MixedStepWorkloads::MixedStepWorkloads(const ModelSpec& model, const Gpu& gpu, const Request& setup,
                                       const SamplingMode& sampling, const PowerSetting& power, const ModelSpec* draft)
    : model_(model),
      unbounded_(without_context_window(model)),
      gpu_(gpu),
      setup_(setup),
      features_(device_features(gpu, setup)),
      graph_(model, with_unit_counts(setup)) {
  if (draft) {
    draft_ = std::make_unique<ModelSpec>(without_context_window(*draft));
    draft_graph_ = std::make_unique<KernelGraphTemplate>(*draft_, with_unit_counts(setup));
  }
  workload_.decode.resize(1);
  set_step_device(workload_, model, gpu, setup, sampling, power);
}

MixedStepWorkloads::~MixedStepWorkloads() = default;

const SimWorkload& MixedStepWorkloads::workload(const MixedStep& step) {
  // The template's graph is the model's (max_positions only bounds the checks): validated as build_kernel_graph would.
  auto graph_of = [this](const ModelSpec& model, const Request& request) -> const KernelGraph& {
    if (draft_ && &model == draft_.get()) return draft_graph_->evaluate(request);
    validate_counts(request, model);
    return graph_.evaluate(request);
  };
  fill_mixed_step(workload_.decode, model_, unbounded_, gpu_, features_, setup_, step, graph_of, draft_.get());
  return workload_;
}

}  // namespace llmco2::sim
