// sim/kernel_time.cc - kernel seconds from work, datasheet roofs and achievable efficiencies.
#include "sim/kernel_time.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/paths.h"
#include "hardware/gpu.h"

namespace llmco2::sim {

double kernel_time_s(const KernelWork& w, const DeviceRoofs& roofs, const KernelEfficiency& e,
                     const NetworkEfficiency& net) {
  if (w.kind == KernelClass::network) return allreduce_s(w, roofs, net, nullptr);
  double compute_s = 0;
  const double share = precision_share(w, e);  // both roofs
  if (w.kind == KernelClass::vector) {
    compute_s = w.ops > 0 ? w.ops / (w.peak_ops_per_s * e.vector_efficiency) : 0.0;
  } else {
    // Tensor cores work on whole row tiles: fewer rows than a tile cost the tile. Attention on tensor cores is not
    // padded: paged decode kernels (FlashDecoding's split-KV, FlashInfer, vLLM's paged attention) pack a KV head's
    // query rows and split the context across the SMs, so a decode step at batch 1 reads its cache at the memory
    // roof instead of paying a 36-row tile per query row.
    const bool simt = w.simt_efficiency > 0;
    const double efficiency = simt ? w.simt_efficiency : tensor_efficiency(w, e);
    const double tile = simt                               ? simt_tile_rows(w.simt_efficiency, e.gemm_tile_rows)
                        : w.kind == KernelClass::attention ? 1.0
                        : w.dequant_ops > 0                ? kWeightOnlyTileRows
                                                           : e.gemm_tile_rows;
    // rows >= tile: tile / rows <= 1, so the padding is 1 without dividing.
    const double padding = w.rows >= tile ? 1.0 : std::max(1.0, tile / std::max(w.rows, 1e-9));
    const double tensor_ops = std::max(0.0, w.ops - w.dequant_ops);
    compute_s = tensor_ops > 0 ? tensor_ops * padding / (w.peak_ops_per_s * efficiency) : 0.0;
    if (w.dequant_ops > 0 && w.vector_peak_ops_per_s > 0)
      compute_s = std::max(compute_s, w.dequant_ops / (w.vector_peak_ops_per_s * e.gemm_efficiency));
  }
  const double memory_eff = e.memory_efficiency * share * w.mem_bytes / (w.mem_bytes + e.memory_half_bytes);
  const double memory_s = w.mem_bytes > 0 ? w.mem_bytes / (roofs.memory_bytes_per_s * memory_eff) : 0.0;
  if (w.latent) return e.mla_floor_s + std::max({compute_s, memory_s, w.keys_per_query * e.mla_key_s});
  const double floor_s = w.keys_per_query > 0 ? e.attention_floor_s : e.kernel_floor_s;
  return floor_s + std::max(compute_s, memory_s);
}

double allreduce_s(const KernelWork& w, const DeviceRoofs& roofs, const NetworkEfficiency& net,
                   const DirectAllReduceEfficiency* direct) {
  if (roofs.tp_gpus <= 1 || w.net_bytes <= 0) return 0.0;
  const double ring_s = net.call_latency_s + 2.0 * (roofs.tp_gpus - 1) * net.step_latency_s +
                        w.net_bytes / (roofs.link_bytes_per_s * net.bus_efficiency);
  if (direct == nullptr) return ring_s;
  const double direct_s =
      direct->direct_latency_s + w.net_bytes / (roofs.link_bytes_per_s * direct->direct_bus_efficiency);
  return std::min(ring_s, direct_s);
}

double roofline_time_s(const KernelWork& w, const DeviceRoofs& roofs) {
  if (w.kind == KernelClass::network)
    return roofs.tp_gpus > 1 && roofs.link_bytes_per_s > 0 ? w.net_bytes / roofs.link_bytes_per_s : 0.0;
  const double compute_s = w.ops > 0 ? w.ops / w.peak_ops_per_s : 0.0;
  return std::max(compute_s, w.mem_bytes / roofs.memory_bytes_per_s);
}

std::string gpu_generation(const Gpu& gpu) {
  std::string word;
  for (char ch : gpu.architecture) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) break;
    word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  if (word == "amd") return "cdna";  // "AMD CDNA 3 (...)"
  return word;
}

