// hardware/gpu.h - one GPU type: dense peak throughput per data type, memory, links, power and die facts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "hardware/module.h"

namespace llmco2::hardware {

struct Link {
  std::string kind;                  // "nvlink4", "pcie-gen4-x16", ...
  double bandwidth_bytes_per_s = 0;  // per direction (half the vendor's bidirectional figure)
  int max_gpus = 0;                  // GPUs one link domain joins (a bridge joins 2)
  bool operator==(const Link&) const = default;
};

// The throughput a kernel class can reach: the tensor (matrix) units at a data type, or the vector units.
struct ComputePeak {
  DType dtype = DType::fp16;  // the type actually used after fallbacks
  double ops_per_s = 0;
  std::string note;               // non-empty when the requested type fell back, e.g. "t4 has no bf16: runs fp16"
  DType requested = DType::fp16;  // the type asked for
  // Matrix math on NVIDIA's CUDA cores (no tensor units for the type: fp32, tf32 before Ampere, bf16 before Ampere).
  // AMD CDNA and Gaudi run fp32 matmuls on their matrix units: false there.
  bool cuda_cores = false;
};

// A request's precision as a serving engine runs it on one GPU type, with a sentence per change.
struct EnginePrecision {
  Precision precision;
  std::vector<std::string> notes;  // e.g. "a100-80gb-sxm has no fp8 tensor cores: ... weight-only (w8a16) ..."
};

struct Gpu {
  std::string id;
  std::string name;
  std::vector<std::string> nvidia_smi_names;
  std::vector<std::string> aliases;
  std::string vendor;
  std::string architecture;
  std::map<DType, double> dense_peak_ops_per_s;  // tensor-core peak per type; fp32 is the vector (CUDA-core) peak
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;
  std::optional<Link> gpu_link;  // NVLink / Infinity Fabric; absent on PCIe-only cards
  Link host_link;                // PCIe
  double tdp_w = 0;
  double idle_w = 0;
  std::optional<double> min_power_limit_w;  // the lowest power limit the board accepts (nvidia-smi -q), where sourced
  std::optional<double> max_sm_clock_mhz;   // the highest SM clock it runs at (nvidia-smi's Max Clocks), where sourced
  // The SM clock its tensor peaks are quoted at, where below the maximum (H100 SXM: 1830 of 1980 MHz); else the
  // maximum. tensor_peak_clock() gives it.
  std::optional<double> tensor_peak_clock_mhz;
  std::optional<double> tensor_peak_clock() const {
    return tensor_peak_clock_mhz ? tensor_peak_clock_mhz : max_sm_clock_mhz;
  }
  std::optional<double> die_area_mm2;
  std::string process;
  std::optional<double> process_nm;
  std::optional<double> llmcarbon_cpa_kgco2e_per_cm2;
  // The vendor's product carbon footprint of one GPU (cradle to gate), where the vendor publishes one.
  std::optional<double> vendor_pcf_kgco2e;
  std::vector<std::string> notes;
  std::string source;  // file it was read from

  // Peak of the matrix units for `dtype`, falling back to the nearest supported wider type
  // (bf16 -> fp16 on T4, fp8 -> fp16 on A100, int4 -> int8 on H100).
  ComputePeak matrix_peak(DType dtype) const;
  // Whether the matrix units run `dtype` natively (mxfp4/nvfp4 run on fp4 units).
  bool has_tensor_units(DType dtype) const;
  // bf16 where the GPU has bf16 tensor cores, else fp16 (vLLM casts bfloat16 to float16 before compute capability
  // 8.0): the 16-bit type engines run what is not stored narrow.
  DType sixteen_bit() const;
  // What an engine (vLLM, TensorRT-LLM) runs for `requested` here: activations of a type the tensor cores lack are
  // kept 16-bit and the weights run weight-only (fp8 on an A100: w8a16, 1-byte weights dequantised to bf16 as
  // vLLM's Marlin fp8 kernels do; MXFP4/NVFP4 before Blackwell: w4a16). On GPUs without bf16 tensor cores bf16
  // becomes fp16 when the engine casts it (`casts_bf16_to_fp16`, vLLM), else it stays bf16 and its matrix kernels
  // run on the CUDA cores (PyTorch eager, HF transformers).
  EnginePrecision engine_precision(const Precision& requested, bool casts_bf16_to_fp16 = true) const;
  // Peak of the vector units (norms, softmax, element-wise kernels): the fp32 CUDA-core rate.
  double vector_peak_ops_per_s() const;
  // The link `gpus` GPUs of this type talk over: the GPU link when it joins that many, else PCIe.
  const Link& network_link(int gpus) const;
  // At least as good as `other` on every datasheet figure a request uses, the power limit included: the datasheet
  // peaks are boost-clock figures, which a board holds under load only within its power limit (a 250 W A100 PCIe
  // lowers its clocks on GEMM-bound work where the 400 W SXM does not; docs/simulator.md, Power). Such a GPU is never
  // slower on the same work. The link compared is the one `gpus` GPUs of each type talk over.
  bool at_least_as_good_as(const Gpu& other, int gpus = 2) const;
  // Field by field (the predictors' setup caches key on the value).
  bool operator==(const Gpu&) const = default;
};

}  // namespace llmco2::hardware
