// sim/simulator.h - the reference simulator: what an NVML measurement of a configuration would read, from the
// kernel graph, the GPU's datasheet roofs, achievable kernel efficiencies, the serving engine and a bounded power
// model.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dataset/record.h"
#include "engine/engine_profile.h"
#include "features/features.h"
#include "features/memory_fit.h"
#include "graph/graph_template.h"
#include "graph/kernel_graph.h"
#include "graph/request.h"
#include "hardware/gpu.h"
#include "hardware/power_setting.h"
#include "model/model_spec.h"
#include "sim/module.h"
#include "sim/sim_params.h"
#include "speculation/speculation.h"

namespace llmco2::sim {

// How the configuration runs beyond the request itself.
struct SimScenario {
  Measures measures = Measures::isolated;  // steady_state: prefills interleave with the decode iterations
  Parallelism parallelism = Parallelism::tensor;
  int layer_split_gpus = 1;  // layer_split: GPUs the layers are spread over (request.gpus must be 1)
  int data_parallel = 1;     // independent replicas, each serving batch / data_parallel
  bool kv_cache = true;      // false: every decode step recomputes the whole sequence (HF use_cache=False)
  PowerSetting power;        // each GPU's power limit and locked SM clock (default: its TDP, not locked)
  // steady_state: coefficient of variation of the generated tokens per request (0: all alike). Sampling the running
  // batch at a random step finds request i with probability proportional to its length (the inspection paradox), so
  // its sequences sit at a mean context of prompt + E[G^2] / (2 E[G]) = prompt + gen (1 + cv^2) / 2, not gen / 2.
  double gen_tokens_cv = 0;
  // fixed_batch run to its longest response, which reached max_tokens (a generate() call on a batch returns when its
  // last sequence ends): the batch decodes this many steps while its sequences finish one by one, the `batch` x
  // (gen - 1) decode tokens spread over them. 0: every sequence generates gen_tokens, the batch decodes gen - 1 steps.
  long decode_steps = 0;
  SamplingMode sampling;  // what the engine's sampler does per step (EngineProfile::sampler_bytes_per_logit)
  // Speculative decoding: each decode step verifies k + 1 positions per sequence after the draft's k passes, and
  // yields tokens_per_step() tokens on average (needs the KV cache; the decode runs at the mean context).
  Speculation speculation;
  bool operator==(const SimScenario&) const = default;
};

// Dynamic power is a property of the die and the work, not of the board's TDP (which only caps it). Each die's
// figures come from its highest-TDP board (which runs at the limit under full load): its dynamic range (TDP - idle),
// dense bf16/fp16 peak and memory bandwidth. A board's operations and bytes draw what they draw on that board
// (energy per operation and per byte), its active power scales with its clocks (peak over the reference peak).
// Same die, same work, about the same energy: an H100 NVL or PCIe pays what an H100 SXM pays, up to its own TDP.
struct DiePower {
  double dynamic_w = 0;        // reference board's TDP - idle (0: this board's own range, ratios 1)
  double clock_ratio = 1;      // this board's dense peak / the reference board's
  double bandwidth_ratio = 1;  // this board's memory bandwidth / the reference board's
};
// One kernel of a step on one GPU, launched `count` times per step (the layer count for layer kernels).
struct SimKernel {
  KernelWork work;
  double count = 1;
  bool sampler = false;  // the token sampler: its work is one pass, scaled by the engine's sampler_bytes_per_logit
  // The same launch as the kernel before it in the segment (SetupSimulator marks v_proj after k_proj, up_proj
  // after gate_proj): its time is that kernel's, not computed again.
  bool repeats_previous = false;
};
// A run of identical steps (prefill: 1 step; decode: gen-1 steps with the mean context).
struct SimSegment {
  double steps = 0;
  double step_tokens = 0;  // tokens one step processes (decides CUDA-graph replay vs eager launches)
  double sequences = 1;    // sequences in the running batch
  // A draft's pass inside a speculative step (or the draft's prefill inside the target's): no per-step host work of
  // its own; the proposer's host operations of the pass (EngineProfile::draft_pass_host_s) overlap its kernels.
  bool draft_pass = false;
  // A speculative verification step: the rejection sampler and the proposer's set-up add the engine's
  // spec_step_host_s to its serial host work.
  bool verifies = false;
  // Pipeline stages: micro-batches of this step in flight at once (one per stage at most; 1 without stages), as the
  // batch over the largest micro-batch, whose pass through every stage the kernels are (fractional when they differ).
  double microbatches = 1;
  std::vector<SimKernel> kernels;
};
// The pipeline of a workload whose layers run in consecutive stages (Request::pipeline_parallel).
struct SimPipeline {
  int stages = 1;
  double boundary_bytes_per_token = 0;  // hidden state and residual each GPU sends per token to the next stage
  double link_bytes_per_s = 0;          // the link between stages, per GPU and direction
  double latency_s = 0;                 // one send's fixed cost over it
  bool operator==(const SimPipeline&) const = default;
};
// The link between consecutive stages of `request` on `gpu` (NVLink inside a node, the node's scale-out network
// between nodes) and the bytes it carries. Throws Error when the stages span nodes of a type with no network named.
SimPipeline pipeline_of(const ModelSpec& model, const Gpu& gpu, const Request& request);
struct SimWorkload {
  std::vector<SimSegment> prefill, decode;
  DeviceRoofs roofs;
  std::string generation;  // GPU architecture generation: which kernel efficiencies apply
  std::string gpu_id;      // the catalog GPU (a GPU with kernel efficiencies of its own: KernelParams::gpus)
  std::string link;        // link class of the tensor-parallel group
  std::string engine;
  int gpus_total = 1;    // all GPUs drawing power (idle ones included)
  double replicas = 1;   // data-parallel copies of the work
  SimPipeline pipeline;  // stages 1: none (set by pipeline_of where the request has stages)
  bool layer_split = false;
  bool steady_state = false;
  SamplingMode sampling;
  double tdp_w = 0, idle_w = 0;  // per GPU; tdp_w is the power cap when one is set
  double clock_share = 1;        // the locked SM clock over the board's maximum (1: not locked)
  DiePower die;                  // the die's power figures, shared by every board with this die
};

DiePower die_power(const Gpu& gpu);

struct PhaseResult {
  double prefill = 0, decode = 0;
  double total() const { return prefill + decode; }
};
struct SimResult {
  PhaseResult energy_j;     // all GPUs
  PhaseResult latency_s;    // wall time
  double mean_power_w = 0;  // per GPU, over the whole run
  int gpus = 1;             // GPUs drawing power
};

// Builds the per-step kernel costs from the request's kernel graph and features (computed once by the caller);
// independent of the parameters. Throws Error when the request is invalid for the model.
SimWorkload prepare_workload(const ModelSpec& model, const Gpu& gpu, const Request& request,
                             const SimScenario& scenario, const KernelGraph& graph, const GraphFeatures& features);
// Builds the graph and features itself.
SimWorkload prepare_workload(const ModelSpec& model, const Gpu& gpu, const Request& request,
                             const SimScenario& scenario);

// One description of a request, computed once and passed down to the simulator, the GNN encoding and the outputs:
// its kernel graph, the graph priced on the GPU (Roofline features, fallback notes) and the per-step kernel costs.
struct Workload {
  KernelGraph graph;
  GraphFeatures features;
  SimWorkload sim;
};
Workload describe_workload(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& scenario);

// One iteration of a continuous-batching engine (vLLM v1): sequences decoding one token each and prompt chunks of
// requests being prefilled, run as one forward pass over all their tokens, so the weights are streamed once.
struct MixedStep {
  long decodes = 0;            // sequences adding one token
  double decode_context = 1;   // their mean context: tokens in the KV cache once this step's token is in
  long prefill_tokens = 0;     // prompt tokens of the chunks, all requests together
  long prefill_chunks = 0;     // requests the chunks belong to
  double prefill_context = 0;  // mean tokens of those requests already cached before their chunk
  long logits = 0;  // positions whose logits the LM head computes (decodes' and chunks that end their prompt)
  // Speculative decoding: the positions each decoding sequence verifies (1 + its draft tokens; 1: plain decode), and
  // the draft's passes over the decoding sequences (one token each) before the verification.
  long decode_positions = 1;
  double draft_passes = 0;
};

// The step as a workload of one decode segment of one step: token-wise kernels (GEMMs, norms, activations, all-reduces)
// over decodes + prefill tokens, decode attention at the decodes' context, chunk attention over the cached prefix and
// the chunk (causal), and the LM head and sampler over the sampling sequences only. `setup` gives the GPUs,
// precision, engine and attention kernel; `sampling` what the engine's sampler does per sampled sequence. Throws Error
// when the step is empty.
// With speculation, `draft` is the model the draft passes run (a draft head or model; null: none on the GPU); its
// prefill of the step's prompt chunks runs too.
SimWorkload mixed_step_workload(const ModelSpec& model, const Gpu& gpu, const Request& setup, const MixedStep& step,
                                const SamplingMode& sampling = {}, const PowerSetting& power = {},
                                const ModelSpec* draft = nullptr);

// mixed_step_workload for the steps of one setup (GPUs, precision, engine, attention kernel, sampling): the setup's
// graph built once as a template and re-costed for each part of a step, its device features and the workload's device
// half once, the kernels' storage reused. workload(step) equals mixed_step_workload(model, gpu, setup, step, sampling,
// power) bit for bit (tests/sim/setup_simulator_test.cc). Not thread-safe; the model and GPU must outlive it.
class MixedStepWorkloads {
 public:
  // Throws Error when the setup is invalid for the model (validate_request).
  MixedStepWorkloads(const ModelSpec& model, const Gpu& gpu, const Request& setup, const SamplingMode& sampling = {},
                     const PowerSetting& power = {}, const ModelSpec* draft = nullptr);
  ~MixedStepWorkloads();
  MixedStepWorkloads(const MixedStepWorkloads&) = delete;
  MixedStepWorkloads& operator=(const MixedStepWorkloads&) = delete;

