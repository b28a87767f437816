// serving/serve_sim.cc - the discrete-event replay: arrivals, routing, iterations and idle gaps in virtual time.
#include "serving/serve_sim.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/error.h"
#include "core/progress.h"
#include "engine/engine_profile.h"
#include "features/memory_fit.h"
#include "serving/step_cost.h"

namespace llmco2::serving {

Router parse_router(const std::string& name) {
  if (name == "round-robin") return Router::round_robin;
  if (name == "least-loaded") return Router::least_loaded;
  if (name == "session") return Router::session;
  fail("--router: expected round-robin, least-loaded or session, got '{}'", name);
}

void check_replay_options(const ReplayOptions& o) {
  if (!(o.prefix_share >= 0 && o.prefix_share < 1))
    fail("--prefix-share must be a share of the prompt in [0, 1), got {}", o.prefix_share);
  if (!(o.rate_scale > 0) || !std::isfinite(o.rate_scale)) fail("--rate-scale must be positive, got {}", o.rate_scale);
  if (o.concurrency < 0) fail("--concurrency must be 0 (open loop) or a number of clients, got {}", o.concurrency);
}

namespace {

// vLLM's defaults for `vllm serve` (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults): GPUs with >= 70 GiB
// other than the A100 get max_num_batched_tokens 8192 and max_num_seqs 1024, the others 2048 and 256.
bool large_gpu(const Gpu& gpu) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return gpu.memory_bytes >= 70 * kGiB && gpu.id.find("a100") == std::string::npos;
}

}  // namespace

SchedulerLimits scheduler_limits(const Deployment& d) {
  SchedulerLimits limits;
  limits.max_num_seqs = d.max_num_seqs > 0 ? d.max_num_seqs : (large_gpu(d.gpu) ? 1024 : 256);
  limits.max_batched_tokens = d.max_batched_tokens > 0 ? d.max_batched_tokens : (large_gpu(d.gpu) ? 8192 : 2048);
  limits.block_size = d.block_size;
  limits.prefix_caching = d.prefix_caching;
  if (d.block_size < 1) fail("--block-size must be at least 1, got {}", d.block_size);
  Request probe = d.setup;
  probe.batch = 1, probe.prompt_tokens = 1, probe.gen_tokens = 1;
  const MemoryPlan plan = plan_memory(d.model, probe, d.gpu);
  double capacity_bytes = plan.kv_capacity_bytes_per_gpu;
  if (d.gpu_memory_utilization > 0) {
    if (d.gpu_memory_utilization > 1)
      fail("--gpu-memory-utilization must be in (0, 1], got {}", d.gpu_memory_utilization);
    const double engine_share = EngineCatalog::bundled().get(d.setup.engine).memory_utilization;
    capacity_bytes = std::max(0.0, capacity_bytes + (d.gpu_memory_utilization - engine_share) * d.gpu.memory_bytes);
  }
  Request block = probe;
  block.prompt_tokens = d.block_size - 1;
  // A block holds tokens' KV; a sequence's recurrent state (Mamba-2) is not per token and is left out here.
  double block_bytes = kv_bytes_per_sequence_per_gpu(d.model, block) - state_bytes_per_sequence_per_gpu(d.model, block);
  if (const Speculation& spec = d.speculation; spec.active()) {
    // The draft's weights leave less for the cache, and its own KV cache (a head: one layer) grows every block.
    capacity_bytes = std::max(0.0, capacity_bytes - spec.draft_weight_bytes / d.setup.gpus);
    if (spec.draft)
      block_bytes +=
          kv_bytes_per_sequence_per_gpu(*spec.draft, block) - state_bytes_per_sequence_per_gpu(*spec.draft, block);
    limits.draft_tokens = spec.draft_tokens;
    limits.tokens_per_step = spec.tokens_per_step();
    if (limits.max_batched_tokens < spec.verify_positions())
      fail("--max-batched-tokens {} is below the {} positions a verification with --spec-tokens {} runs",
           limits.max_batched_tokens, spec.verify_positions(), spec.draft_tokens);
  }
  // Pipeline stages: one scheduler per stage (vLLM's virtual engines), each with max_num_seqs and its share of the
  // blocks (vLLM divides the cache's blocks by the stages).
  limits.kv_blocks = static_cast<long>(std::floor(capacity_bytes / block_bytes)) / d.setup.pipeline_parallel;
  if (!plan.weights_fit || limits.kv_blocks < 1)
    fail("{}{} does not fit on {}{} x {} with the engine's memory reserve: no room for a KV cache", d.model.id,
         d.speculation.draft ? " with its draft (" + d.speculation.draft->id + ")" : "", d.setup.gpus,
         d.setup.pipeline_parallel > 1 ? fmt::format(" x {} stages", d.setup.pipeline_parallel) : "", d.gpu.id);
  return limits;
}

