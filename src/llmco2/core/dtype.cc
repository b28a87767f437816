// core/dtype.cc - data type names, sizes and the precision spec parser.
#include "core/dtype.h"

#include <cctype>

#include <array>
#include <utility>
#include <vector>

#include "core/error.h"

namespace llmco2 {
namespace {

constexpr std::array<std::pair<std::string_view, DType>, 14> kNames{{
    {"fp32", DType::fp32},
    {"float32", DType::fp32},
    {"tf32", DType::tf32},
    {"bf16", DType::bf16},
    {"bfloat16", DType::bf16},
    {"fp16", DType::fp16},
    {"float16", DType::fp16},
    {"half", DType::fp16},
    {"fp8", DType::fp8},
    {"int8", DType::int8},
    {"int4", DType::int4},
    {"fp4", DType::fp4},
    {"mxfp4", DType::mxfp4},
    {"nvfp4", DType::nvfp4},
}};

constexpr std::string_view kExpected = "4, 8, 16, 32 or fp32, bf16, fp16, fp8, int8, int4, fp4, mxfp4, nvfp4";

// Width rank used to pick the compute type: wider wins.
int width_rank(DType d) {
  switch (d) {
    case DType::fp32:
    case DType::tf32:
      return 3;
    case DType::bf16:
    case DType::fp16:
      return 2;
    case DType::fp8:
    case DType::int8:
      return 1;
    case DType::int4:
    case DType::fp4:
    case DType::mxfp4:
    case DType::nvfp4:
      return 0;
  }
  return 0;
}

std::optional<DType> find_name(std::string_view text) {
  for (const auto& [name, dtype] : kNames)
    if (name == text) return dtype;
  return std::nullopt;
}

DType parse_class_token(std::string_view spec, std::string_view token, DType default16) {
  if (token == "16") return default16;
  if (token == "32") return DType::fp32;
  if (token == "8") return DType::int8;
  if (token == "4") return DType::int4;
  if (auto dtype = find_name(token)) return *dtype;
  fail("--dtype '{}': unknown precision '{}' (expected {})", spec, token, kExpected);
}

// Splits "w<X>a<Y>kv<Z>" into its tokens; returns false if the text has another shape.
bool split_classes(std::string_view spec, std::string_view& w, std::string_view& a, std::string_view& kv) {
  if (spec.size() < 2 || spec[0] != 'w') return false;
  const auto a_pos = spec.find('a', 1);
  if (a_pos == std::string_view::npos) return false;
  w = spec.substr(1, a_pos - 1);
  const auto kv_pos = spec.find("kv", a_pos + 1);
  a = spec.substr(a_pos + 1, kv_pos == std::string_view::npos ? std::string_view::npos : kv_pos - a_pos - 1);
  kv = kv_pos == std::string_view::npos ? std::string_view() : spec.substr(kv_pos + 2);
  return !w.empty() && !a.empty() && (kv_pos == std::string_view::npos || !kv.empty());
}

std::vector<std::string_view> split_dashes(std::string_view spec) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const auto end = spec.find('-', start);
    parts.push_back(spec.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The KV cache of a spec that does not name it: the activations' type when 16-bit or wider, else 16 bits (engines
// quantise the cache only when asked).
DType unnamed_kv(DType activations, DType default16) { return is_wide(activations) ? activations : default16; }

// "wint8-abf16-kvfp8", "wbf16-moemxfp4-abf16-kvbf16": one class per part, kv as unnamed_kv when absent.
Precision parse_dashed(std::string_view spec, DType default16) {
  std::optional<DType> w, a, kv, moe;
  bool block_scaled = false;
  for (const auto part : split_dashes(spec)) {
    if (part == "blk" && !block_scaled) {
      block_scaled = true;
      continue;
    }
    auto take = [&](std::string_view prefix, std::optional<DType>& slot) {
      if (!part.starts_with(prefix) || slot) return false;
      slot = parse_class_token(spec, part.substr(prefix.size()), default16);
      return true;
    };
    if (!take("moe", moe) && !take("kv", kv) && !take("w", w) && !take("a", a))
      fail(
          "--dtype '{}': unexpected part '{}' (expected w<type>, a<type>, optional kv<type>, moe<type> and blk, "
          "separated by '-')",
          spec, part);
  }
  if (!w || !a) fail("--dtype '{}': both the weights (w...) and the activations (a...) are needed", spec);
  Precision p{*w, *a, kv.value_or(unnamed_kv(*a, default16)), moe};
  if (block_scaled && !p.one_byte_gemms())
    fail("--dtype '{}': 'blk' (block-scaled) needs 1-byte weights and activations (fp8 or int8)", spec);
  p.block_scaled = block_scaled;
  return p;
}

}  // namespace

double dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::fp32:
    case DType::tf32:
      return 4.0;
    case DType::bf16:
    case DType::fp16:
      return 2.0;
    case DType::fp8:
    case DType::int8:
      return 1.0;
    case DType::int4:
    case DType::fp4:
      return 0.5;
    case DType::mxfp4:
      return 0.5 + 1.0 / 32;  // e8m0 scale per 32 values
    case DType::nvfp4:
      return 0.5 + 1.0 / 16;  // e4m3 scale per 16 values (the per-tensor fp32 scale is negligible)
  }
  return 0.0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return "fp32";
    case DType::tf32:
      return "tf32";
    case DType::bf16:
      return "bf16";
    case DType::fp16:
      return "fp16";
    case DType::fp8:
      return "fp8";
    case DType::int8:
      return "int8";
    case DType::int4:
      return "int4";
    case DType::fp4:
      return "fp4";
    case DType::mxfp4:
      return "mxfp4";
    case DType::nvfp4:
      return "nvfp4";
  }
  return "?";
}

