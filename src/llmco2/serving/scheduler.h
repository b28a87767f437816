// serving/scheduler.h - one replica's iteration-level scheduler as vLLM v1 runs it: continuous batching under a token
// budget and a sequence cap, chunked prefill riding along with decodes, a paged KV cache of fixed-size blocks,
// preemption by recomputation when the cache runs out (vllm/v1/core/sched/scheduler.py, Scheduler.schedule), and
// automatic prefix caching: full blocks stay cached after their request ends, evicted least recently freed first, and
// a request whose leading blocks are cached skips their prefill (vllm/v1/core/kv_cache_manager.py).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <list>
#include <unordered_map>
#include <utility>
#include <vector>

#include "serving/module.h"

namespace llmco2::serving {

// One request's progress through a replica.
struct ServedRequest {
  long id = 0;           // line of the log
  double arrival_s = 0;  // virtual time it reaches the router
  long prompt_tokens = 0;
  long gen_tokens = 1;  // tokens to generate (the first comes with the end of the prefill)
  int beams = 1;        // sequences decoded (beam search): the prompt is prefilled once and its KV shared
  int replica = -1;
  long computed = 0;   // positions in its KV cache (prompt, then generated positions, each held by every beam)
  long generated = 0;  // tokens sampled so far
  long blocks = 0;     // KV blocks it holds
  int preemptions = 0;
  double scheduled_s = -1;  // first scheduled (end of its queue wait)
  double first_token_s = -1;
  double finish_s = -1;
  double energy_j = 0;  // its share of the steps it took part in (all GPUs of its replica)
  // Prefix caching. Blocks belong to a prefix (a conversation, or a prompt all requests share): block i of prefix P
  // holds the same tokens in every request of P, so a cached one can stand in for computing it.
  uint64_t prefix_id = 0;            // 0: none (nothing of it is shared or kept)
  long shared_tokens = 0;            // leading prompt tokens equal to what earlier requests of the prefix held
  long cacheable_tokens = 0;         // leading positions later requests of the prefix may reuse
  long forced_cached_tokens = 0;     // prompt tokens the log says were cached (an API's cached_tokens): skipped
  long cached_tokens = 0;            // prompt tokens it found cached, over its admissions
  std::vector<uint64_t> cache_keys;  // the cached blocks it holds: its leading blocks, in order
  bool registering = true;           // its next full block may still enter the cache
  double spec_credit = 0;            // speculation: accepted tokens owed to it beyond whole ones (0 <= credit < 1)
  // Disaggregated prefill and decode: on its prefill replica it is done once its prompt is computed (the token
  // sampled then is not sent: the decode instance streams the response); on its decode replica (`remote_kv`) it waits
  // for blocks for the positions its KV cache brings (`received_tokens`), holds them while the cache is read, and
  // then runs with those positions computed (a later preemption drops them: recomputed there).
  bool hands_off = false;
  bool remote_kv = false;
  long received_tokens = 0;
  int prefill_replica = -1;  // the replica that prefilled it and holds its blocks until they are read
  double handoff_s = -1;     // when its prefill ended