std::pair<int, int> parse_disaggregation(const std::string& text) {
  // Digits only on each side of one colon, each count 1 to kMaxReplicas and both within it.
  auto count = [](std::string_view digits) {
    int n = 0;
    const bool digits_only = !digits.empty() && digits.size() <= 5 &&
                             std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits_only) std::from_chars(digits.data(), digits.data() + digits.size(), n);
    return n;
  };
  const size_t colon = text.find(':');
  const int prefill = colon == std::string::npos ? 0 : count(std::string_view(text).substr(0, colon));
  const int decode = colon == std::string::npos ? 0 : count(std::string_view(text).substr(colon + 1));
  if (prefill < 1 || decode < 1 || prefill + decode > kMaxReplicas)
    fail(
        "--disaggregate: expected P:D, prefill and decode replica counts of at least 1 and {} in all (e.g. 1:2), got "
        "'{}'",
        kMaxReplicas, text);
  return {prefill, decode};
}

DecodePool make_decode_pool(const Deployment& d, const Gpu& gpu, const Request& setup, int replicas,
                            const EnergyScope& scope, double link_gbps) {
  if (link_gbps != 0 && !(link_gbps >= kMinLinkGbps && link_gbps <= kMaxLinkGbps))
    fail("--kv-link-gbps must be {} to {} Gb/s per GPU (0: the node catalog's link), got {}", kMinLinkGbps,
         kMaxLinkGbps, link_gbps);
  DecodePool pool{gpu, setup, replicas, scope, {}};
  pool.link = link_gbps > 0 ? FabricLink{"given", link_gbps * 1e9 / 8, kNetworkSendLatencyS, true}
                            : link_between_pools(d, replicas, gpu, setup.gpus);
  return pool;
}

Deployment decode_deployment(const Deployment& d) {
  Deployment out = d;
  out.gpu = d.decode->gpu, out.setup = d.decode->setup, out.replicas = d.decode->replicas;
  out.scope = d.decode->scope;
  out.decode.reset();
  return out;
}

FabricLink link_between_pools(const Deployment& d, int decode_replicas, const Gpu& decode_gpu, int decode_gpus) {
  const int total = d.replicas * d.setup.total_gpus() + decode_replicas * decode_gpus;
  const std::optional<FabricLink> link =
      d.gpu.id == decode_gpu.id ? fabric_joining(d.gpu, total) : network_between(d.gpu, decode_gpu);
  if (!link)
    fail(
        "--disaggregate: the prefill pool ({}) and the decode pool ({}) span nodes, and {} names no network between "
        "nodes (scale_out in data/nodes); give the link with --kv-link-gbps",
        d.gpu.id, decode_gpu.id,
        node_name_for(d.gpu) == node_name_for(decode_gpu)
            ? node_name_for(d.gpu)
            : fmt::format("{} or {}", node_name_for(d.gpu), node_name_for(decode_gpu)));
  return *link;
}

double kv_transfer_bytes(const ModelSpec& model, const Request& setup, long positions) {
  Request r = setup;
  r.batch = 1, r.prompt_tokens = positions, r.gen_tokens = 0;
  return kv_bytes_per_sequence_per_gpu(model, r) * setup.gpus;
}

