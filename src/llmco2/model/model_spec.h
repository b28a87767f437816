// model/model_spec.h - a transformer architecture as the kernel graph needs it, independent of HF key names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/module.h"

namespace llmco2::model {

enum class MlpKind { gated, plain };           // gated: act(gate(x)) * up(x) -> down; plain: act(up(x)) -> down
enum class NormKind { rms_norm, layer_norm };  // layer_norm also has a bias vector
enum class Activation { relu, silu, gelu, gelu_tanh, relu2 };  // relu2: squared ReLU (Nemotron-H)
enum class PositionKind { rotary, alibi, learned, none };      // none: no positional signal (Nemotron-H)

// The attention of one layer: its KV heads and which keys a query sees.
struct LayerAttention {
  int kv_heads = 0;
  long window_tokens = 0;   // 0: full causal attention; else a sliding window of this many keys
  int vertical_stride = 0;  // block-sparse (Phi-3-small): beyond the window, 1 key in `vertical_stride` is seen
  long chunk_tokens = 0;    // chunked local attention (Llama-4): a query sees only the keys of its own chunk
  bool rope = true;         // false: this layer skips the model's rotary embedding (Llama-4's NoPE layers)
  auto operator<=>(const LayerAttention&) const = default;
};

// What mixes information across tokens in a layer, and the layer's feed-forward block.
enum class MixerKind { attention, mla, mamba, none };  // mla: multi-head latent attention (DeepSeek-V2/V3)
enum class FfnKind { dense, moe, none };

// One decoder layer: its token mixer (with its attention shape) and its feed-forward block. Compared field by field
// in this order, so that layer kinds sort by mixer, then attention shape, then FFN.
struct LayerSpec {
  MixerKind mixer = MixerKind::attention;
  LayerAttention attention;  // for attention and mla mixers
  FfnKind ffn = FfnKind::dense;
  auto operator<=>(const LayerSpec&) const = default;
};

struct MoeSpec {
  int experts = 0;               // routed experts per MoE layer
  int experts_per_token = 0;     // top-k
  long expert_intermediate = 0;  // FFN width of one routed expert
  long shared_intermediate = 0;  // FFN width of the always-on shared expert(s) (0: none)
  bool shared_gate = false;      // Qwen2-MoE scales the shared expert by a sigmoid gate h -> 1
  bool router_bias = false;      // gpt-oss routers have a bias; DeepSeek-V3 a score-correction bias per expert
  // HF transformers runs this architecture's experts as batched matmuls over all experts at inference (gpt-oss's
  // GptOssExperts), not in a Python loop over the experts (Mixtral, Qwen2/3-MoE, DeepSeek): no per-expert launches.
  bool batched_in_hf = false;
  bool operator==(const MoeSpec&) const = default;
};

// Multi-head latent attention (DeepSeek-V2/V3): keys and values are compressed into one latent per token.
struct MlaSpec {
  long q_lora_rank = 0;   // 0: q_proj straight from the hidden state; else q_a_proj -> norm -> q_b_proj
  long kv_lora_rank = 0;  // latent width cached per token (with the rope part)
  long qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  long cached_elements() const { return kv_lora_rank + qk_rope_head_dim; }  // per token and layer
  long qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const MlaSpec&) const = default;
};

// A Mamba-2 mixer (state-space duality): heads of head_dim channels, each with a state of state_dim per channel.
struct MambaSpec {
  int heads = 0, head_dim = 0, state_dim = 0, groups = 1;  // B and C are shared by the heads of a group
  int conv_kernel = 4;                                     // causal depthwise conv1d width
  long chunk_tokens = 256;                                 // SSD chunk length of the prefill scan
  bool conv_bias = true, proj_bias = false;
  // The SSM state's type as vLLM keeps it: the config's mamba_ssm_cache_dtype, else float32, vLLM's NemotronH default
  // ("only float32 is known to have no accuracy issues", vllm/model_executor/models/config.py), which NVIDIA's model
  // card also asks for (--mamba_ssm_cache_dtype float32). The conv state keeps the model's 16-bit type.
  DType ssm_state_dtype = DType::fp32;
  long inner() const { return static_cast<long>(heads) * head_dim; }                  // x, z and y width
  long conv_channels() const { return inner() + 2L * groups * state_dim; }            // x, B, C
  long in_proj_width() const { return inner() + conv_channels() + heads; }            // z, xBC, dt
  double state_elements() const { return static_cast<double>(inner()) * state_dim; }  // ssm state per sequence
  bool operator==(const MambaSpec&) const = default;
};