  long tokens_to_compute() const { return prompt_tokens + generated - computed; }  // positions
  // Token rows the GEMMs run to advance `positions` positions from `computed`: one per prompt position, one per beam
  // past the prompt (a 4-beam decode step runs 4 rows).
  long rows(long positions) const {
    const long in_prompt = std::clamp(prompt_tokens - computed, 0L, positions);
    return in_prompt + (positions - in_prompt) * beams;
  }
  // The positions that fit `budget` rows (the most that rows() keeps within it).
  long positions_within(long budget) const {
    const long to_compute = tokens_to_compute();
    const long in_prompt = std::clamp(prompt_tokens - computed, 0L, to_compute);
    if (budget <= in_prompt) return budget;
    return in_prompt + std::min(to_compute - in_prompt, (budget - in_prompt) / beams);
  }
  // KV blocks of `positions` cached positions: the prompt's blocks once, shared by the beams, and each beam's own
  // blocks for its generated tokens (TensorRT-LLM's KV cache manager shares the context blocks across beams).
  long blocks_for(long positions, long block_size) const {
    if (beams == 1) return (positions + block_size - 1) / block_size;
    const long prompt = std::min(positions, prompt_tokens), own = positions - prompt;
    return (prompt + block_size - 1) / block_size + beams * ((own + block_size - 1) / block_size);
  }
  bool done() const { return generated >= (hands_off ? 1 : gen_tokens); }
  // Latencies of a finished request: time to first token, and time per output token after the first (0 for one).
  double ttft_s() const { return first_token_s - arrival_s; }
  double tpot_s() const {
    return gen_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(gen_tokens - 1) : 0.0;
  }
};

struct SchedulerLimits {
  long max_num_seqs = 256;         // running requests at most
  long max_batched_tokens = 2048;  // tokens per iteration at most (chunked prefill splits longer prompts)
  long block_size = 16;            // tokens per KV block
  long kv_blocks = 0;              // blocks the cache holds on this replica
  bool prefix_caching = true;      // vLLM v1's default (--no-enable-prefix-caching turns it off)
  // Speculative decoding: a decoding request verifies draft_tokens + 1 positions per iteration (their KV slots
  // allocated ahead, as vLLM's lookahead slots) and keeps tokens_per_step of them on average. 0: off.
  int draft_tokens = 0;
  double tokens_per_step = 1;
};

// A request and the tokens it runs in one iteration.
struct ScheduledWork {
  ServedRequest* request = nullptr;
  long tokens = 0;     // token rows of the GEMMs (positions x beams past the prompt; draft tokens + 1 when verifying)
  long positions = 0;  // KV positions it advances
  long accepted = 0;   // a speculative decode: the tokens its verification yields (= positions); 0 otherwise
};

class ReplicaScheduler {
 public:
  explicit ReplicaScheduler(SchedulerLimits limits);
  void enqueue(ServedRequest* request);  // arrival: the back of the waiting queue
  // The next iteration: running requests first (a decode token each, or their next prompt chunk), preempting the
  // newest running request while the cache cannot hold the tokens; then waiting requests in arrival order while the
  // budget, the sequence cap and the cache allow (none when this iteration preempted). Empty when there is no work.
  std::vector<ScheduledWork> schedule();
  // After the iteration: tokens enter the cache, requests that caught up sample a token; returns the finished ones
  // (out of the running set, their blocks freed unless they hand off: see sent()).
  std::vector<ServedRequest*> complete(const std::vector<ScheduledWork>& work);
  // Disaggregated prefill: a finished request that hands off keeps its blocks (set aside from the request, which
  // moves on) until its KV cache has been read by the decode replica (vLLM's NixlConnector delays the free until
  // then); this frees them.
  void sent(const ServedRequest& request);
  // Disaggregated decode: the requests whose blocks this replica reserved in the last schedule() for a KV cache to
  // read (vLLM's WAITING_FOR_REMOTE_KVS), and the end of a read: the request joins the running set with the
  // received positions computed.
  std::vector<ServedRequest*> take_loads() { return std::exchange(loads_, {}); }
  void loaded(ServedRequest& request);

  bool idle() const { return running_.empty() && waiting_.empty(); }
  long running() const { return static_cast<long>(running_.size()); }
  long waiting() const { return static_cast<long>(waiting_.size()); }
  long free_blocks() const { return free_uncached_ + static_cast<long>(lru_.size()); }
  long used_blocks() const { return limits_.kv_blocks - free_blocks(); }
  long preemptions() const { return preemptions_; }
  // Prompt (and recomputed) tokens admitted requests asked for, and those found cached (prefill skipped).
  long queried_tokens() const { return queried_tokens_; }
  long hit_tokens() const { return hit_tokens_; }
  long cached_blocks() const { return static_cast<long>(cache_.size()); }
  long unfinished() const {  // routed here and not finished
    return running() + waiting() + static_cast<long>(loading_.size());
  }
  const SchedulerLimits& limits() const { return limits_; }

 private:
  bool allocate(ServedRequest& request, long positions);
  void take_blocks(long n);              // n free blocks: uncached ones first, then the least recently freed cached
  void release(ServedRequest& request);  // its blocks back: cached ones evictable, the others free
  // Blocks back to the free list: the cached ones evictable (the last first), `uncached` others free at once.
  void give_back(const std::vector<uint64_t>& cache_keys, long uncached);
  void preempt(ServedRequest& request);
  long cached_prefix_blocks(const ServedRequest& request) const;  // its leading blocks found in the cache
  bool admit(ServedRequest& request, long budget);                // from waiting, with its cached prefix
  bool reserve_remote(ServedRequest& request);                    // blocks for its received KV cache
  bool speculates(const ServedRequest& request) const;            // decoding one token a step, with a draft
  long accepted_tokens(ServedRequest& request) const;             // this verification's, from its credit
  void register_blocks(ServedRequest& request);                   // its newly full blocks into the cache
  uint64_t block_key(uint64_t prefix_id, long block) const;

  struct CachedBlock {
    long refs = 0;                         // requests holding it; 0: evictable, in lru_
    std::list<uint64_t>::iterator in_lru;  // valid when refs == 0
  };
  SchedulerLimits limits_;
  long free_uncached_ = 0;  // free blocks holding nothing reusable; free blocks = these + lru_
  std::unordered_map<uint64_t, CachedBlock> cache_;
  std::list<uint64_t> lru_;  // cached blocks no request holds, least recently freed first
  long queried_tokens_ = 0, hit_tokens_ = 0;
  long preemptions_ = 0;
  std::deque<ServedRequest*> waiting_;
  std::vector<ServedRequest*> running_;
  std::vector<ServedRequest*> loading_, loads_;  // disaggregated decode: reading a KV cache; reserved in this schedule
  struct Held {                                  // disaggregated prefill: a handed-off request's blocks until sent
    std::vector<uint64_t> cache_keys;
    long uncached = 0;
  };
  std::unordered_map<const ServedRequest*, Held> held_;
};

}  // namespace llmco2::serving