double kv_transfer_s(double bytes, const FabricLink& link, int from_gpus, int to_gpus) {
  return link.latency_s + bytes / (link.bytes_per_s_per_gpu * std::min(from_gpus, to_gpus));
}

void check_deployment(const Deployment& d) {
  const long replicas = static_cast<long>(d.replicas) + (d.decode ? d.decode->replicas : 0);
  if (d.decode && (d.replicas < 1 || d.decode->replicas < 1 || replicas > kMaxReplicas))
    fail("--disaggregate P:D must be 1 to {} replicas in all (one replay scans every replica at each event), got {}:{}",
         kMaxReplicas, d.replicas, d.decode->replicas);
  if (d.replicas < 1 || d.replicas > kMaxReplicas)
    fail("--replicas must be 1 to {} (one replay scans every replica at each event), got {}", kMaxReplicas, d.replicas);
  if (!d.decode) return;
  if (d.speculation.active()) fail("--disaggregate with --spec: not modelled (the decode pool's drafts)");
  if (d.setup.pipeline_parallel > 1 || d.decode->setup.pipeline_parallel > 1)
    fail("--disaggregate with --pp: not modelled (pipeline stages in a pool)");
}

namespace {

// A pool of replicas of one kind (co-located, prefill or decode): its deployment, limits and step costs, and the
// replicas it owns in the replay's list ([first, first + count)).
struct Pool {
  Pool(const Deployment& deployment, const SimParams& params)
      : d(deployment),
        limits(scheduler_limits(d)),
        costs(d.model, d.gpu, d.setup, params, d.sampling, d.power,
              d.speculation.draft ? &*d.speculation.draft : nullptr) {}
  Deployment d;
  SchedulerLimits limits;
  StepCostModel costs;
  int first = 0, count = 0;
  size_t routed = 0;  // round robin
};

struct Replica {
  Replica(SchedulerLimits limits, int pool_index) : scheduler(limits), pool(pool_index) {}
  ReplicaScheduler scheduler;
  int pool = 0;
  double link_free_s = 0;           // disaggregated: when its link to the other pool is free (either end)
  std::vector<ScheduledWork> work;  // the iteration in flight
  double step_end_s = 0;
  double step_energy_j = 0;
  double step_idle_j = 0;     // idle energy before the iteration, given to its requests (attribute_idle)
  double pending_idle_j = 0;  // idle energy since the last iteration, not yet given to any request
  bool busy = false;
  double idle_since_s = 0;
};

// Whether the work ends its request's cached positions (the step's logits give the request its next token), and
// whether it is a decode (one position past the prompt).
bool samples(const ScheduledWork& w) {
  return w.accepted > 0 || w.request->computed + w.positions == w.request->prompt_tokens + w.request->generated;
}
// With speculation every decode is a verification (accepted > 0): a one-position recomputation after a preemption is
// a prefill chunk then, not a decode.
bool decodes(const ScheduledWork& w, bool speculative) {
  if (speculative) return w.accepted > 0;
  return w.positions == 1 && w.request->computed >= w.request->prompt_tokens;
}
// Output tokens the work yields: a verification's accepted ones, else one when it samples.
long sampled_tokens(const ScheduledWork& w) { return w.accepted > 0 ? w.accepted : samples(w) ? 1 : 0; }

// The iteration's shape for the physics: decodes with their mean context, prompt chunks with their cached prefix. A
// beam-search request decodes every beam (each reads its own context: the shared prompt blocks and its own tokens)
// and samples over every beam's logits; its prompt was prefilled once and gave its first token from one set.
// With speculation (`spec` active) every decode verifies the draft's tokens: k + 1 positions and their logits each,
// after the draft's passes.
MixedStep step_shape(const std::vector<ScheduledWork>& work, const Speculation& spec) {
  MixedStep s;
  double context_sum = 0, prefix_sum = 0;
  for (const ScheduledWork& w : work) {
    const ServedRequest& r = *w.request;
    if (w.accepted > 0) s.logits += w.tokens;
    else if (samples(w)) s.logits += r.generated > 0 ? r.beams : 1;
    if (decodes(w, spec.active())) {
      s.decodes += r.beams;
      context_sum += static_cast<double>(r.beams) * static_cast<double>(r.computed + 1);
    } else {
      s.prefill_tokens += w.tokens;
      ++s.prefill_chunks;
      prefix_sum += static_cast<double>(r.computed);
    }
  }
  if (s.decodes > 0) s.decode_context = context_sum / static_cast<double>(s.decodes);
  if (s.prefill_chunks > 0) s.prefill_context = prefix_sum / static_cast<double>(s.prefill_chunks);
  if (spec.active()) s.decode_positions = spec.verify_positions(), s.draft_passes = spec.draft_passes();
  return s;
}

class Replay {
 public:
  Replay(const RequestSource& source, const Deployment& d, const SimParams& params, const ReplayOptions& o,
         const RequestSink& on_request)
      : source_(source), d_(d), options_(o), on_request_(on_request) {
    check_deployment(d);
    if (d.decode && !(d.decode->link.bytes_per_s_per_gpu > 0))
      fail("--disaggregate: the link between the pools has no bandwidth");
    check_replay_options(o);
    add_pool(d, params);
    if (d.decode)
      add_pool(decode_deployment(d), params), totals_.decode_gpus_total = d.decode->replicas * d.decode->setup.gpus;
    pull();
  }

