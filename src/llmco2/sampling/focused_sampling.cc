// sampling/focused_sampling.cc - drawing plans from the Azure traces and the bundled catalogs.
#include "sampling/focused_sampling.h"

#include <algorithm>
#include <random>

#include "core/error.h"
#include "core/interrupt.h"
#include "features/memory_fit.h"
#include "model/model_catalog.h"
#include "sim/label.h"

namespace llmco2::sampling {
namespace {

// Draws that fit nothing are redrawn; this many failures in a row means the space itself does not fit.
constexpr int kMaxRedraws = 10000;

// Whether the plan row is a valid request (heads divisible, context) whose weights and KV cache fit its GPUs.
bool fits(const PlanRow& row, CatalogCache& catalogs) {
  try {
    const SimConfig c = config_for_plan(row, catalogs);
    return plan_memory(*c.model, c.request, *c.gpu).runs();
  } catch (const Error&) {
    return false;
  }
}

// GPU counts from 1 to max_gpus that can serve the row.
std::vector<int> fitting_counts(PlanRow row, int max_gpus, CatalogCache& catalogs) {
  std::vector<int> counts;
  for (int n = 1; n <= max_gpus; ++n) {
    row.gpus = n;
    if (fits(row, catalogs)) counts.push_back(n);
  }
  return counts;
}

template <typename T>
const T& pick(const std::vector<T>& items, std::mt19937_64& rng) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

}  // namespace

std::vector<std::string> paper_models() {
  return {"bloom-560m", "bloom-1b1",  "bloom-1b7",    "bloom-3b",      "bloom-7b1",   "gemma-2b",
          "gemma-7b",   "gemma-2-2b", "gemma-2-9b",   "gemma-2-27b",   "qwen2-0.5b",  "qwen2-1.5b",
          "qwen2-7b",   "qwen2-72b",  "llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b"};
}

std::vector<std::string> bundled_model_ids() {
  std::vector<std::string> ids;
  for (const auto& entry : ModelCatalog::bundled().entries()) ids.push_back(entry.id);
  return ids;
}

std::vector<PlanRow> sample_plan(const SamplingSpace& space, long count, uint64_t seed) {
  if (space.models.empty() || space.gpus.empty() || space.requests.empty() || space.batch_weights.empty())
    fail("sampling needs at least one model, one GPU, one trace request and one batch weight");
  std::mt19937_64 rng(seed);
  std::discrete_distribution<int> batch_minus_one(space.batch_weights.begin(), space.batch_weights.end());
  std::bernoulli_distribution int8(space.int8_share);
  CatalogCache catalogs;
  std::vector<PlanRow> plan;
  plan.reserve(static_cast<size_t>(count));
  int redraws = 0;
  while (static_cast<long>(plan.size()) < count) {
    check_interrupt();  // millions of draws take minutes (core/interrupt.h)
    PlanRow row;
    row.model = pick(space.models, rng);
    row.gpu = pick(space.gpus, rng);
    const TraceRequest& traced = pick(space.requests, rng);
    row.batch = batch_minus_one(rng) + 1;
    row.prompt = traced.prompt_tokens;
    row.gen = traced.gen_tokens;
    if (int8(rng)) row.dtype = "int8";
    const auto counts = fitting_counts(row, space.max_gpus, catalogs);
    if (counts.empty()) {
      if (++redraws > kMaxRedraws)
        fail("sampling: {} draws in a row fit no GPU count up to {}", kMaxRedraws, space.max_gpus);
      continue;
    }
    redraws = 0;
    row.gpus = pick(counts, rng);
    row.line = static_cast<long>(plan.size()) + 2;  // as in the written CSV (header on line 1)
    plan.push_back(std::move(row));
  }
  return plan;
}

std::vector<PlanRow> sample_around(const std::vector<PlanRow>& centres, int per_centre, uint64_t seed) {
  constexpr long kPromptRange = 10, kGenRange = 1;  // the paper's C for prompt length and generated tokens
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<long> prompt_step(-kPromptRange, kPromptRange), gen_step(-kGenRange, kGenRange);
  CatalogCache catalogs;
  std::vector<PlanRow> plan;
  for (const auto& centre : centres) {
    for (int i = 0; i < per_centre; ++i) {
      PlanRow row = centre;
      row.prompt = std::max(1L, centre.prompt + prompt_step(rng));
      row.gen = std::max(1L, centre.gen + gen_step(rng));
      if (!fits(row, catalogs)) continue;
      row.line = static_cast<long>(plan.size()) + 2;
      plan.push_back(std::move(row));
    }
  }
  return plan;
}

}  // namespace llmco2::sampling
