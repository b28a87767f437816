// sampling/focused_sampling.h - focused sampling (paper section 3.2, Algorithm 1): configurations common in real
// clouds, and fine-grained samples around the configurations a predictor gets most wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataset/plan.h"
#include "sampling/azure_trace.h"
#include "sampling/module.h"

namespace llmco2::sampling {

// The space configurations are drawn from: architectures (A), inference requests (I) and GPUs (H).
struct SamplingSpace {
  std::vector<std::string> models;  // catalog ids, drawn uniformly
  std::vector<std::string> gpus;    // catalog ids, drawn uniformly
  int max_gpus = 4;                 // GPU counts run from the fewest that fit the model to this
  std::vector<double> batch_weights = {0.4, 0.3, 0.15, 0.15};  // P(batch = 1, 2, ...), Azure keeps batches small
  std::vector<TraceRequest> requests;                          // (prompt, gen) pairs drawn jointly, as they arrived
  double int8_share = 0.0;  // share of configurations served with int8 weights and activations
};

// The model ids of the paper's six families (Bloom, Gemma, Gemma2, Qwen2, Llama3.1, Mixtral): its 17 LLMs.
std::vector<std::string> paper_models();
// Every bundled model id.
std::vector<std::string> bundled_model_ids();

// `count` configurations that fit their GPUs (weights and KV cache), seeded. Throws Error when the space is empty or
// no configuration of it fits.
std::vector<PlanRow> sample_plan(const SamplingSpace& space, long count, uint64_t seed);

// Fine-grained sampling: `per_centre` configurations around each centre, prompt within +-10 tokens and generation
// within +-1 token (the paper's C), same model, GPU, count and batch.
std::vector<PlanRow> sample_around(const std::vector<PlanRow>& centres, int per_centre, uint64_t seed);

}  // namespace llmco2::sampling