  ReplayTotals run() {
    Progress progress("serve-sim", options_.expected_requests, options_.progress && options_.expected_requests > 0);
    while (true) {
      const double arrival = next_send_s();
      const int replica = earliest_busy();
      const double step_end = replica >= 0 ? replicas_[replica].step_end_s : kNever;
      const double kv_arrival = transfers_.empty() ? kNever : transfers_.top().at_s;
      if (arrival == kNever && step_end == kNever && kv_arrival == kNever) break;
      if (kv_arrival <= arrival && kv_arrival <= step_end) {
        now_s_ = kv_arrival;
        deliver(kv_arrival);
        start_idle_replicas(kv_arrival);
      } else if (arrival <= step_end) {
        now_s_ = arrival;
        // Requests arriving at the same instant reach an idle replica together: they start one iteration.
        while (next_ && next_send_s() == arrival) {
          next_->arrival_s = arrival;  // a closed loop's client sends it now: its latencies count from here
          arrive(*next_);
          pull();
        }
        start_idle_replicas(arrival);
      } else {
        now_s_ = step_end;
        finish_step(replica);
        if (disaggregated()) start_idle_replicas(step_end);  // a decode replica the step handed requests to
      }
      progress.update(totals_.completed + totals_.rejected);
    }
    progress.finish();
    if (!transfers_.empty() || in_flight_ != 0)  // every request sent has finished, or the replay lost some
      fail("internal error: the replay ended with {} requests unfinished", in_flight_);
    close_window();
    for (const Pool& pool : pools_) totals_.distinct_shapes += pool.costs.distinct_shapes();
    totals_.peak_in_flight = static_cast<long>(slab_.size());
    return totals_;
  }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  // A pool's replicas at the end of the list. A replica with pipeline stages runs one scheduler per stage, each
  // micro-batch's steps on its share of the GPUs (StepCostModel prices a step with the pipeline full): the timeline
  // shows each as a replica of `gpus` GPUs.
  void add_pool(const Deployment& d, const SimParams& params) {
    Pool& pool = pools_.emplace_back(d, params);
    pool.first = static_cast<int>(replicas_.size());
    pool.count = d.replicas * d.setup.pipeline_parallel;
    for (int i = 0; i < pool.count; ++i) replicas_.emplace_back(pool.limits, static_cast<int>(pools_.size()) - 1);
    totals_.gpus_total += d.replicas * d.setup.total_gpus();
  }
  Pool& pool_of(int replica) { return pools_[replicas_[replica].pool]; }
  bool disaggregated() const { return pools_.size() > 1; }