DType parse_dtype(std::string_view text) {
  if (auto dtype = find_name(text)) return *dtype;
  fail("unknown data type '{}' (expected fp32, bf16, fp16, fp8, int8, int4, fp4, mxfp4 or nvfp4)", text);
}

DType tensor_dtype(DType dtype) { return dtype == DType::mxfp4 || dtype == DType::nvfp4 ? DType::fp4 : dtype; }

bool is_wide(DType dtype) { return width_rank(dtype) >= 2; }

double stored_weight_bytes(DType weights, DType activations) {
  const bool integer = weights == DType::int4 || weights == DType::int8;
  const bool weight_only = width_rank(activations) > width_rank(weights);
  return dtype_bytes(weights) + (integer && weight_only ? kWeightGroupScaleBytes / kWeightGroupElements : 0.0);
}

DType Precision::compute_dtype() const {
  if (width_rank(weights) > width_rank(activations)) return weights;
  return activations;
}

double Precision::weight_bytes_per_element() const { return stored_weight_bytes(weights, activations); }

double Precision::expert_bytes_per_element() const { return stored_weight_bytes(expert_dtype(), activations); }

DType Precision::unquantised_dtype() const {
  if (is_wide(weights)) return weights;
  return is_wide(activations) ? activations : DType::bf16;
}

std::string Precision::to_string() const {
  // A single name only where parsing it gives this precision back (16- and 32-bit types set every class).
  if (weights == activations && activations == kv_cache && !expert_weights && !block_scaled && is_wide(weights))
    return std::string(dtype_name(weights));
  const std::string moe = expert_weights ? fmt::format("-moe{}", dtype_name(*expert_weights)) : "";
  return fmt::format("w{}{}-a{}-kv{}{}", dtype_name(weights), moe, dtype_name(activations), dtype_name(kv_cache),
                     block_scaled ? "-blk" : "");
}

namespace {

// What a single name sets: the weights, and the activations where the format has them (fp8, int8 and NVFP4 GEMMs
// take quantised activations; int4 and MXFP4 checkpoints, AWQ/GPTQ and gpt-oss, are weight-only). The KV cache stays
// 16-bit: vLLM, SGLang and TGI quantise it only when asked (--kv-cache-dtype), so a narrow cache must be named (kv8,
// kvfp8). A 16- or 32-bit name sets every class.
Precision single_name(DType dtype, DType default16) {
  if (is_wide(dtype)) return {dtype, dtype, dtype};
  const bool weight_only = dtype == DType::int4 || dtype == DType::mxfp4;
  return {dtype, weight_only ? default16 : dtype, default16};
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Precision parse_precision(std::string_view spec_as_given, DType default16) {
  const std::string lowered = lowercase(spec_as_given);  // FP8, BF16, W8A16: names are case-insensitive
  const std::string_view spec = lowered;
  if (spec.find('-') != std::string_view::npos) return parse_dashed(spec, default16);
  if (auto dtype = find_name(spec)) return single_name(*dtype, default16);
  std::string_view w, a, kv;
  if (!split_classes(spec, w, a, kv))
    fail("--dtype '{}': expected a data type (bf16, fp16, fp8, int8, ...) or per-class bits like w8a16kv16", spec);
  const DType activations = parse_class_token(spec, a, default16);
  return {parse_class_token(spec, w, default16), activations,
          kv.empty() ? unnamed_kv(activations, default16) : parse_class_token(spec, kv, default16)};
}

Precision precision_or_default(std::string_view spec, DType model_default) {
  if (spec.empty()) return {model_default, model_default, model_default};
  return parse_precision(spec, model_default);
}

Precision precision_or_default(std::string_view spec, const Precision& model_default, DType default16) {
  if (spec.empty()) return model_default;
  Precision p = parse_precision(spec, default16);
  // The checkpoint's block scales stay with its 1-byte weights and activations: "fp8" on a block-scaled checkpoint
  // names its types, not another scaling.
  if (model_default.block_scaled && p.weights == model_default.weights && p.activations == model_default.activations &&
      p.expert_dtype() == model_default.expert_dtype())
    p.block_scaled = true;
  return p;
}

}  // namespace llmco2
