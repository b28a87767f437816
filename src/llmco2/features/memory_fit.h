// features/memory_fit.h - whether a model's weights and KV cache fit the chosen GPUs, and how many it needs.
#pragma once

#include "graph/request.h"
#include "hardware/gpu.h"
#include "model/model_spec.h"

namespace llmco2 {

// Share of GPU memory available to weights and KV cache (vLLM's default gpu_memory_utilization; the rest holds
// activations, the CUDA context and allocator slack).
inline constexpr double kUsableMemoryShare = 0.9;

struct MemoryFit {
  double weight_bytes_per_gpu = 0;
  double kv_cache_bytes_per_gpu = 0;  // for the whole batch at prompt + gen tokens
  double usable_bytes_per_gpu = 0;
  bool fits() const { return weight_bytes_per_gpu + kv_cache_bytes_per_gpu <= usable_bytes_per_gpu; }
};

MemoryFit memory_fit(const ModelSpec& model, const Request& request, const Gpu& gpu);

// Throws Error when the request does not fit, saying how many GPUs it needs (or that no count up to 64 does).
void check_memory_fit(const ModelSpec& model, const Request& request, const Gpu& gpu);

}  // namespace llmco2
