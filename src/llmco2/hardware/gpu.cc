// hardware/gpu.cc - data type fallbacks and link choice.
#include "hardware/gpu.h"

#include <fmt/format.h>

#include "core/error.h"

namespace llmco2 {
namespace {

// Wider types a kernel can run in when the GPU lacks `dtype`, nearest first.
std::vector<DType> fallbacks(DType dtype) {
  switch (dtype) {
    case DType::int4: return {DType::int8, DType::fp16, DType::fp32};
    case DType::int8: return {DType::fp16, DType::fp32};
    case DType::fp8: return {DType::fp16, DType::fp32};
    case DType::bf16: return {DType::fp16, DType::fp32};
    case DType::fp16: return {DType::fp32};
    case DType::tf32: return {DType::fp32};
    case DType::fp32: return {};
  }
  return {};
}

}  // namespace

ComputePeak Gpu::matrix_peak(DType dtype) const {
  if (auto it = dense_peak_ops_per_s.find(dtype); it != dense_peak_ops_per_s.end()) return {dtype, it->second, ""};
  for (const DType wider : fallbacks(dtype)) {
    if (auto it = dense_peak_ops_per_s.find(wider); it != dense_peak_ops_per_s.end())
      return {wider, it->second,
              fmt::format("{} has no {} units: matrix kernels run in {}", id, dtype_name(dtype), dtype_name(wider))};
  }
  fail("{}: no peak throughput for {} or any wider type", source, dtype_name(dtype));
}

double Gpu::vector_peak_ops_per_s() const { return matrix_peak(DType::fp32).ops_per_s; }

const Link& Gpu::network_link(int gpus) const {
  if (gpu_link && gpus <= gpu_link->max_gpus) return *gpu_link;
  return host_link;
}

}  // namespace llmco2