  // The next arrival from the source into a request slot (recycled from finished requests): memory follows the
  // requests in flight, not the log's length. Arrivals must not go back in time.
  void pull() {
    next_ = nullptr;
    const std::optional<LoggedRequest> l = source_();
    if (!l) return;
    if (l->time_s && !origin_s_) origin_s_ = *l->time_s;  // the first arrival is time 0
    const double arrival_s = l->time_s ? (*l->time_s - *origin_s_) / options_.rate_scale : 0.0;
    if (arrival_s < last_arrival_s_)
      fail(
          "{}{}: TIMESTAMP goes back in time; serve-sim reads the log as a stream and needs it sorted by TIMESTAMP "
          "(e.g. sort -t, -k1,1)",
          options_.source_name.empty() ? "line " : options_.source_name + ":", l->line);
    if (options_.duration_s > 0 && arrival_s >= options_.duration_s) return;  // the rest lies beyond the window
    if (!options_.keep_time_outliers && arrival_s - last_arrival_s_ > kMaxTimeGap_s / options_.rate_scale)
      fail(
          "{}{}: TIMESTAMP lies {:.0f} days after the previous request (more than {:.0f}): a pause that long is an "
          "outlier of the log, not serving, and its idle time would dominate the totals; remove it or pass "
          "--keep-time-outliers",
          options_.source_name.empty() ? "line " : options_.source_name + ":", l->line,
          (arrival_s - last_arrival_s_) * options_.rate_scale / 86400, kMaxTimeGap_s / 86400);
    last_arrival_s_ = arrival_s;
    ServedRequest* r = nullptr;
    if (free_.empty()) {
      r = &slab_.emplace_back();
    } else {
      r = free_.back();
      free_.pop_back();
      *r = ServedRequest{};
    }
    r->id = l->line;
    r->arrival_s = arrival_s;
    r->prompt_tokens = std::max(1L, l->prompt_tokens);
    r->gen_tokens = std::max(1L, l->gen_tokens);
    r->beams = std::max(1, l->beams);
    if (r->beams > 1 && d_.speculation.active())
      fail("{}{}: beam search ({} beams) with speculative decoding: engines run one or the other",
           options_.source_name.empty() ? "line " : options_.source_name + ":", l->line, r->beams);
    share_prefix(*l, *r);
    next_ = r;
  }

  void release(ServedRequest& r) { free_.push_back(&r); }

  // A conversation's blocks are its turns so far: each turn re-sends them, so all its positions may be reused by the
  // next turn, up to the tokens the log says it shares. A prompt every request shares (prefix_share) is reusable only
  // as far as it goes.
  static constexpr uint64_t kSharedPromptId = 0x5eed5eed5eed5eedull;
  void share_prefix(const LoggedRequest& l, ServedRequest& r) const {
    r.forced_cached_tokens = std::min(l.cached_tokens, r.prompt_tokens);
    if (l.session != 0) {
      r.prefix_id = l.session;
      r.shared_tokens = std::min(l.shared_tokens, r.prompt_tokens);
      r.cacheable_tokens = r.prompt_tokens + r.gen_tokens;
    } else if (options_.prefix_share > 0) {
      r.prefix_id = kSharedPromptId;
      r.shared_tokens = static_cast<long>(std::floor(options_.prefix_share * static_cast<double>(r.prompt_tokens)));
      r.cacheable_tokens = r.shared_tokens;
    }
  }

  // When the next request is sent: at its arrival, or in a closed loop whose clients are all waiting, never until one
  // of their requests ends (then at once, if its time has come).
  double next_send_s() const {
    if (!next_) return kNever;
    if (options_.concurrency > 0 && in_flight_ >= options_.concurrency) return kNever;
    return std::max(next_->arrival_s, now_s_);
  }

  int earliest_busy() const {
    int best = -1;
    for (int i = 0; i < static_cast<int>(replicas_.size()); ++i)
      if (replicas_[i].busy && (best < 0 || replicas_[i].step_end_s < replicas_[best].step_end_s)) best = i;
    return best;
  }

