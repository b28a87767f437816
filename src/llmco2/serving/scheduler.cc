// serving/scheduler.cc - vLLM v1's schedule loop over a paged KV cache with automatic prefix caching, in virtual time.
#include "serving/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace llmco2::serving {

ReplicaScheduler::ReplicaScheduler(SchedulerLimits limits) : limits_(limits), free_uncached_(limits.kv_blocks) {
  if (limits_.max_num_seqs < 1 || limits_.max_batched_tokens < 1 || limits_.block_size < 1 || limits_.kv_blocks < 1)
    fail("scheduler limits must be positive (max_num_seqs {}, max_batched_tokens {}, block_size {}, kv_blocks {})",
         limits_.max_num_seqs, limits_.max_batched_tokens, limits_.block_size, limits_.kv_blocks);
}

void ReplicaScheduler::enqueue(ServedRequest* request) { waiting_.push_back(request); }

// Block `block` of a prefix: one 64-bit name per (prefix, position) (splitmix64 of both; collisions of 2^-64 ignored).
uint64_t ReplicaScheduler::block_key(uint64_t prefix_id, long block) const {
  uint64_t z = prefix_id + 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(block) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void ReplicaScheduler::take_blocks(long n) {
  if (n <= free_uncached_) {
    free_uncached_ -= n;
    return;
  }
  const long uncached = free_uncached_;
  free_uncached_ = 0;
  for (long k = uncached; k < n; ++k) {  // evict the least recently freed cached blocks
    cache_.erase(lru_.front());
    lru_.pop_front();
  }
}

bool ReplicaScheduler::allocate(ServedRequest& r, long positions) {
  const long needed = r.blocks_for(r.computed + positions, limits_.block_size);
  const long extra = needed - r.blocks;
  if (extra > free_blocks()) return false;
  if (extra > 0) take_blocks(extra), r.blocks = needed;
  return true;
}

// Its cached blocks become evictable, its last block first (freed in reverse, as vLLM does, so that a prefix's tail
// goes before its head); the rest are free at once.
void ReplicaScheduler::give_back(const std::vector<uint64_t>& cache_keys, long uncached) {
  for (auto key = cache_keys.rbegin(); key != cache_keys.rend(); ++key) {
    CachedBlock& b = cache_.at(*key);
    if (--b.refs == 0) b.in_lru = lru_.insert(lru_.end(), *key);
  }
  free_uncached_ += uncached;
}

void ReplicaScheduler::release(ServedRequest& r) {
  give_back(r.cache_keys, r.blocks - static_cast<long>(r.cache_keys.size()));
  r.cache_keys.clear();
  r.registering = true;
  r.blocks = 0;
}

// Recomputation: the cache of the request is dropped; it rejoins the front of the queue with its prompt and the tokens
// it generated so far, all to be prefilled again (less what is still cached when it comes back).
void ReplicaScheduler::preempt(ServedRequest& r) {
  release(r);
  r.computed = 0;
  r.received_tokens = 0, r.remote_kv = false;  // a received KV cache is gone with its blocks
  ++r.preemptions;
  ++preemptions_;
  waiting_.push_front(&r);
}

// The leading blocks of a waiting request that the cache holds, within its shared prompt and short of its last prompt
// token (whose logits must be computed).
long ReplicaScheduler::cached_prefix_blocks(const ServedRequest& r) const {
  if (!limits_.prefix_caching || r.prefix_id == 0 || r.beams != 1) return 0;
  const long shareable = std::min(r.shared_tokens, r.prompt_tokens - 1) / limits_.block_size;
  long hits = 0;
  while (hits < shareable && cache_.count(block_key(r.prefix_id, hits))) ++hits;
  return hits;
}

// Starts a waiting request (it holds no block and has computed nothing: a preemption dropped both) if its first chunk
// fits: its cached blocks taken (skipping their prefill), or the blocks the log says were cached (forced), then new
// blocks for the chunk; nothing taken when they do not fit.
bool ReplicaScheduler::admit(ServedRequest& r, long budget) {
  const long hits = cached_prefix_blocks(r);
  long evictable_hits = 0;
  for (long i = 0; i < hits; ++i) evictable_hits += cache_.at(block_key(r.prefix_id, i)).refs == 0 ? 1 : 0;
  // The log's reported hits, unless caching is off (then the question is what the run costs without it).
  const long forced = limits_.prefix_caching ? std::min(r.forced_cached_tokens, r.prompt_tokens - 1) : 0;
  const long skipped = std::max(hits * limits_.block_size, forced);
  r.computed += skipped;
  const long positions = r.positions_within(budget);
  const long extra = r.blocks_for(r.computed + positions, limits_.block_size) - hits;
  if (positions <= 0 || extra > free_blocks() - evictable_hits) {
    r.computed -= skipped;
    return false;
  }
  for (long i = 0; i < hits; ++i) {
    const uint64_t key = block_key(r.prefix_id, i);
    CachedBlock& b = cache_.at(key);
    if (b.refs++ == 0) lru_.erase(b.in_lru);
    r.cache_keys.push_back(key);
  }
  r.blocks = hits;
  queried_tokens_ += r.tokens_to_compute() + skipped;
  hit_tokens_ += skipped;
  r.cached_tokens += skipped;
  return allocate(r, positions);
}

// Its full blocks within its cacheable positions enter the cache, held by it. A block already cached under the same
// name holds the same tokens where the request shares them (another request computed it meanwhile: the request's copy
// stays its own, and its later blocks with it); past its shared prompt it holds an older turn's tokens at those
// positions (a turn that did not re-send its answer), and the request's block replaces it unless a request holds it.
void ReplicaScheduler::register_blocks(ServedRequest& r) {
  if (!limits_.prefix_caching || r.prefix_id == 0 || r.beams != 1) return;
  const long full = std::min(r.computed, r.cacheable_tokens) / limits_.block_size;
  const long first_own = r.shared_tokens / limits_.block_size;  // blocks from here hold tokens of its own
  for (long i = static_cast<long>(r.cache_keys.size()); r.registering && i < full; ++i) {
    const uint64_t key = block_key(r.prefix_id, i);
    auto [it, fresh] = cache_.try_emplace(key, CachedBlock{1, {}});
    if (!fresh) {
      if (i < first_own || it->second.refs > 0) {
        r.registering = false;
        break;
      }
      lru_.erase(it->second.in_lru);  // the stale block is plain free memory now
      ++free_uncached_;
      it->second = CachedBlock{1, {}};
    }
    r.cache_keys.push_back(key);
  }
}

bool ReplicaScheduler::speculates(const ServedRequest& r) const {
  return limits_.draft_tokens > 0 && r.beams == 1 && r.computed >= r.prompt_tokens && r.tokens_to_compute() == 1;
}

// Deterministic acceptance: each verification adds tokens_per_step to the request's credit and yields its whole part
// (at least 1, at most draft tokens + 1, never past the request's end), so a long request averages tokens_per_step.
long ReplicaScheduler::accepted_tokens(ServedRequest& r) const {
  r.spec_credit += limits_.tokens_per_step;
  const long whole = std::clamp(static_cast<long>(std::floor(r.spec_credit)), 1L, limits_.draft_tokens + 1L);
  r.spec_credit = std::max(0.0, r.spec_credit - static_cast<double>(whole));
  return std::min(whole, r.gen_tokens - r.generated);
}

// Blocks for a handed-off request's received positions and the one it computes next, if they are free now.
bool ReplicaScheduler::reserve_remote(ServedRequest& r) {
  const long needed = r.blocks_for(r.received_tokens + 1, limits_.block_size);
  if (needed > free_blocks()) return false;
  take_blocks(needed);
  r.blocks = needed;
  return true;
}

void ReplicaScheduler::loaded(ServedRequest& r) {
  loading_.erase(std::find(loading_.begin(), loading_.end(), &r));
  r.computed = r.received_tokens, r.remote_kv = false;
  running_.push_back(&r);
}

void ReplicaScheduler::sent(const ServedRequest& r) {
  const auto it = held_.find(&r);
  if (it == held_.end()) return;
  give_back(it->second.cache_keys, it->second.uncached);
  held_.erase(it);
}

std::vector<ScheduledWork> ReplicaScheduler::schedule() {
  std::vector<ScheduledWork> work;
  long budget = limits_.max_batched_tokens;
  bool preempted = false;
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    ServedRequest& r = *running_[i];
    const bool spec = speculates(r);
    const long verified = limits_.draft_tokens + 1L;  // positions a verification computes (and holds slots for)
    const long positions = spec ? (budget >= verified ? verified : 0) : r.positions_within(budget);
    if (positions <= 0) {
      ++i;
      continue;
    }
    bool scheduled = true;
    while (!allocate(r, positions)) {
      ServedRequest* victim = running_.back();
      running_.pop_back();
      // The newest running request goes (FCFS): it sits behind `r`, so it holds no work of this iteration yet.
      preempt(*victim);
      preempted = true;
      if (victim == &r) {
        scheduled = false;
        break;
      }
    }
    if (!scheduled) break;
    if (spec) {
      const long accepted = accepted_tokens(r);
      work.push_back({&r, verified, accepted, accepted});
    } else {
      work.push_back({&r, r.rows(positions), positions});
    }
    budget -= work.back().tokens;
    ++i;
  }
  if (preempted) return work;
  while (!waiting_.empty() && budget > 0 &&
         static_cast<long>(running_.size() + loading_.size()) < limits_.max_num_seqs) {
    ServedRequest& r = *waiting_.front();
    if (r.remote_kv) {  // its KV cache is read into reserved blocks; it computes nothing until it has arrived
      if (!reserve_remote(r)) break;
      waiting_.pop_front();
      loading_.push_back(&r), loads_.push_back(&r);
      continue;
    }
    if (!admit(r, budget)) break;
    const long positions = r.positions_within(budget);
    waiting_.pop_front();
    running_.push_back(&r);
    work.push_back({&r, r.rows(positions), positions});
    budget -= work.back().tokens;
  }
  return work;
}

std::vector<ServedRequest*> ReplicaScheduler::complete(const std::vector<ScheduledWork>& work) {
  std::vector<ServedRequest*> finished;
  for (const ScheduledWork& w : work) {
    ServedRequest& r = *w.request;
    r.computed += w.positions;
    if (r.prefix_id != 0) register_blocks(r);       // the common case (no prefix) costs one test
    if (w.accepted > 0) r.generated += w.accepted;  // the verified tokens kept, the last one the target's own
    else if (r.computed == r.prompt_tokens + r.generated) ++r.generated;  // caught up: the logits give a token
    if (r.done()) finished.push_back(&r);
  }
  for (ServedRequest* r : finished) {
    if (r->hands_off) {  // its blocks stay taken until sent(): set aside, the request moves on
      const long uncached = r->blocks - static_cast<long>(r->cache_keys.size());
      held_[r] = Held{std::exchange(r->cache_keys, {}), uncached};
      r->blocks = 0, r->registering = true;
    } else {
      release(*r);
    }
    running_.erase(std::find(running_.begin(), running_.end(), r));
  }
  return finished;
}

}  // namespace llmco2::serving
