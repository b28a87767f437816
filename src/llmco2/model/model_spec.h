// model/model_spec.h - a transformer architecture as the kernel graph needs it, independent of HF key names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace llmco2 {

enum class MlpKind { gated, plain };           // gated: act(gate(x)) * up(x) -> down; plain: act(up(x)) -> down
enum class NormKind { rms_norm, layer_norm };  // layer_norm also has a bias vector
enum class Activation { relu, silu, gelu, gelu_tanh };
enum class PositionKind { rotary, alibi, learned };

// The attention of one layer: its KV heads and which keys a query sees.
struct LayerAttention {
  int kv_heads = 0;
  long window_tokens = 0;   // 0: full causal attention; else a sliding window of this many keys
  int vertical_stride = 0;  // block-sparse (Phi-3-small): beyond the window, 1 key in `vertical_stride` is seen
  bool operator==(const LayerAttention&) const = default;
};

struct MoeSpec {
  int experts = 0;              // routed experts per layer
  int experts_per_token = 0;    // top-k
  long expert_intermediate = 0; // FFN width of one routed expert
  long shared_intermediate = 0; // FFN width of the always-on shared expert (0: none)
  bool router_bias = false;     // gpt-oss routers have a bias
};

struct ModelSpec {
  std::string id;      // catalog id or the config path
  std::string family;  // HF model_type, e.g. "llama"
  std::string source;  // file it was read from

  long hidden = 0;
  int layers = 0;
  int heads = 0;
  int head_dim = 0;
  long intermediate = 0;  // dense FFN width (unused when every layer is MoE)
  long vocab = 0;
  std::optional<long> max_positions;

  MlpKind mlp = MlpKind::gated;
  NormKind norm = NormKind::rms_norm;
  Activation activation = Activation::silu;
  PositionKind position = PositionKind::rotary;
  int norms_per_layer = 2;          // Gemma2/3 add post-attention and post-FFN norms: 4
  bool parallel_attention = false;  // Falcon: attention and MLP read the same norm output, one residual add
  bool tied_embeddings = false;
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  std::optional<MoeSpec> moe;  // set when every layer's FFN is a mixture of experts

  std::vector<LayerAttention> layer_attention;  // one per layer

  DType default_dtype = DType::bf16;  // the checkpoint's torch_dtype (the 16-bit type of unquantised tensors)
  bool dtype_from_config = false;     // false: torch_dtype was absent and bf16 was assumed
  // The checkpoint's precision: every class at default_dtype, or what its quantization_config (or ModelOpt's
  // hf_quant_config.json) stores, e.g. gpt-oss: bf16 with MXFP4 experts; Qwen3-30B-A3B-FP8: fp8 weights/activations.
  Precision default_precision;
  std::string quantization;  // the quant_method read ("mxfp4", "fp8", "awq", "gptq", ...); "" when unquantised

  // The precision of a request: `spec` (--dtype; 16 means default_dtype) when given, else default_precision.
  Precision precision_for(std::string_view spec) const;

  // Parameter counts (elements, not bytes), for weight bytes and memory fit.
  long max_kv_heads() const;
  double attention_params(const LayerAttention& attention) const;  // q, k, v, o (+ biases)
  double dense_mlp_params() const;                                 // gate/up/down (+ biases)
  double expert_params() const;                                    // one routed expert
  double shared_expert_params() const;                             // shared expert + its gate
  double router_params() const;
  double norm_params() const;  // all norms of one layer
  double layer_params(int layer) const;
  double embedding_params() const;  // token embedding table
  double lm_head_params() const;    // output projection (0 extra storage when tied)
  double total_params() const;      // as stored: tied embeddings counted once
  double head_params() const;       // embedding table + LM head as stored (once when tied)
  double routed_expert_params() const;  // every routed expert of every layer

  // Bytes of all weights stored at `precision`: routed experts at its expert format, embeddings and LM head at its
  // unquantised type (quantised checkpoints keep them 16-bit), everything else at its weight format.
  double weight_bytes(const Precision& precision) const;
};

}  // namespace llmco2
