// graph/context.cc - closed-form sums over causal (and sliding-window) attention.
#include "graph/context.h"

#include <algorithm>
#include <cmath>

namespace llmco2::graph {
namespace {

// Sum of c for c = a..b (0 when b < a).
double sum_range(double a, double b) { return b < a ? 0.0 : (a + b) * (b - a + 1) / 2.0; }

// Sum of ((c - 1) mod chunk) + 1 for c = 1..n: n / chunk whole chunks of 1..chunk, then 1..(n mod chunk).
double sum_chunked(double n, double chunk) {
  const double whole = std::floor(n / chunk), rest = n - whole * chunk;
  return whole * chunk * (chunk + 1) / 2 + rest * (rest + 1) / 2;
}

}  // namespace

double keys_seen(double context, const LayerAttention& attention) {
  if (attention.chunk_tokens > 0) {
    const double chunk = static_cast<double>(attention.chunk_tokens);
    return context - std::floor((context - 1) / chunk) * chunk;  // position within its chunk, 1..chunk
  }
  const double window = static_cast<double>(attention.window_tokens);
  if (attention.window_tokens == 0 || context <= window) return context;
  const double strided = attention.vertical_stride > 0 ? (context - window) / attention.vertical_stride : 0.0;
  return window + strided;
}

double sum_keys_seen(long first, long last, const LayerAttention& attention) {
  if (last < first) return 0.0;
  const double a = static_cast<double>(first), b = static_cast<double>(last);
  if (attention.chunk_tokens > 0) {
    const double chunk = static_cast<double>(attention.chunk_tokens);
    return sum_chunked(b, chunk) - sum_chunked(a - 1, chunk);
  }
  if (attention.window_tokens == 0) return sum_range(a, b);
  const double w = static_cast<double>(attention.window_tokens);
  const double inside = sum_range(a, std::min(b, w));  // contexts within the window see all keys
  const double beyond_first = std::max(a, w + 1);
  const double beyond_count = std::max(0.0, b - beyond_first + 1);
  double beyond = beyond_count * w;
  if (attention.vertical_stride > 0) beyond += sum_range(beyond_first - w, b - w) / attention.vertical_stride;
  return inside + beyond;
}

AttentionSpan attention_span(Phase phase, const Request& r, const LayerAttention& attention) {
  return attention_span(phase, r.prompt_tokens, r.gen_tokens, r.flash_attention, attention);
}

AttentionSpan attention_span(Phase phase, long prompt_tokens, long gen_tokens, bool flash,
                             const LayerAttention& attention) {
  AttentionSpan span;
  if (phase == Phase::prefill) {
    const double causal = sum_keys_seen(1, prompt_tokens, attention);
    const double prompt = static_cast<double>(prompt_tokens);
    span.computed_keys = flash ? causal : prompt * prompt;
    span.loaded_keys = prompt;
    return span;
  }
  span.computed_keys = sum_keys_seen(prompt_tokens + 1, prompt_tokens + gen_tokens - 1, attention);
  span.loaded_keys = span.computed_keys;
  return span;
}

}  // namespace llmco2::graph
