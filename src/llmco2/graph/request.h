// graph/request.h - one inference request: batch, prompt and generated tokens, GPU count, precision, engine.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "graph/module.h"
#include "model/model_spec.h"

namespace llmco2::graph {

enum class Phase { prefill, decode };
std::string_view phase_name(Phase phase);

struct Request {
  long batch = 1;             // sequences processed together
  long prompt_tokens = 1024;  // per sequence
  long gen_tokens = 128;      // generated per sequence; the first comes from prefill, gen-1 from decode steps
  int gpus = 1;               // tensor-parallel degree
  Precision precision;
  bool flash_attention = true;
  std::string engine = "vllm";
  // Mixture of experts over several GPUs: each GPU holds whole routed experts, experts / gpus of them (vLLM
  // --enable-expert-parallel), instead of a 1/gpus slice of every expert. The tokens stay replicated (the attention is
  // tensor-parallel) and an all-reduce sums the experts' outputs as before; a step waits for the GPU that loads the
  // most experts.
  bool expert_parallel = false;
  // Pipeline stages (vLLM --pipeline-parallel-size): the layers split into this many consecutive stages, each on its
  // own `gpus` tensor-parallel GPUs, so the request runs on gpus x pipeline_parallel GPUs. The engine splits the batch
  // into one micro-batch per stage (vLLM's virtual engines) that flow through the stages one after another.
  int pipeline_parallel = 1;

  int total_gpus() const { return gpus * pipeline_parallel; }
  // The largest stage's share of the decoder layers: ceil(layers / stages) / layers (vLLM gives the first stages the
  // remainder).
  double stage_layer_share(int layers) const;
  // Micro-batches in flight: one per stage, none empty (a batch smaller than the stages fills only `batch` of them).
  long microbatches() const { return std::min<long>(batch, pipeline_parallel); }
  // Sequences of the largest micro-batch: ceil(batch / microbatches()).
  long microbatch() const { return (batch + microbatches() - 1) / microbatches(); }
};

// Serving engines llmco2 knows ("vllm", "hf-transformers", "trt-llm", ...), "unknown" included: the engine of a
// measured row whose runner did not name one.
const std::vector<std::string>& known_engines();
// The engines a request may name: known_engines() without "unknown". Every interface offers and accepts these.
const std::vector<std::string>& offered_engines();

// Checks counts and divisibility against the model. Throws Error with one clear sentence.
void validate_request(const Request& request, const ModelSpec& model);
// Only the checks of the setup (GPU count and its divisibility, engine, experts, precision), not batch or tokens.
void validate_setup(const Request& request, const ModelSpec& model);
// Only the checks that depend on batch, prompt and gen (their ranges, the context window), with validate_request's
// messages: for a request whose setup (GPUs, engine, precision) passed validate_request.
void validate_counts(const Request& request, const ModelSpec& model);

// KV heads held by each GPU: kv/gpus, or 1 when GPUs outnumber KV heads (vLLM replicates them).
int kv_heads_per_gpu(int kv_heads, int gpus);

}  // namespace llmco2::graph