  // A replica of the pool (0: co-located or prefill; 1: decode) for the request.
  int route(const ServedRequest& r, int pool_index) {
    Pool& pool = pools_[pool_index];
    if (d_.router == Router::round_robin) return pool.first + static_cast<int>(pool.routed++ % pool.count);
    if (d_.router == Router::session && r.prefix_id != 0 && pool_index == 0) {
      if (const auto it = session_replica_.find(r.prefix_id); it != session_replica_.end()) return it->second;
      if (session_replica_.size() >= kMaxRoutedSessions) session_replica_.clear();  // bounded: old ones re-route
      return session_replica_[r.prefix_id] = least_loaded(pool);
    }
    return least_loaded(pool);
  }
  int least_loaded(const Pool& pool) const {
    int best = pool.first;
    for (int i = pool.first + 1; i < pool.first + pool.count; ++i)
      if (replicas_[i].scheduler.unfinished() < replicas_[best].scheduler.unfinished()) best = i;
    return best;
  }

  // Whether a replica of the pool can ever hold the request: its whole length and the draft positions its last
  // verification holds slots for (a prefill replica: its prompt).
  bool fits(const ServedRequest& r, const Pool& pool, bool prefill_only) const {
    const long positions = prefill_only ? r.prompt_tokens : r.prompt_tokens + r.gen_tokens + pool.limits.draft_tokens;
    return r.blocks_for(positions, pool.limits.block_size) <= pool.limits.kv_blocks;
  }

  void arrive(ServedRequest& r) {
    r.hands_off = disaggregated() && r.gen_tokens > 1;
    const bool prefill_fits = fits(r, pools_[0], r.hands_off);
    if (!prefill_fits || (r.hands_off && !fits(r, pools_[1], false))) {  // vLLM refuses a request longer than the
      ++totals_.rejected;                                                // whole cache at admission
      totals_.rejected_by_decode += prefill_fits ? 1 : 0;
      on_request_(r);
      release(r);
      return;
    }
    r.replica = route(r, 0);
    replicas_[r.replica].scheduler.enqueue(&r);
    ++in_flight_;
  }

  // Disaggregated: a prefilled request goes to a decode replica's queue, its prompt's KV cache but the last position
  // to be read there (the decode replica recomputes that one for its logits; the token the prefill sampled is not
  // sent: vLLM's scheduler, _update_waiting_for_remote_kv); its prefill replica keeps its blocks until then.
  void hand_off(ServedRequest& r, int from, double now) {
    r.hands_off = false, r.remote_kv = true;
    r.received_tokens = r.prompt_tokens - 1, r.prefill_replica = from, r.handoff_s = now;
    r.computed = 0, r.generated = 0;
    r.prefix_id = 0, r.forced_cached_tokens = 0;  // its prefix is the prefill pool's to cache
    r.replica = route(r, 1);
    replicas_[r.replica].scheduler.enqueue(&r);
  }

  // A decode replica has reserved the blocks of `r`'s KV cache: the read starts once both ends' links are free (each
  // replica moves one cache at a time, its GPUs' shares in parallel) and takes the bytes over the link plus a send's
  // latency.
  void start_transfer(ServedRequest& r, double now) {
    const DecodePool& pool = *d_.decode;
    const double bytes = kv_transfer_bytes(d_.model, d_.setup, r.prompt_tokens);  // the prompt's blocks, read whole
    Replica &src = replicas_[r.prefill_replica], &dst = replicas_[r.replica];
    const double start_s = std::max({now, src.link_free_s, dst.link_free_s});
    const double time_s = kv_transfer_s(bytes, pool.link, d_.setup.gpus, pool.setup.gpus);
    // The next transfer over either end may start as this one's bytes end.
    src.link_free_s = dst.link_free_s = start_s + time_s - pool.link.latency_s;
    const double at_s = start_s + time_s;
    ++totals_.kv_transfers;
    totals_.kv_transfer_bytes += bytes;
    totals_.kv_transfer_wait_s += at_s - r.handoff_s;
    transfers_.push({at_s, totals_.kv_transfers, &r});
  }