struct ModelSpec {
  std::string id;      // catalog id or the config path
  std::string family;  // HF model_type, e.g. "llama"
  std::string source;  // file it was read from

  long hidden = 0;
  int layers = 0;
  int heads = 0;
  int head_dim = 0;
  long intermediate = 0;  // dense FFN width (of the layers whose FFN is dense)
  long vocab = 0;
  std::optional<long> max_positions;

  MlpKind mlp = MlpKind::gated;
  NormKind norm = NormKind::rms_norm;
  Activation activation = Activation::silu;
  PositionKind position = PositionKind::rotary;
  int norms_per_layer = 2;          // per attention + FFN layer; Gemma2/3 add post-attention and post-FFN norms: 4
  bool parallel_attention = false;  // Falcon, GPT-J, GPT-NeoX: attention and MLP read the layer's input, one add
  int rotary_dim = 0;               // leading dims of each head the rotary embedding turns (GPT-J, GPT-NeoX); 0: all
  bool tied_embeddings = false;
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool lm_head_bias = false;       // GPT-J's lm_head has a bias over the vocabulary
  std::optional<MoeSpec> moe;      // the experts of the layers whose FFN is moe
  std::optional<MlaSpec> mla;      // the latent attention of the layers whose mixer is mla
  std::optional<MambaSpec> mamba;  // the Mamba-2 mixer of the layers whose mixer is mamba

  std::vector<LayerSpec> layer_specs;  // one per layer
  bool reconstructed = false;  // the catalog's config was assembled from partial sources (data/models/RECONSTRUCTED.md)
  int mtp_layers = 0;  // multi-token-prediction modules beside the model (num_nextn_predict_layers: DeepSeek-V3)

  DType default_dtype = DType::bf16;  // the checkpoint's torch_dtype (the 16-bit type of unquantised tensors)
  bool dtype_from_config = false;     // false: torch_dtype was absent and bf16 was assumed
  // The checkpoint's precision: every class at default_dtype, or what its quantization_config (or ModelOpt's
  // hf_quant_config.json) stores, e.g. gpt-oss: bf16 with MXFP4 experts; Qwen3-30B-A3B-FP8: fp8 weights/activations.
  Precision default_precision;
  std::string quantization;  // the quant_method read ("mxfp4", "fp8", "awq", "gptq", ...); "" when unquantised

  // Dims per head that the rotary embedding turns: rotary_dim, or head_dim when it turns them all.
  int rotary_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  // Field by field: two specs read from the same config are equal (the predictors' setup caches key on the value).
  bool operator==(const ModelSpec&) const = default;

  // The precision of a request: `spec` (--dtype; 16 means default_dtype) when given, else default_precision.
  Precision precision_for(std::string_view spec) const;

  // Parameter counts (elements, not bytes), for weight bytes and memory fit.
  long max_kv_heads() const;  // over the attention layers (an MLA latent counts as 1)
  int layers_with(FfnKind ffn) const;
  int layers_with(MixerKind mixer) const;
  double attention_params(const LayerAttention& attention) const;  // q, k, v, o (+ biases)
  double mla_params() const;    // q_a/q_b (or q), kv_a, kv_b, o and the two latent norms
  double mamba_params() const;  // in_proj, conv1d, dt bias, A, D, gated norm, out_proj
  double mixer_params(const LayerSpec& layer) const;
  double dense_mlp_params() const;      // gate/up/down (+ biases)
  double expert_params() const;         // one routed expert
  double shared_expert_params() const;  // shared expert + its gate
  double router_params() const;
  double norm_params() const;  // all norms of one layer
  double layer_params(int layer) const;
  double embedding_params() const;      // token embedding table
  double lm_head_params() const;        // output projection (+ bias); 0 extra storage when tied
  double total_params() const;          // as stored: tied embeddings counted once
  double head_params() const;           // embedding table + LM head as stored (once when tied)
  double routed_expert_params() const;  // every routed expert of every layer
  double active_params() const;         // per token: total less the routed experts a token does not use

  // Bytes of all weights stored at `precision`: routed experts at its expert format, embeddings and LM head at its
  // unquantised type (quantised checkpoints keep them 16-bit), everything else at its weight format.
  double weight_bytes(const Precision& precision) const;
};

}  // namespace llmco2::model
