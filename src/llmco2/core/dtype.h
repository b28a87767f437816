// core/dtype.h - numeric data types and the per-tensor-class precision of a request (weights, activations, KV cache).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace llmco2 {

// fp4 is the bare e2m1 element (the tensor-core type of Blackwell); mxfp4 and nvfp4 are the stored block formats:
// e2m1 values plus one e8m0 scale per 32 (OCP MX, gpt-oss) or one fp8 e4m3 scale per 16 (NVIDIA ModelOpt).
enum class DType { fp32, tf32, bf16, fp16, fp8, int8, int4, fp4, mxfp4, nvfp4 };

// Bytes per stored element, block scales included: fp32 4, bf16/fp16 2, fp8/int8 1, int4/fp4 0.5,
// mxfp4 0.5 + 1/32 (4.25 bits), nvfp4 0.5 + 1/16 (4.5 bits).
double dtype_bytes(DType dtype);
std::string_view dtype_name(DType dtype);
// Parses "fp32", "float32", "bf16", "bfloat16", "fp16", "float16", "half", "fp8", "int8", "int4", "fp4", "mxfp4",
// "nvfp4". Throws Error.
DType parse_dtype(std::string_view text);
// The tensor-core type a dtype runs on: mxfp4/nvfp4 -> fp4, every other type itself.
DType tensor_dtype(DType dtype);
// 16-bit or wider (fp32, tf32, bf16, fp16).
bool is_wide(DType dtype);

// Scales of weight-only integer quantisation (AWQ, GPTQ): one fp16 scale per group of 128 weights.
inline constexpr double kWeightGroupElements = 128;
inline constexpr double kWeightGroupScaleBytes = 2;

// Precision per tensor class. The matrix units run at compute_dtype().
struct Precision {
  Precision() = default;
  Precision(DType w, DType a, DType kv, std::optional<DType> experts = std::nullopt)
      : weights(w), activations(a), kv_cache(kv), expert_weights(experts) {}

  DType weights = DType::bf16;
  DType activations = DType::bf16;
  DType kv_cache = DType::bf16;
  // Routed MoE experts when stored unlike the other weights (gpt-oss: MXFP4 experts, bf16 attention and embeddings).
  std::optional<DType> expert_weights;
  // 1-byte weights and activations scaled per block (DeepSeek-V3's recipe, quantization_config weight_block_size
  // [128, 128]: a scale per 128 x 128 weights and per 1 x 128 activations): the GEMM rescales its partial sums at
  // every 128-deep K block on the CUDA cores. Per-tensor, per-channel and per-token scales apply once, in the
  // epilogue. Spelled "-blk" (e.g. "wfp8-afp8-kvbf16-blk").
  bool block_scaled = false;

  // Weights (dense and routed) and activations all 1 byte (fp8 or int8): the GEMMs block scaling applies to.
  bool one_byte_gemms() const {
    return dtype_bytes(weights) == 1.0 && dtype_bytes(expert_dtype()) == 1.0 && dtype_bytes(activations) == 1.0;
  }
  // The type the matrix multiplications run in: the wider of weights and activations
  // (w4a16 dequantises to 16-bit; w8a8 runs int8 or fp8 units).
  DType compute_dtype() const;
  DType expert_dtype() const { return expert_weights.value_or(weights); }
  // Stored bytes per weight element, scales included: dtype_bytes, plus 2/128 for integer weights narrower than the
  // activations (weight-only AWQ/GPTQ groups; w4a16: 0.515625).
  double weight_bytes_per_element() const;
  double expert_bytes_per_element() const;
  // The type of the weights quantised checkpoints keep unquantised (embeddings, LM head): the weights' type when
  // 16-bit or wider, else the activations' when 16-bit or wider, else bf16.
  DType unquantised_dtype() const;
  // The type activations keep between kernels (norms, adds, all-reduces, GEMM outputs): the activations' own when
  // 16-bit or wider; w8a8 checkpoints keep them in the unquantised type and quantise each GEMM's input just before it
  // (vLLM's per-token dynamic fp8/int8 quantisation: scaled_fp8_quant, per_token_group_quant_fp8).
  DType stored_activation_dtype() const { return is_wide(activations) ? activations : unquantised_dtype(); }
  // The type attention's matrix products run in: fp8 only when the activations and the KV cache are fp8 (fp8 queries
  // over an fp8 cache, FlashAttention-3's fp8 path); otherwise 16 bits (no engine attends in int8 or fp4).
  DType attention_dtype() const {
    return activations == DType::fp8 && kv_cache == DType::fp8 ? DType::fp8 : stored_activation_dtype();
  }
  // Canonical text, e.g. "bf16" when all classes agree, else "wint8-abf16-kvfp8" or "wbf16-moemxfp4-abf16-kvbf16";
  // parse_precision reads it back.
  std::string to_string() const;
  bool operator==(const Precision&) const = default;
};

// Stored bytes per element of `weights` used with `activations` (see Precision::weight_bytes_per_element).
double stored_weight_bytes(DType weights, DType activations);

// Parses a precision spec, case-insensitive. Accepted forms:
//   "bf16"                         a 16- or 32-bit type: all three tensor classes
//   "fp8", "int8", "nvfp4", "fp4"  the weights and activations (W8A8, W4A4); "int4", "mxfp4": the weights only
//                                  (W4A16). The KV cache stays 16-bit (`default16`): name it to change it (kvfp8)
//   "w8a16kv16", "w4a16"           bit widths per class (kv: the activations' type when 16-bit or wider, else
//                                  `default16`); 16 means `default16`, 8 int8, 4 int4, 32 fp32
//   "wfp8afp8kvfp8"                dtype names per class
//   "wbf16-moemxfp4-abf16-kvbf16"  classes separated by '-' (what to_string prints); "moe" sets the routed experts
//   "wfp8-afp8-kvbf16-blk"         "blk": block-scaled (Precision::block_scaled), for 1-byte weights and activations
// Throws Error naming the spec and what was expected.
Precision parse_precision(std::string_view spec, DType default16);

// A model's precision: the spec when given, else `model_default` (the config's torch_dtype) for every class.
Precision precision_or_default(std::string_view spec, DType model_default);
// The spec when given (16 meaning `default16`), else `model_default` (e.g. a quantised checkpoint's precision).
Precision precision_or_default(std::string_view spec, const Precision& model_default, DType default16);

}  // namespace llmco2
