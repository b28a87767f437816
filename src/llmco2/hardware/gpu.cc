// hardware/gpu.cc - data type fallbacks, the engine's precision on a GPU and link choice.
#include "hardware/gpu.h"

#include <fmt/format.h>

#include "core/error.h"

namespace llmco2::hardware {
namespace {

// The faster of the GPU's 16-bit tensor types by its datasheet peak (bf16 on a Gaudi 3, whose fp16 peak is a quarter
// of its bf16 one; fp16 where the two are equal or bf16 is missing).
DType fastest_sixteen_bit(const std::map<DType, double>& peaks) {
  const auto bf16 = peaks.find(DType::bf16), fp16 = peaks.find(DType::fp16);
  if (bf16 == peaks.end()) return DType::fp16;
  return fp16 == peaks.end() || bf16->second > fp16->second ? DType::bf16 : DType::fp16;
}

// Wider types a kernel can run in when the GPU lacks `dtype`, nearest first; a narrow type falls back to the GPU's
// fastest 16-bit type.
std::vector<DType> fallbacks(DType dtype, const std::map<DType, double>& peaks) {
  const DType sixteen = fastest_sixteen_bit(peaks);
  switch (dtype) {
    case DType::int4:
      return {DType::int8, sixteen, DType::fp32};
    case DType::fp4:
    case DType::mxfp4:
    case DType::nvfp4:
      return {sixteen, DType::fp32};
    case DType::int8:
      return {sixteen, DType::fp32};
    case DType::fp8:
      return {sixteen, DType::fp32};
    // bf16 cannot enter fp16 tensor cores (other exponent width): cuBLAS runs it on the CUDA cores in fp32 math.
    case DType::bf16:
      return {DType::fp32};
    case DType::fp16:
      return {DType::fp32};
    case DType::tf32:
      return {DType::fp32};
    case DType::fp32:
      return {};
  }
  return {};
}

void replace_bf16(Precision& p) {
  for (DType* d : {&p.weights, &p.activations, &p.kv_cache})
    if (*d == DType::bf16) *d = DType::fp16;
  if (p.expert_weights == DType::bf16) p.expert_weights = DType::fp16;
}

std::string weight_only_note(const Gpu& gpu, const Precision& requested, DType compute) {
  const std::string weights =
      requested.expert_weights && *requested.expert_weights != requested.weights
          ? fmt::format("{} (experts {})", dtype_name(requested.weights), dtype_name(*requested.expert_weights))
          : std::string(dtype_name(requested.weights));
  return fmt::format(
      "{} has no {} tensor cores: activations stay {} and the {} weights run weight-only (streamed "
      "at their size, dequantised to {} before each matmul, as vLLM's Marlin kernels do)",
      gpu.id, dtype_name(tensor_dtype(requested.activations)), dtype_name(compute), weights, dtype_name(compute));
}

}  // namespace

ComputePeak Gpu::matrix_peak(DType dtype) const {
  const DType units = tensor_dtype(dtype);
  const bool nvidia = vendor == "NVIDIA";
  if (auto it = dense_peak_ops_per_s.find(units); it != dense_peak_ops_per_s.end())
    return {units, it->second, "", dtype, nvidia && units == DType::fp32};
  for (const DType wider : fallbacks(dtype, dense_peak_ops_per_s)) {
    if (auto it = dense_peak_ops_per_s.find(wider); it != dense_peak_ops_per_s.end())
      return {wider, it->second,
              fmt::format("{} has no {} units: matrix kernels run in {}", id, dtype_name(units), dtype_name(wider)),
              dtype, nvidia && wider == DType::fp32};
  }
  fail("{}: no peak throughput for {} or any wider type", source, dtype_name(dtype));
}

bool Gpu::has_tensor_units(DType dtype) const { return dense_peak_ops_per_s.contains(tensor_dtype(dtype)); }

DType Gpu::sixteen_bit() const { return has_tensor_units(DType::bf16) ? DType::bf16 : DType::fp16; }

EnginePrecision Gpu::engine_precision(const Precision& requested, bool casts_bf16_to_fp16) const {
  EnginePrecision out{requested, {}};
  Precision as_fp16 = requested;
  replace_bf16(as_fp16);
  const bool has_bf16 = has_tensor_units(DType::bf16);
  if (!has_bf16 && as_fp16 != requested) {
    if (casts_bf16_to_fp16) {
      out.precision = as_fp16;
      out.notes.push_back(fmt::format("{} has no bf16 tensor cores: the engine runs bf16 tensors as fp16", id));
    } else {
      out.notes.push_back(
          fmt::format("{} has no bf16 tensor cores and the engine keeps bf16: its matrix kernels run "
                      "on the CUDA cores at the fp32 rate",
                      id));
    }
  }
  const bool emulated_bf16 = !has_bf16 && out.precision.activations == DType::bf16;
  if (!emulated_bf16 && !is_wide(out.precision.activations) && !has_tensor_units(out.precision.activations)) {
    const DType compute = sixteen_bit();
    out.notes.push_back(weight_only_note(*this, requested, compute));
    out.precision.activations = compute;
    out.precision.block_scaled = false;  // weight-only kernels dequantise per group, with no block-scaled GEMM
  }
  return out;
}

double Gpu::vector_peak_ops_per_s() const { return matrix_peak(DType::fp32).ops_per_s; }

const Link& Gpu::network_link(int gpus) const {
  if (gpu_link && gpus <= gpu_link->max_gpus) return *gpu_link;
  return host_link;
}

bool Gpu::at_least_as_good_as(const Gpu& other, int gpus) const {
  if (tdp_w < other.tdp_w) return false;
  for (DType t : {DType::fp32, DType::bf16, DType::fp16, DType::fp8, DType::int8})
    if (matrix_peak(t).ops_per_s < other.matrix_peak(t).ops_per_s) return false;
  if (memory_bandwidth_bytes_per_s < other.memory_bandwidth_bytes_per_s || memory_bytes < other.memory_bytes)
    return false;
  return gpus <= 1 || network_link(gpus).bandwidth_bytes_per_s >= other.network_link(gpus).bandwidth_bytes_per_s;
}

}  // namespace llmco2::hardware
