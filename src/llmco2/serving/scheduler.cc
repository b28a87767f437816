// serving/scheduler.cc - vLLM v1's schedule loop over a paged KV cache, in virtual time.
#include "serving/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace llmco2::serving {

ReplicaScheduler::ReplicaScheduler(SchedulerLimits limits) : limits_(limits), free_blocks_(limits.kv_blocks) {
  if (limits_.max_num_seqs < 1 || limits_.max_batched_tokens < 1 || limits_.block_size < 1 || limits_.kv_blocks < 1)
    fail("scheduler limits must be positive (max_num_seqs {}, max_batched_tokens {}, block_size {}, kv_blocks {})",
         limits_.max_num_seqs, limits_.max_batched_tokens, limits_.block_size, limits_.kv_blocks);
}

void ReplicaScheduler::enqueue(ServedRequest* request) { waiting_.push_back(request); }

bool ReplicaScheduler::allocate(ServedRequest& r, long positions) {
  const long needed = r.blocks_for(r.computed + positions, limits_.block_size);
  const long extra = needed - r.blocks;
  if (extra > free_blocks_) return false;
  if (extra > 0) free_blocks_ -= extra, r.blocks = needed;
  return true;
}

// Recomputation: the cache of the request is dropped; it rejoins the front of the queue with its prompt and the tokens
// it generated so far, all to be prefilled again.
void ReplicaScheduler::preempt(ServedRequest& r) {
  free_blocks_ += r.blocks;
  r.blocks = 0;
  r.computed = 0;
  ++r.preemptions;
  ++preemptions_;
  waiting_.push_front(&r);
}

std::vector<ScheduledWork> ReplicaScheduler::schedule() {
  std::vector<ScheduledWork> work;
  long budget = limits_.max_batched_tokens;
  bool preempted = false;
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    ServedRequest& r = *running_[i];
    const long positions = r.positions_within(budget);
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
    work.push_back({&r, r.rows(positions), positions});
    budget -= work.back().tokens;
    ++i;
  }
  if (preempted) return work;
  while (!waiting_.empty() && budget > 0 && static_cast<long>(running_.size()) < limits_.max_num_seqs) {
    ServedRequest& r = *waiting_.front();
    const long positions = r.positions_within(budget);
    if (positions <= 0 || !allocate(r, positions)) break;
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
    if (r.computed == r.prompt_tokens + r.generated) ++r.generated;  // caught up: the step's logits give a token
    if (r.done()) finished.push_back(&r);
  }
  for (ServedRequest* r : finished) {
    free_blocks_ += r->blocks;
    r->blocks = 0;
    running_.erase(std::find(running_.begin(), running_.end(), r));
  }
  return finished;
}

}  // namespace llmco2::serving