std::string link_class(const Gpu& gpu, int gpus) {
  if (gpu.gpu_link && gpu.gpu_link->max_gpus >= 4 && gpus <= gpu.gpu_link->max_gpus) return "nvswitch";
  if (gpu.gpu_link && gpu.gpu_link->max_gpus == 2 && gpus == 2) return "nvlink-pair";
  return "pcie";
}

namespace {

template <typename Value>
const Value& entry_or_default(const std::map<std::string, Value>& entries, const std::string& name, const char* what) {
  auto it = entries.find(name);
  if (it == entries.end()) it = entries.find("default");
  if (it == entries.end()) fail("kernel parameters: no {} entry '{}' and no 'default'", what, name);
  return it->second;
}

}  // namespace

const KernelEfficiency& KernelParams::generation(const std::string& name) const {
  return entry_or_default(generations, name, "generation");
}

const KernelEfficiency& KernelParams::efficiency(const std::string& generation_name, const std::string& gpu_id) const {
  const auto it = gpus.find(gpu_id);
  return it != gpus.end() ? it->second : generation(generation_name);
}

const NetworkEfficiency& KernelParams::network(const std::string& link_class_name) const {
  return entry_or_default(networks, link_class_name, "link class");
}

const NetworkEfficiency& KernelParams::network(const std::string& generation_name,
                                               const std::string& link_class_name) const {
  const auto it = networks.find(generation_name + "/" + link_class_name);
  return it != networks.end() ? it->second : network(link_class_name);
}

const DirectAllReduceEfficiency& KernelParams::direct_allreduce(const std::string& generation_name,
                                                                const std::string& kernel) const {
  if (!kernel.empty()) {
    const auto it = direct.find(generation_name + "/" + kernel);
    if (it != direct.end()) return it->second;
  }
  return entry_or_default(direct, generation_name, "direct all-reduce");
}

