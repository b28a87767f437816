// serving/serve_sim.h - a request log replayed through a deployment in virtual time: arrivals at the log's timestamps,
// a router over replicas, each replica an iteration-level scheduler (serving/scheduler.h) whose iterations last and
// draw what the simulator's physics says (serving/step_cost.h); idle power between iterations; each iteration's
// energy shared among its requests by the tokens they ran in it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataset/request_log.h"
#include "engine/engine_profile.h"
#include "graph/request.h"
#include "hardware/fabric.h"
#include "hardware/gpu.h"
#include "hardware/host_power.h"
#include "hardware/power_setting.h"
#include "model/model_spec.h"
#include "serving/module.h"
#include "serving/scheduler.h"
#include "sim/sim_params.h"
#include "speculation/speculation.h"

namespace llmco2::serving {

// How arrivals go to replicas: in turn, to the one with the fewest unfinished requests, or (prefix-aware, as llm-d's
// and Dynamo's KV-aware routers and SGLang's cache-aware router route) a conversation's turn to the replica that
// served its previous turn, whose prefix cache holds it; a request without a session goes to the least loaded.
enum class Router { round_robin, least_loaded, session };
Router parse_router(const std::string& name);  // throws Error naming the accepted values

// The most replicas one replay simulates: the event loop scans every replica at each event, so the cost of a replay
// grows with replicas x events (docs/reliability.md, "Bounds").
inline constexpr int kMaxReplicas = 1024;

// Disaggregated prefill and decode (DistServe, Splitwise, Dynamo, llm-d, vLLM's P/D connectors): a pool of replicas
// that only decode, fed by the deployment's own replicas, which then only prefill. Each request's prompt is computed
// on a prefill replica; its KV cache crosses `link` (one transfer at a time at either end of it, all of the
// replica's GPUs sending their shares in parallel) into blocks a decode replica reserved for it; the decode replica
// recomputes the last prompt token for its logits and streams the response (vLLM's NixlConnector and proxy).
struct DecodePool {
  Gpu gpu;
  Request setup;  // per decode replica: GPUs (tensor parallel), precision, engine, attention kernel
  int replicas = 1;
  EnergyScope scope;  // energy metered for the decode GPUs (their own node type)
  FabricLink link;    // between the pools (fabric_joining / network_between, or the user's)
};

struct Deployment {
  ModelSpec model;
  Gpu gpu;
  Request setup;  // per replica: GPUs (tensor parallel), precision, engine, attention kernel
  int replicas = 1;
  Router router = Router::round_robin;
  long max_num_seqs = 0;        // 0: the engine's default for this GPU (vLLM: 1024 on >= 70 GiB, else 256)
  long max_batched_tokens = 0;  // 0: the engine's default (vLLM serve: 8192 on >= 70 GiB, else 2048)
  long block_size = 16;
  double gpu_memory_utilization = 0;  // 0: the engine's profile (vLLM 0.9)
  SamplingMode sampling;              // the sampler's work per sampled sequence (penalties: extra vocabulary passes)
  EnergyScope scope;                  // energy metered: the GPUs' (unset node) or the nodes' at the wall
  PowerSetting power;                 // each GPU's power limit (nvidia-smi -pl) and locked SM clock (-lgc)
  bool prefix_caching = true;         // automatic prefix caching (vLLM v1 and SGLang: on by default)
  Speculation speculation;            // speculative decoding (off unless a method is set)
  // Set: disaggregated serving; `replicas` x `setup` then only prefill, and these decode.
  std::optional<DecodePool> decode;
};

// "P:D" (`--disaggregate`) as prefill and decode replica counts, each at least 1, kMaxReplicas in all; throws Error
// naming the flag.
std::pair<int, int> parse_disaggregation(const std::string& text);

// The decode pool of `replicas` x `setup` on `gpu` fed by `d`'s replicas (its prefill pool): the link between them
// from the node catalog (link_between_pools), or `link_gbps` Gb/s per GPU where > 0 (kMinLinkGbps to kMaxLinkGbps,
// a network send's latency). Throws Error naming the flag or the missing network.
inline constexpr double kMinLinkGbps = 0.1, kMaxLinkGbps = 1e5;
DecodePool make_decode_pool(const Deployment& d, const Gpu& gpu, const Request& setup, int replicas,
                            const EnergyScope& scope, double link_gbps = 0);

// Refuses what a replay cannot run (replicas out of bounds; with a decode pool, speculation or pipeline stages),
// naming the flag; replay() checks it, and the API before it builds the link between pools.
void check_deployment(const Deployment& d);

// The decode pool as a deployment of its own (its GPU, setup, replicas and scope; everything else as `d`'s).
Deployment decode_deployment(const Deployment& d);

// The link between a deployment's prefill and decode pools: within one fabric where both pools' GPUs are of one type
// and fit it (NVLink domain, one node), else the network between their nodes. Throws Error when the node catalog
// names no network for a pool's GPU type.
FabricLink link_between_pools(const Deployment& d, int decode_replicas, const Gpu& decode_gpu, int decode_gpus);

// Bytes of one request's KV cache over `positions` prompt positions, all GPUs of a `setup` replica together (each
// GPU sends its heads' share), and the seconds a transfer of them takes over `link` from `from_gpus` to `to_gpus`
// GPUs (min of the two NICs in parallel).
double kv_transfer_bytes(const ModelSpec& model, const Request& setup, long positions);
double kv_transfer_s(double bytes, const FabricLink& link, int from_gpus, int to_gpus);

// One stretch of a replica's timeline as a power meter sees it: an iteration, or an idle gap before the next one.
struct StepRecord {
  int replica = 0;
  double start_s = 0, time_s = 0;
  double energy_j = 0;  // all GPUs of the replica over the stretch
  bool idle = false;
  long decodes = 0;               // requests that added one token after their first (inter-token gaps that end here)
  long prefill_tokens = 0;        // prompt tokens computed (chunks and recomputation after preemption)
  long sampled = 0;               // output tokens produced (decodes + prompts finished in this iteration)
  long running = 0, waiting = 0;  // the replica's queues once the iteration was scheduled
  double kv_share = 0;            // of the replica's KV blocks in use
};
using StepSink = std::function<void(const StepRecord&)>;

struct ReplayOptions {
  double rate_scale = 1;  // arrivals come this many times faster (timestamps divided by it)
  double duration_s = 0;  // > 0: only requests arriving in the first duration_s seconds; the window lasts at least this
  // > 0: a closed loop of this many clients, as `vllm bench serve --max-concurrency` runs one: the log's next request
  // is sent at its own time or, while this many are in flight, when the first of them ends, whichever is later; its
  // latencies count from when it was sent. A log without timestamps is a queue the clients work through.
  long concurrency = 0;
  bool progress = false;
  long expected_requests = 0;       // for the progress line's ETA (0: unknown)
  std::string source_name;          // the log's path, for messages naming a line of it
  bool keep_time_outliers = false;  // false: an arrival more than kMaxTimeGap_s after the previous one fails the run
  StepSink on_step;  // optional: every iteration and idle gap of every replica, in time order per replica
  // Idle energy to requests: each idle gap of a replica goes to the requests of the iteration that ends it (the work
  // the idle GPUs were kept for), by tokens like the iteration's own energy. The gap after a replica's last iteration
  // stays unattributed.
  bool attribute_idle = false;
  // Prefix caching without session columns: every request's first prefix_share x prompt tokens are one prompt all
  // requests share (a system prompt), cacheable as such; the rest is its own. 0: nothing shared.
  double prefix_share = 0;
};

// Refuses options a replay cannot run with (a prefix share outside [0, 1), a rate scale not positive, a negative
// concurrency), naming the flag; replay() and the capacity planner check them before any work.
void check_replay_options(const ReplayOptions& options);

// The replica's scheduler limits: the engine's defaults where the deployment leaves them at 0, and the KV blocks that
// the memory left after weights and the engine's reserve holds. Throws Error when the weights do not fit.
SchedulerLimits scheduler_limits(const Deployment& d);

struct ReplayTotals {
  double window_s = 0;           // from the first arrival (time 0) to the end of the last request or of the window
  double busy_energy_j = 0;      // all GPUs, during iterations
  double idle_energy_j = 0;      // all GPUs, between iterations
  double attributed_idle_j = 0;  // the part of idle_energy_j given to requests (attribute_idle)
  double busy_gpu_s = 0;         // replica iteration time x GPUs per replica
  double running_gpu_s = 0;      // requests running x replica iteration time x GPUs per replica
  long steps = 0;
  long preemptions = 0;
  long completed = 0;
  long rejected = 0;  // longer than a replica's whole KV cache
  long peak_running = 0, peak_waiting = 0;
  double peak_kv_share = 0;  // of a replica's blocks
  long distinct_shapes = 0;  // step costs simulated (the rest came from the memo)
  long peak_in_flight = 0;   // request slots the replay ever held at once (its memory)
  int gpus_total = 0;
  long prefix_queried_tokens = 0;  // prompt tokens admitted requests asked for (recomputations included)
  long prefix_hit_tokens = 0;      // of those, found in the prefix cache (their prefill skipped)
  // Disaggregated serving: KV caches sent from prefill to decode replicas, their bytes, and the seconds from the end
  // of a prefill to the cache's arrival (waiting for the link included), summed.
  long kv_transfers = 0;
  double kv_transfer_bytes = 0, kv_transfer_wait_s = 0;
  int decode_gpus_total = 0;    // of gpus_total, the decode pool's
  long rejected_by_decode = 0;  // of rejected, those only the decode pool's cache is too small for
  double prefix_hit_rate() const {
    return prefix_queried_tokens > 0
               ? static_cast<double>(prefix_hit_tokens) / static_cast<double>(prefix_queried_tokens)
               : 0.0;
  }
  // The batch a replica ran at: its running requests weighted by iteration time (1 when nothing ran).
  double mean_running() const { return busy_gpu_s > 0 ? running_gpu_s / busy_gpu_s : 1.0; }
};

// Called once per finished request (in finishing order) with its figures; rejected ones have finish_s < 0.
using RequestSink = std::function<void(const ServedRequest&)>;

// The log's requests in arrival order, one at a time; nullopt at the end.
using RequestSource = std::function<std::optional<LoggedRequest>()>;

// Replays a stream of requests (arrival times must not decrease: throws Error naming the line that goes back). Memory
// follows the requests in flight, not the stream's length.
ReplayTotals replay(const RequestSource& source, const Deployment& deployment, const SimParams& params,
                    const ReplayOptions& options, const RequestSink& on_request);
// Replays an in-memory log (in any order: sorted by arrival first).
ReplayTotals replay(const RequestLog& log, const Deployment& deployment, const SimParams& params, ReplayOptions options,
                    const RequestSink& on_request);

}  // namespace llmco2::serving
