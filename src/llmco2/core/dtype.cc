// core/dtype.cc - data type names, sizes and the precision spec parser.
#include "core/dtype.h"

#include <array>
#include <utility>

#include "core/error.h"

namespace llmco2 {
namespace {

constexpr std::array<std::pair<std::string_view, DType>, 12> kNames{{
    {"fp32", DType::fp32}, {"float32", DType::fp32}, {"tf32", DType::tf32},
    {"bf16", DType::bf16}, {"bfloat16", DType::bf16}, {"fp16", DType::fp16},
    {"float16", DType::fp16}, {"half", DType::fp16}, {"fp8", DType::fp8},
    {"int8", DType::int8}, {"int4", DType::int4}, {"mxfp4", DType::int4},
}};

// Width rank used to pick the compute type: wider wins.
int width_rank(DType d) {
  switch (d) {
    case DType::fp32: case DType::tf32: return 3;
    case DType::bf16: case DType::fp16: return 2;
    case DType::fp8: case DType::int8: return 1;
    case DType::int4: return 0;
  }
  return 0;
}

DType parse_class_token(std::string_view spec, std::string_view token, DType default16) {
  if (token == "16") return default16;
  if (token == "32") return DType::fp32;
  if (token == "8") return DType::int8;
  if (token == "4") return DType::int4;
  for (const auto& [name, dtype] : kNames)
    if (name == token) return dtype;
  fail("--dtype '{}': unknown precision '{}' (expected 4, 8, 16, 32 or fp32, bf16, fp16, fp8, int8, int4)", spec,
       token);
}

// Splits "w<X>a<Y>kv<Z>" into its tokens; returns false if the text has another shape.
bool split_classes(std::string_view spec, std::string_view& w, std::string_view& a, std::string_view& kv) {
  if (spec.size() < 2 || spec[0] != 'w') return false;
  const auto a_pos = spec.find('a', 1);
  if (a_pos == std::string_view::npos) return false;
  w = spec.substr(1, a_pos - 1);
  const auto kv_pos = spec.find("kv", a_pos + 1);
  a = spec.substr(a_pos + 1, kv_pos == std::string_view::npos ? std::string_view::npos : kv_pos - a_pos - 1);
  kv = kv_pos == std::string_view::npos ? a : spec.substr(kv_pos + 2);
  return !w.empty() && !a.empty() && !kv.empty();
}

}  // namespace

double dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::fp32: case DType::tf32: return 4.0;
    case DType::bf16: case DType::fp16: return 2.0;
    case DType::fp8: case DType::int8: return 1.0;
    case DType::int4: return 0.5;
  }
  return 0.0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp8: return "fp8";
    case DType::int8: return "int8";
    case DType::int4: return "int4";
  }
  return "?";
}

DType parse_dtype(std::string_view text) {
  for (const auto& [name, dtype] : kNames)
    if (name == text) return dtype;
  fail("unknown data type '{}' (expected fp32, bf16, fp16, fp8, int8 or int4)", text);
}

DType Precision::compute_dtype() const {
  if (width_rank(weights) > width_rank(activations)) return weights;
  return activations;
}

std::string Precision::to_string() const {
  if (weights == activations && activations == kv_cache) return std::string(dtype_name(weights));
  return fmt::format("w{}-a{}-kv{}", dtype_name(weights), dtype_name(activations), dtype_name(kv_cache));
}

Precision parse_precision(std::string_view spec, DType default16) {
  std::string_view w, a, kv;
  if (!split_classes(spec, w, a, kv)) {
    for (const auto& [name, dtype] : kNames)
      if (name == spec) return {dtype, dtype, dtype};
    fail("--dtype '{}': expected a data type (bf16, fp16, fp8, int8, ...) or per-class bits like w8a16kv16", spec);
  }
  return {parse_class_token(spec, w, default16), parse_class_token(spec, a, default16),
          parse_class_token(spec, kv, default16)};
}

Precision precision_or_default(std::string_view spec, DType model_default) {
  if (spec.empty()) return {model_default, model_default, model_default};
  return parse_precision(spec, model_default);
}

}  // namespace llmco2