  // KV caches read by `now`: their prefill replicas free the blocks, and each request runs on its decode replica.
  void deliver(double now) {
    while (!transfers_.empty() && transfers_.top().at_s <= now) {
      ServedRequest& r = *transfers_.top().request;
      transfers_.pop();
      replicas_[r.prefill_replica].scheduler.sent(r);
      replicas_[r.replica].scheduler.loaded(r);
    }
  }

  void start_idle_replicas(double now) {
    for (int i = 0; i < static_cast<int>(replicas_.size()); ++i)
      if (!replicas_[i].busy && !replicas_[i].scheduler.idle()) {
        add_idle(i, now);
        start_step(i, now);
      }
  }

  void add_idle(int index, double now) {
    Replica& rep = replicas_[index];
    const double gap_s = std::max(0.0, now - rep.idle_since_s);
    const Deployment& d = pool_of(index).d;
    const double energy_j = d.scope.metered_w(d.gpu.idle_w, false) * d.setup.gpus * gap_s;
    totals_.idle_energy_j += energy_j;
    if (options_.attribute_idle) replicas_[index].pending_idle_j += energy_j;
    if (options_.on_step && gap_s > 0) {
      StepRecord idle;
      idle.replica = index, idle.start_s = rep.idle_since_s, idle.time_s = gap_s, idle.energy_j = energy_j;
      idle.idle = true;
      options_.on_step(idle);
    }
  }

  void start_step(int index, double now) {
    Replica& rep = replicas_[index];
    rep.work = rep.scheduler.schedule();
    for (ServedRequest* r : rep.scheduler.take_loads()) start_transfer(*r, now);
    if (rep.work.empty()) {
      rep.busy = false;
      rep.idle_since_s = now;
      return;
    }
    for (const ScheduledWork& w : rep.work)
      if (w.request->scheduled_s < 0) w.request->scheduled_s = now;
    Pool& pool = pool_of(index);
    const Deployment& d = pool.d;
    const MixedStep shape = step_shape(rep.work, d.speculation);
    const StepCost c = pool.costs.cost(shape);
    rep.busy = true;
    rep.step_end_s = now + c.time_s;
    rep.step_energy_j = d.scope.metered_w(c.power_w, true) * d.setup.gpus * c.time_s;
    rep.step_idle_j = std::exchange(rep.pending_idle_j, 0.0);
    totals_.attributed_idle_j += rep.step_idle_j;
    ++totals_.steps;
    totals_.busy_energy_j += rep.step_energy_j;
    totals_.busy_gpu_s += c.time_s * d.setup.gpus;
    totals_.running_gpu_s += c.time_s * d.setup.gpus * static_cast<double>(rep.scheduler.running());
    const double kv_share =
        static_cast<double>(rep.scheduler.used_blocks()) / static_cast<double>(pool.limits.kv_blocks);
    totals_.peak_running = std::max(totals_.peak_running, rep.scheduler.running());
    totals_.peak_waiting = std::max(totals_.peak_waiting, rep.scheduler.waiting());
    totals_.peak_kv_share = std::max(totals_.peak_kv_share, kv_share);
    if (options_.on_step) options_.on_step(step_record(index, now, c.time_s, shape, kv_share));
  }

  StepRecord step_record(int index, double now, double time_s, const MixedStep& shape, double kv_share) const {
    const Replica& rep = replicas_[index];
    StepRecord s;
    s.replica = index, s.start_s = now, s.time_s = time_s, s.energy_j = rep.step_energy_j;
    s.prefill_tokens = shape.prefill_tokens;
    // Output tokens and inter-token gaps are per request: a beam-search request yields one token per step whatever
    // its beams (past its prompt, a request has its first token: each decode ends an inter-token gap).
    for (const ScheduledWork& w : rep.work)
      s.sampled += sampled_tokens(w), s.decodes += decodes(w, d_.speculation.active()) ? 1 : 0;
    s.running = rep.scheduler.running(), s.waiting = rep.scheduler.waiting();
    s.kv_share = kv_share;
    return s;
  }