const std::vector<ParamRange>& kernel_param_ranges() {
  static const std::vector<ParamRange> ranges = {
      {"gemm_efficiency", 0.4, 0.85,
       "cuBLAS reaches ~0.7-0.8 of the dense fp16/bf16 tensor peak on large GEMMs (NVIDIA Matrix Multiplication "
       "Background guide, docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication; Vidur's H100 "
       "mlp_up_proj of Llama-2-7B at 4096 tokens: 0.76 of 989 TFLOP/s)"},
      {"gemm_tile_rows", 8, 64,
       "cuBLAS/CUTLASS pick 8-64-row tiles (or split-K GEMV kernels) for skinny GEMMs; fewer rows cost a whole tile "
       "(same guide, "
       "tile quantization)"},
      {"attention_efficiency", 0.3, 0.75,
       "FlashAttention-2 reaches 50-73% of the A100 peak (Dao 2023, arXiv:2307.08691); FlashAttention-3 ~75% of "
       "H100 fp16 (Shah et al. 2024, arXiv:2407.08608), both at long sequences"},
      {"attention_half_keys", 0, 8192,
       "FlashAttention's forward throughput grows with the sequence up to several thousand tokens (Dao 2023 and Shah "
       "et "
       "al. 2024 benchmark 512-16k); AIConfigurator's H100 tables: 0.15-0.25 of the peak at 512 tokens, 0.6 at 16k. A "
       "128-row query tile's fixed work worth up to 8k keys bounds it; 0: no ramp"},
      {"attention_floor_s", 1e-6, 3e-5,
       "an engine's attention call runs the KV-cache write, the kernel and (split-KV decode) a combine: ~5-15 us on "
       "A100/H100 at tiny sizes (AIConfigurator's tables at batch 1, 1-token context)"},
      {"mla_efficiency", 0.1, 0.9,
       "MLA decode kernels against the bf16 peak: FlashMLA 660 of 990 TFLOP/s on H800 SXM5 when compute-bound "
       "(0.67; deepseek-ai/FlashMLA README, 2025-04-22 update); AIConfigurator's decode tables: 0.5-0.68 at 128 "
       "heads on Hopper and Blackwell, 0.3 on A100 (TensorRT-LLM 1.0), 0.14-0.28 for SGLang's Triton MLA on Ada and "
       "the RTX PRO 6000 (docs/history/aiconfigurator-mla-moe-study.md)"},
      {"mla_half_keys", 0, 8192,
       "as attention_half_keys, for MLA decode: keys per query at which half of mla_efficiency is reached (the "
       "same tables' per-engine fits: ~150-600 on Hopper and Blackwell)"},
      {"mla_floor_s", 1e-6, 3e-5,
       "an MLA decode call at batch 1 and 2 keys: 8.8-13.4 us on Blackwell, 11.6-15.1 on Hopper, 15.2-15.9 on A100 "
       "(the same tables; TensorRT-LLM's rows include the rope and latent-cache write)"},
      {"mla_key_s", 0, 2e-7,
       "the least time per cached key of one sequence's decode: a kernel without split-KV walks the context on one "
       "SM (TensorRT-LLM 1.0's MLA on A100 and L40S: 80-120 ns per key at batch 1, 15.5 ms at 131k keys on A100); "
       "split-KV kernels (FlashMLA, trtllm-gen) fit ~0.5-0.6 ns, a batch-1 bandwidth shortfall (the same tables)"},
      {"memory_efficiency", 0.5, 0.92,
       "STREAM-like copies reach ~0.9 of the HBM peak (BabelStream on A100/H100); no kernel beats the DRAM roof"},
      {"memory_half_bytes", 1e4, 1e7,
       "Little's law: bandwidth x latency (~2-3 TB/s x ~0.5-1 us) is ~1-3 MB in flight before the roof is reached"},
      {"vector_efficiency", 0.02, 0.8,
       "element-wise kernels are memory-bound; their math rarely reaches more than a fraction of the fp32 CUDA-core "
       "peak"},
      {"fp8_efficiency", 0.3, 1.0,
       "fp8 GEMMs with per-tensor scales against their own (doubled) peak, as a share of bf16's efficiency: our H200 "
       "campaign's cuBLASLt fp8 GEMMs 0.64 of the fp8 peak against bf16's 0.69 (share 0.93); vLLM 0.24's CUTLASS "
       "fp8 layers in AIConfigurator's tables ~0.78 at large shapes; 1 when they match"},
      {"fp4_efficiency", 0.2, 1.0,
       "NVFP4 GEMMs on Blackwell add a scale per 16 elements and run at the fp4 peak, twice the fp8 one: the NVFP4 "
       "layers of AIConfigurator's B200 tables reach ~0.4-0.6 of it at large shapes (a share of ~0.6 of bf16's); 1 "
       "when they match bf16's share"},
      {"kernel_floor_s", 1e-6, 2e-5,
       "the GPU-side duration of an empty or tiny kernel (ramp up and tail): ~1-5 us on A100/H100"},
      {"call_latency_s", 0, 3e-5,
       "an NCCL all-reduce of a few hundred bytes takes 6-11 us on 2 GPUs of one NVSwitch node, 16-26 us on 8 "
       "(AIConfigurator's nccl-tests tables, NCCL 2.27-2.29, A100 to B300): a fixed call cost of ~5-11 us plus "
       "~0.9-1.3 us per ring step; 0: ring steps only (the classes fitted on Vidur's eager calls)"},
      {"step_latency_s", 3e-7, 5e-5,
       "one ring step of NCCL (LL protocol): ~0.9-1.3 us per hop over NVSwitch (the same tables), several us over "
       "PCIe; 50 us bounds PCIe through the CPU"},
      {"direct_latency_s", 1e-6, 2e-5,
       "a small all-reduce by the engine's own kernel replayed in a CUDA graph: 2.3-5.6 us on H100/H200, 3.8-6.1 us "
       "on A100, 3.4-8.2 us on Blackwell, nearly flat in the GPU count (AIConfigurator's vLLM 0.24, SGLang 0.5.14, "
       "TensorRT-LLM 1.3 tables; A100: older builds)"},
      {"direct_bus_efficiency", 0.1, 0.92,
       "the engines' own all-reduces move 8 MiB at 0.15-0.65 of the per-direction NVLink bandwidth (vLLM on GB200 "
       "0.15, SGLang on Hopper 0.63: one-shot kernels read every peer's whole buffer; the same tables); NCCL's ring "
       "bounds them above"},
      {"bus_efficiency", 0.4, 0.92,
       "NCCL's bus bandwidth reaches ~0.8 of the NVLink line rate (~370 of 450 GB/s on H100, NVIDIA/nccl-tests#212; "
       "~200-230 of 300 GB/s on A100, NVIDIA/nccl-tests#149); AIConfigurator's nccl-tests tables: 0.6-0.8 of the "
       "per-direction rate at 512 MiB on 2-4 GPUs, ~1.0 on 8 H100s (in-switch reduction, beyond this bound)"},
  };
  return ranges;
}