  // The workload of `step`, valid until the next call; throws Error as mixed_step_workload does.
  const SimWorkload& workload(const MixedStep& step);

 private:
  const ModelSpec& model_;
  ModelSpec unbounded_;  // the model without its context window: the step's tokens are not positions
  const Gpu& gpu_;
  Request setup_;
  GraphFeatures features_;
  KernelGraphTemplate graph_;
  // The draft's model (unbounded) and graph template, for steps with draft passes; null without a draft.
  std::unique_ptr<ModelSpec> draft_;
  std::unique_ptr<KernelGraphTemplate> draft_graph_;
  SimWorkload workload_;
};

// Times and powers the workload under `params`. Cheap: the calibration calls it millions of times.
SimResult run_workload(const SimWorkload& workload, const SimParams& params);

// The parameters that apply to a workload's device and engine, looked up once (by generation, link class and
// engine) for the workloads of one setup.
struct ResolvedParams {
  KernelEfficiency efficiency;
  const NetworkEfficiency& network;
  const EngineProfile& engine;
  const SimParams& params;
  PowerParams power;      // the power model on this GPU (SimParams::power_on)
  double sampler_passes;  // the engine's sampler over the one pass the graph counts (its sampling mode's bytes / 8)
  // The engine's own all-reduce over this link (NVLink), or none: NCCL's ring (engine_direct_allreduce).
  std::optional<DirectAllReduceEfficiency> direct_allreduce;
};
ResolvedParams resolve_params(const SimWorkload& workload, const SimParams& params);
// The all-reduce of an engine with its own kernel over NVLink: replayed in CUDA graphs, the curve fitted for its kernel
// and generation (KernelParams::direct_allreduce); launched eagerly (vLLM --enforce-eager), each call also waits for
// the last rank's launch, priced as two stages of the eager NCCL class's step at its bus efficiency, as before the
// tables (AIConfigurator's eager rows time a host loop that copies the tensor too, not the call). None for an engine
// without one, or over PCIe.
std::optional<DirectAllReduceEfficiency> engine_direct_allreduce(const KernelParams& kernels,
                                                                 const SimWorkload& workload,
                                                                 const EngineProfile& engine);
// run_workload with the parameters resolved for the workload's device and engine (the same result).
SimResult run_workload(const SimWorkload& workload, const ResolvedParams& resolved);

// prepare + run.
SimResult simulate(const ModelSpec& model, const Gpu& gpu, const Request& request, const SimScenario& scenario,
                   const SimParams& params);

// Many requests of one setup (model, GPU, GPU count, precision, attention kernel, engine, scenario) simulated as
// arithmetic over what the setup shares, prepared once: its graph's structure (re-costed per request), device roofs,
// resolved parameters and memory terms, and a workload whose storage is reused. simulate(request) equals
// simulate(model, gpu, request, scenario, params) bit for bit (tests/sim/setup_simulator_test.cc); requests whose
// batch runs in waves, and steady-state or cache-less scenarios, take that path itself. Not thread-safe; the model,
// GPU and params must outlive it.
class SetupSimulator {
 public:
  // Throws Error when the setup is invalid for the model (validate_request, the scenario's parallelism).
  SetupSimulator(const ModelSpec& model, const Gpu& gpu, const Request& setup, const SimScenario& scenario,
                 const SimParams& params);
  ~SetupSimulator();
  SetupSimulator(const SetupSimulator&) = delete;
  SetupSimulator& operator=(const SetupSimulator&) = delete;

