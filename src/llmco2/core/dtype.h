// core/dtype.h - numeric data types and the per-tensor-class precision of a request (weights, activations, KV cache).
#pragma once

#include <string>
#include <string_view>

namespace llmco2 {

enum class DType { fp32, tf32, bf16, fp16, fp8, int8, int4 };

// Bytes per element: fp32 4, bf16/fp16 2, fp8/int8 1, int4 0.5.
double dtype_bytes(DType dtype);
std::string_view dtype_name(DType dtype);
// Parses "fp32", "float32", "bf16", "bfloat16", "fp16", "float16", "half", "fp8", "int8", "int4". Throws Error.
DType parse_dtype(std::string_view text);

// Precision per tensor class. The matrix units run at compute_dtype().
struct Precision {
  DType weights = DType::bf16;
  DType activations = DType::bf16;
  DType kv_cache = DType::bf16;

  // The type the matrix multiplications run in: the wider of weights and activations
  // (w4a16 dequantises to 16-bit; w8a8 runs int8 or fp8 units).
  DType compute_dtype() const;
  // Canonical text, e.g. "bf16" when all three agree, else "wint8-abf16-kvfp8".
  std::string to_string() const;
  bool operator==(const Precision&) const = default;
};

// Parses a precision spec. Accepted forms:
//   "bf16"                    all three tensor classes
//   "w8a16kv16", "w4a16"      bit widths per class (kv defaults to a); 16 means `default16`, 8 int8, 4 int4, 32 fp32
//   "wfp8afp8kvfp8"           dtype names per class
// Throws Error naming the spec and what was expected.
Precision parse_precision(std::string_view spec, DType default16);

// A model's precision: the spec when given, else `model_default` (the config's torch_dtype) for every class.
Precision precision_or_default(std::string_view spec, DType model_default);

}  // namespace llmco2