const ParamRange& kernel_param_range(const std::string& name) {
  for (const auto& range : kernel_param_ranges())
    if (range.name == name) return range;
  fail("kernel parameters: unknown parameter '{}'", name);
}

std::vector<std::pair<const char*, double KernelEfficiency::*>> kernel_efficiency_fields() {
  return {{"gemm_efficiency", &KernelEfficiency::gemm_efficiency},
          {"gemm_tile_rows", &KernelEfficiency::gemm_tile_rows},
          {"attention_efficiency", &KernelEfficiency::attention_efficiency},
          {"attention_half_keys", &KernelEfficiency::attention_half_keys},
          {"attention_floor_s", &KernelEfficiency::attention_floor_s},
          {"mla_efficiency", &KernelEfficiency::mla_efficiency},
          {"mla_half_keys", &KernelEfficiency::mla_half_keys},
          {"mla_floor_s", &KernelEfficiency::mla_floor_s},
          {"mla_key_s", &KernelEfficiency::mla_key_s},
          {"memory_efficiency", &KernelEfficiency::memory_efficiency},
          {"memory_half_bytes", &KernelEfficiency::memory_half_bytes},
          {"vector_efficiency", &KernelEfficiency::vector_efficiency},
          {"kernel_floor_s", &KernelEfficiency::kernel_floor_s},
          {"fp8_efficiency", &KernelEfficiency::fp8_efficiency},
          {"fp4_efficiency", &KernelEfficiency::fp4_efficiency}};
}

std::vector<std::pair<const char*, double KernelEfficiency::*>> kernel_efficiency_fields(
    const std::vector<std::string>& names) {
  auto fields = kernel_efficiency_fields();
  for (const auto& name : names)
    if (std::none_of(fields.begin(), fields.end(), [&](const auto& f) { return name == f.first; }))
      fail("kernel parameters: '{}' is not a KernelEfficiency field", name);
  std::erase_if(fields, [&](const auto& f) { return std::find(names.begin(), names.end(), f.first) == names.end(); });
  return fields;
}

std::vector<std::pair<const char*, double NetworkEfficiency::*>> network_efficiency_fields() {
  return {{"call_latency_s", &NetworkEfficiency::call_latency_s},
          {"step_latency_s", &NetworkEfficiency::step_latency_s},
          {"bus_efficiency", &NetworkEfficiency::bus_efficiency}};
}

