// features/memory_fit.cc - weights split over the GPUs, KV cache capped by sliding windows.
#include "features/memory_fit.h"

#include <algorithm>

#include "core/error.h"

namespace llmco2 {
namespace {

constexpr double kGB = 1e9;

double kv_cache_bytes_per_gpu(const ModelSpec& m, const Request& r) {
  const double context = static_cast<double>(r.prompt_tokens + r.gen_tokens);
  double tokens_heads = 0;  // sum over layers of cached tokens x KV heads per GPU
  for (const auto& a : m.layer_attention) {
    const bool windowed = a.window_tokens > 0 && a.vertical_stride == 0;
    const double cached = windowed ? std::min<double>(context, static_cast<double>(a.window_tokens)) : context;
    tokens_heads += cached * kv_heads_per_gpu(a.kv_heads, r.gpus);
  }
  return 2.0 * static_cast<double>(r.batch) * tokens_heads * m.head_dim * dtype_bytes(r.precision.kv_cache);
}

// Smallest GPU count the model's heads allow that holds the request, or 0 if none up to 64 does.
int gpus_needed(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  for (int n = 1; n <= 64; ++n) {
    Request candidate = r;
    candidate.gpus = n;
    try {
      validate_request(candidate, m);
    } catch (const Error&) {
      continue;
    }
    if (memory_fit(m, candidate, gpu).fits()) return n;
  }
  return 0;
}

}  // namespace

MemoryFit memory_fit(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  MemoryFit fit;
  fit.weight_bytes_per_gpu = m.total_params() * dtype_bytes(r.precision.weights) / r.gpus;
  fit.kv_cache_bytes_per_gpu = kv_cache_bytes_per_gpu(m, r);
  fit.usable_bytes_per_gpu = gpu.memory_bytes * kUsableMemoryShare;
  return fit;
}

void check_memory_fit(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  const MemoryFit fit = memory_fit(m, r, gpu);
  if (fit.fits()) return;
  const int needed = gpus_needed(m, r, gpu);
  const std::string advice = needed > 0 ? fmt::format("it needs --gpus {} or more", needed)
                                        : std::string("no GPU count up to 64 holds it; lower --batch or the context");
  fail("{} does not fit {} x {}: {:.1f} GB of weights + {:.1f} GB of KV cache per GPU exceed the {:.1f} GB usable "
       "({:.0f}% of {:.0f} GB); {}",
       m.id, r.gpus, gpu.id, fit.weight_bytes_per_gpu / kGB, fit.kv_cache_bytes_per_gpu / kGB,
       fit.usable_bytes_per_gpu / kGB, kUsableMemoryShare * 100, gpu.memory_bytes / kGB, advice);
}

}  // namespace llmco2