  // The iteration's energy goes to its requests by the tokens each ran in it (every token is one row of every GEMM).
  void finish_step(int index) {
    Replica& rep = replicas_[index];
    const double now = rep.step_end_s;
    long tokens = 0;
    for (const ScheduledWork& w : rep.work) tokens += w.tokens;
    const double energy_j = rep.step_energy_j + rep.step_idle_j;
    for (const ScheduledWork& w : rep.work)
      w.request->energy_j += energy_j * static_cast<double>(w.tokens) / static_cast<double>(tokens);
    const std::vector<ServedRequest*> finished = rep.scheduler.complete(rep.work);
    for (const ScheduledWork& w : rep.work)
      if (w.request->generated >= 1 && w.request->first_token_s < 0 && !w.request->hands_off)
        w.request->first_token_s = now;
    for (ServedRequest* r : finished) {
      if (r->hands_off) {
        hand_off(*r, index, now);
        continue;
      }
      r->finish_s = now;
      ++totals_.completed;
      --in_flight_;
      end_ = std::max(end_, now);
      on_request_(*r);
      release(*r);
    }
    start_step(index, now);
  }

  void close_window() {
    totals_.window_s = std::max(end_, options_.duration_s);
    for (int i = 0; i < static_cast<int>(replicas_.size()); ++i) {
      add_idle(i, totals_.window_s);
      totals_.preemptions += replicas_[i].scheduler.preemptions();
      totals_.prefix_queried_tokens += replicas_[i].scheduler.queried_tokens();
      totals_.prefix_hit_tokens += replicas_[i].scheduler.hit_tokens();
    }
  }

  const RequestSource& source_;
  const Deployment& d_;
  ReplayOptions options_;
  const RequestSink& on_request_;
  std::deque<Pool> pools_;            // co-located; or prefill, then decode (addresses stay put)
  std::deque<ServedRequest> slab_;    // every request slot ever used (addresses stay put)
  std::vector<ServedRequest*> free_;  // slots of finished requests, for the next arrivals
  ServedRequest* next_ = nullptr;     // the next arrival, read ahead
  std::optional<double> origin_s_;
  double last_arrival_s_ = 0;
  std::vector<Replica> replicas_;
  ReplayTotals totals_;
  // KV caches on their way to the decode pool, by arrival time (earliest first).
  struct Transfer {
    double at_s = 0;
    long order = 0;  // ties in sending order
    ServedRequest* request = nullptr;
    bool operator>(const Transfer& o) const { return at_s != o.at_s ? at_s > o.at_s : order > o.order; }
  };
  std::priority_queue<Transfer, std::vector<Transfer>, std::greater<>> transfers_;
  // The session router's memory of where each conversation went (at most kMaxRoutedSessions; then forgotten at once).
  static constexpr size_t kMaxRoutedSessions = 1 << 20;
  std::unordered_map<uint64_t, int> session_replica_;
  double end_ = 0;
  double now_s_ = 0;    // the time of the event being handled
  long in_flight_ = 0;  // requests sent and not finished (a closed loop holds it at most at its concurrency)
};

}  // namespace

ReplayTotals replay(const RequestSource& source, const Deployment& deployment, const SimParams& params,
                    const ReplayOptions& options, const RequestSink& on_request) {
  return Replay(source, deployment, params, options, on_request).run();
}

ReplayTotals replay(const RequestLog& log, const Deployment& deployment, const SimParams& params, ReplayOptions options,
                    const RequestSink& on_request) {
  std::vector<const LoggedRequest*> order;  // by arrival (an in-memory log need not be sorted)
  order.reserve(log.requests.size());
  for (const LoggedRequest& l : log.requests) order.push_back(&l);
  std::stable_sort(order.begin(), order.end(), [](const LoggedRequest* a, const LoggedRequest* b) {
    return a->time_s.value_or(0.0) < b->time_s.value_or(0.0);
  });
  size_t next = 0;
  const RequestSource source = [&]() -> std::optional<LoggedRequest> {
    if (next == order.size()) return std::nullopt;
    return *order[next++];
  };
  if (options.expected_requests == 0) options.expected_requests = static_cast<long>(log.requests.size());
  return replay(source, deployment, params, options, on_request);
}

}  // namespace llmco2::serving
