// features/memory_fit.h - what a request occupies on each GPU, and how an engine schedules it: refused only when the
// weights do not fit; a KV cache too large for one batch runs in waves.
#pragma once

#include <string>
#include <vector>

#include "features/module.h"
#include "graph/request.h"
#include "hardware/gpu.h"
#include "model/model_spec.h"

namespace llmco2::features {

// The share of memory an engine gives to weights + KV cache is its profile's memory_utilization
// (engine/engine_profile.h: vLLM 0.9, HF transformers 1.0); the rest holds the CUDA context, CUDA graphs and allocator
// slack. Token rows of the largest forward pass the engine profiles its activation peak with (vLLM's
// max_num_batched_tokens with chunked prefill), and the sequences whose fp32 logits it holds (max_num_seqs).
inline constexpr double kProfiledBatchedTokens = 8192;
inline constexpr double kProfiledSequences = 256;

// Where a request's memory goes on each GPU, and how the engine splits its batch.
struct MemoryPlan {
  double memory_bytes_per_gpu = 0;
  double weight_bytes_per_gpu = 0;           // at the real dtype, tensor-parallel split, embeddings and LM head in
  double reserve_bytes_per_gpu = 0;          // 1 - utilisation of the GPU + the activation peak
  double kv_bytes_per_sequence_per_gpu = 0;  // one sequence at prompt + gen tokens, windows capping local layers
  double kv_capacity_bytes_per_gpu = 0;      // what weights and reserve leave (0 when they do not fit)
  long sequences_per_wave = 0;               // sequences run together (the batch, or as many as the cache holds)
  long waves = 0;                            // ceil(batch / sequences_per_wave); 0 when the request cannot run
  long last_wave_sequences = 0;              // sequences of the last wave (batch - (waves - 1) x per wave)
  bool weights_fit = false;
  std::string note;  // why it cannot run, or how the batch is split; "" for one wave

  bool runs() const { return weights_fit && sequences_per_wave >= 1; }
};

MemoryPlan plan_memory(const ModelSpec& model, const Request& request, const Gpu& gpu);

// Weights on each GPU: the tensor-parallel split of the largest pipeline stage (its layers and the larger end of the
// model, embedding table or LM head), at the stored dtypes.
double weight_bytes_per_gpu(const ModelSpec& model, const Request& request);

// How an engine shares out memory: `share` of the whole GPU for weights + KV (vLLM's gpu_memory_utilization), or
// (`of_free`, TensorRT-LLM) of what the weights and activations leave free, for the KV cache.
struct EngineShare {
  double share = 0.9;
  bool of_free = false;
};

// plan_memory for many requests of one setup (model, GPU, GPU count, precision, engine): the weights, the engine's
// share and the layers' cache shapes (grouped by kind) worked out once; plan(request) equals plan_memory's plan.
// The model and GPU must outlive it.
class MemoryPlanner {
 public:
  MemoryPlanner(const ModelSpec& model, const Request& setup, const Gpu& gpu);
  MemoryPlan plan(const Request& request) const;  // request: the setup's GPUs, precision and engine

 private:
  struct CacheGroup {
    LayerAttention attention;
    bool mla = false;
    int kv_heads_per_gpu = 0;
    int layers = 0;
  };
  double kv_bytes_per_sequence(const Request& request) const;

  const ModelSpec& model_;
  const Gpu& gpu_;
  double weight_bytes_per_gpu_;
  double stage_share_;  // the largest pipeline stage's share of the layers (1 without stages)
  EngineShare share_;
  double kv_bytes_, state_bytes_;
  double activation_elements_per_row_ = 0, activation_bytes_ = 2;
  bool profiles_ = true;
  std::vector<CacheGroup> groups_;
};

// Activation peak of the engine's profiled forward pass per GPU: kProfiledBatchedTokens rows of the residual, the
// norm output and the FFN's gate/up/activation tensors (x top-k for MoE) at 16 bits, plus fp32 logits of
// kProfiledSequences sequences.
double activation_peak_bytes_per_gpu(const ModelSpec& model, const Request& request);
// KV cache of one sequence at prompt + gen tokens on one GPU, at the KV dtype (sliding-window layers hold the window,
// chunked local layers the chunk, MLA layers one latent per token), plus the sequence's recurrent state.
double kv_bytes_per_sequence_per_gpu(const ModelSpec& model, const Request& request);
// The recurrent state of one sequence on one GPU, whatever its length: per Mamba-2 layer the conv window
// ((conv_kernel - 1) x conv channels) and the SSM state (heads x head_dim x state_dim), at the 16-bit model dtype.
double state_bytes_per_sequence_per_gpu(const ModelSpec& model, const Request& request);

// The whole batch in one wave (kept for the graph JSON and callers asking "does it fit at once").
struct MemoryFit {
  double weight_bytes_per_gpu = 0;
  double kv_cache_bytes_per_gpu = 0;  // for the whole batch at prompt + gen tokens
  double usable_bytes_per_gpu = 0;    // memory - reserve
  bool fits() const { return weight_bytes_per_gpu + kv_cache_bytes_per_gpu <= usable_bytes_per_gpu; }
};

MemoryFit memory_fit(const ModelSpec& model, const Request& request, const Gpu& gpu);

// Throws Error when the request cannot run (weights and reserve do not fit, or not even one sequence's KV cache),
// saying how many GPUs it needs (or that no count up to 64 does). A batch that fits only in waves passes.
void check_memory_fit(const ModelSpec& model, const Request& request, const Gpu& gpu);

// The one check that a request can run on its setup: validate_request (counts, context window, GPU split, engine)
// and check_memory_fit. Throws Error.
void check_runs(const ModelSpec& model, const Request& request, const Gpu& gpu);

}  // namespace llmco2::features