std::vector<std::pair<const char*, double DirectAllReduceEfficiency::*>> direct_allreduce_fields() {
  return {{"direct_latency_s", &DirectAllReduceEfficiency::direct_latency_s},
          {"direct_bus_efficiency", &DirectAllReduceEfficiency::direct_bus_efficiency}};
}

namespace {

template <typename Struct>
Json fields_to_json(const Struct& value, const std::vector<std::pair<const char*, double Struct::*>>& fields) {
  Json j = Json::object();
  for (auto [name, field] : fields) j[name] = value.*field;
  return j;
}

// One value at `path` (e.g. "generations.hopper.gemm_efficiency"): present, a finite number, inside its range.
double checked_value(const Json& object, const std::string& key, const std::string& path, const std::string& source) {
  if (!object.contains(key) || !object.at(key).is_number()) fail("{}: {} is missing or not a number", source, path);
  const ParamRange& range = kernel_param_range(key);
  return check_range(object.at(key).get<double>(), range.lo, range.hi, source, path);
}

template <typename Struct>
std::map<std::string, Struct> entries_from_json(const Json& json, const char* group,
                                                const std::vector<std::pair<const char*, double Struct::*>>& fields,
                                                const std::string& source, bool needs_default = true) {
  if (!json.contains(group) || !json.at(group).is_object()) fail("{}: missing object '{}'", source, group);
  std::map<std::string, Struct> out;
  for (const auto& [name, entry] : json.at(group).items()) {
    const std::string prefix = std::string(group) + "." + name;
    if (!entry.is_object()) fail("{}: {} is not an object", source, prefix);
    Struct value;
    for (auto [key, field] : fields) value.*field = checked_value(entry, key, prefix + "." + key, source);
    out[name] = value;
  }
  if (needs_default && !out.count("default"))
    fail("{}: {}.default is missing (used for entries without a profile)", source, group);
  return out;
}

}  // namespace

Json kernel_params_to_json(const KernelParams& params) {
  Json j;
  j["generations"] = Json::object();
  for (const auto& [name, e] : params.generations)
    j["generations"][name] = fields_to_json(e, kernel_efficiency_fields());
  if (!params.gpus.empty()) {
    j["gpus"] = Json::object();
    for (const auto& [id, e] : params.gpus) j["gpus"][id] = fields_to_json(e, kernel_efficiency_fields());
  }
  j["networks"] = Json::object();
  for (const auto& [name, n] : params.networks) j["networks"][name] = fields_to_json(n, network_efficiency_fields());
  j["direct"] = Json::object();
  for (const auto& [name, d] : params.direct) j["direct"][name] = fields_to_json(d, direct_allreduce_fields());
  return j;
}

KernelParams kernel_params_from_json(const Json& json, const std::string& source) {
  if (!json.is_object()) fail("{}: expected a JSON object", source);
  KernelParams params;
  params.generations = entries_from_json(json, "generations", kernel_efficiency_fields(), source);
  if (!json.contains("direct"))  // checked before the networks, whose call_latency_s such a file lacks too
    fail(
        "{}: missing object 'direct' (the engines' own all-reduces, fitted since calibrate --kernels read "
        "AIConfigurator's all-reduce tables: rerun it)",
        source);
  params.networks = entries_from_json(json, "networks", network_efficiency_fields(), source);
  params.direct = entries_from_json(json, "direct", direct_allreduce_fields(), source);
  if (json.contains("gpus")) params.gpus = entries_from_json(json, "gpus", kernel_efficiency_fields(), source, false);
  return params;
}

KernelParams load_kernel_params(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  return with_json_errors(path.string(), [&] { return kernel_params_from_json(json, path.string()); });
}

std::filesystem::path default_kernel_params_path() { return data_dir() / "sim" / "kernels.json"; }

}  // namespace llmco2::sim
