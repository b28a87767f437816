// graph/context.h - how many keys the queries of a phase attend to, summed in closed form (causal, windowed).
#pragma once

#include "graph/module.h"
#include "graph/request.h"
#include "model/model_spec.h"

namespace llmco2::graph {

// Keys one query sees when the sequence holds `context` tokens (itself included): all of them, or the sliding
// window, plus 1 in `vertical_stride` of the older ones for block-sparse layers, or (chunked local attention) those
// of its own chunk: ((context - 1) mod chunk) + 1.
double keys_seen(double context, const LayerAttention& attention);

// Sum of keys_seen(c) for c = first..last (inclusive, first >= 1); O(1).
double sum_keys_seen(long first, long last, const LayerAttention& attention);

// Per-sequence key counts of one layer in one phase.
struct AttentionSpan {
  double computed_keys = 0;  // query-key pairs the kernels compute (eager prefill computes the masked half too)
  // Key (and value) rows read from DRAM: each key once per step. A FlashAttention prefill's later query tiles read
  // the K/V tiles again, but from L2: the tiles of one head run side by side, and AIConfigurator's prefill tables
  // (expanded MLA: 128 heads of 192 + 128 wide K/V at 16k tokens) run at the compute roof, where a DRAM read per
  // 128-row query tile would make them 1.5-2x slower than measured (docs/history/aiconfigurator-mla-moe-study.md).
  double loaded_keys = 0;
};

// Prefill: queries 1..prompt, each key read once. Flash skips masked tiles; eager computes the full prompt x prompt
// matrix.
// Decode: steps s = 1..gen-1, each one query with context prompt + s, keys read once per step.
AttentionSpan attention_span(Phase phase, const Request& request, const LayerAttention& attention);
// The same from the request's counts and attention kernel (flash or eager), as the graph's cost functions see them.
AttentionSpan attention_span(Phase phase, long prompt_tokens, long gen_tokens, bool flash,
                             const LayerAttention& attention);

}  // namespace llmco2::graph