  // `request`: the setup's GPUs, precision, attention kernel and engine with its own batch, prompt and gen (checked:
  // throws Error as validate_request would).
  SimResult simulate(const Request& request);
  // The graph the last simulate() priced through the setup's template (build_kernel_graph of its request), or null
  // when that call took simulate() itself (waves, steady state, no KV cache) or none was made. Valid until the next.
  const KernelGraph* template_graph() const { return template_graph_; }
  // The setup's device features (device_features: peaks, link, notes; no node features).
  const GraphFeatures& device() const { return features_; }

 private:
  // What a kernel slot of the setup's segments takes from its node that no request changes.
  struct KernelSlot {
    bool routed = false;      // a routed expert's GEMM: its rows are split among the loaded experts
    bool may_repeat = false;  // same type, layer share and role as the slot before it (equal costs: equal launches)
  };
  void set_kernel_slots(const KernelGraph& graph);
  void refill_segment(SimSegment& s, const KernelGraph& graph, const Request& request, Phase phase, double steps,
                      double phase_steps);

  const ModelSpec& model_;
  const Gpu& gpu_;
  SimScenario scenario_;
  const SimParams& params_;
  bool prepared_;  // false: every request through simulate()
  KernelGraphTemplate graph_;
  MemoryPlanner memory_;
  GraphFeatures features_;
  SimWorkload workload_;           // its segments' kernels hold the setup's parts (class, roofs, counts) from the start
  std::vector<KernelSlot> slots_;  // parallel to the graph's nodes, then its step nodes
  std::vector<SimSegment> spare_decode_;      // where the decode segment waits while a one-token request runs
  std::unique_ptr<ResolvedParams> resolved_;  // references into params_
  const KernelGraph* template_graph_ = nullptr;
};

// One noisy repeat: the result scaled by seeded log-normal factors with the params' spreads.
SimResult add_noise(const SimResult& result, const SimParams& params, uint64_t seed);

}  // namespace llmco2::sim
