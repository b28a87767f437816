// sim/sim_params.cc - simulator parameters to and from JSON, with their ranges.
#include "sim/sim_params.h"

#include <algorithm>

#include "core/error.h"
#include "core/paths.h"

namespace llmco2::sim {

namespace {

// `value` x `scale`, kept inside the range the kernel fit documents for the field.
double scaled_efficiency(double value, double scale, const char* field) {
  const ParamRange& range = kernel_param_range(field);
  return std::clamp(value * scale, range.lo, range.hi);
}

}  // namespace

KernelEfficiency SimParams::efficiency(const std::string& generation, const std::string& gpu_id) const {
  KernelEfficiency e = kernels.efficiency(generation, gpu_id);
  e.block_scaled_efficiency = block_scaled_efficiency;
  const auto site_gpu = site_gpus.find(gpu_id);
  if (site_gpu == site_gpus.end()) return e;
  const GpuSiteScales& s = site_gpu->second;
  e.gemm_efficiency = scaled_efficiency(e.gemm_efficiency, s.compute, "gemm_efficiency");
  e.attention_efficiency = scaled_efficiency(e.attention_efficiency, s.compute, "attention_efficiency");
  e.mla_efficiency = scaled_efficiency(e.mla_efficiency, s.compute, "mla_efficiency");
  e.memory_efficiency = scaled_efficiency(e.memory_efficiency, s.memory, "memory_efficiency");
  return e;
}

PowerParams SimParams::power_on(const std::string& gpu_id) const {
  const auto site_gpu = site_gpus.find(gpu_id);
  if (site_gpu == site_gpus.end()) return power;
  const double s = site_gpu->second.power;
  return {power.active * s, power.compute * s, power.memory * s, power.wait * s, power.simt * s};
}

const std::vector<SimField>& sim_fields() {
  static const std::vector<SimField> fields = {
      {{"block_scaled_efficiency", 0.5, 1.0,
        "block-scaled fp8 GEMMs (128 x 128 weight and 1 x 128 activation scales: DeepSeek and Qwen checkpoints; vLLM's "
        "block-fp8 Triton and CUTLASS kernels), as a share of the efficiencies the 16-bit kernels reach on both "
        "roofs: 1 when they match them (DeepGEMM's block-scaled fp8 GEMMs reach 1,550 TFLOP/s on an H800, ~0.78 of "
        "its fp8 peak, the share cuBLAS reaches in bf16); 0.5 when fp8 is no faster than bf16 (Qwen3-235B-A22B fp8 "
        "vs bf16 at TP 8 on H200, vllm-project/llm-compressor#2069; block-fp8 fused MoE kept 128-wide N tiles at every "
        "batch, too few thread blocks at decode, vllm-project/vllm#46642)"},
       &SimParams::block_scaled_efficiency},
      {{"sync_wait_fraction", 0.0, 0.15, "tensor-parallel skew: GPUs finish a layer within a few % of each other"},
       &SimParams::sync_wait_fraction},
      {{"power_active", 0.0, 0.4,
        "a GPU running light kernels at boost clocks draws idle plus up to ~40% of its dynamic range"},
       nullptr,
       &PowerParams::active},
      {{"power_compute", 0.6, 1.4,
        "GEMMs at ~0.75 of the tensor peak run at the power limit: active + 0.75 x compute ~ 1"},
       nullptr,
       &PowerParams::compute},
      {{"power_simt", 0.3, 1.4,
        "GEMMs on the CUDA cores (a type without tensor units: fp32, or bf16 on Volta and Turing under PyTorch), per "
        "unit of the fp32 peak they use: an FMA-bound SGEMM draws most of the dynamic range; the default assumes "
        "what tensor math draws per unit of its own peak (power_compute's default)"},
       nullptr,
       &PowerParams::simt},
      {{"power_memory", 0.2, 1.0, "HBM streaming at ~0.9 of peak bandwidth draws roughly half to 3/4 of the TDP"},
       nullptr,
       &PowerParams::memory},
      {{"power_wait", 0.0, 0.3,
        "a GPU inside a running step, waiting on the engine's host work, stays at P0 clocks running small "
        "bookkeeping kernels and copies: idle plus up to ~30% of its dynamic range (deep idle: 0)"},
       nullptr,
       &PowerParams::wait},
      {{"energy_noise", 0.0, 0.2, "repeat-to-repeat spread of energy in the public campaigns: 1-10%"},
       &SimParams::energy_noise},
      {{"latency_noise", 0.0, 0.2, "repeat-to-repeat spread of latency in the public campaigns: 1-10%"},
       &SimParams::latency_noise},
  };
  return fields;
}

Json sim_params_to_json(const SimParams& p) {
  Json j;
  for (const SimField& f : sim_fields()) j["shared"][std::string(f.range.name)] = f.get(p);
  j["engines"] = Json::object();
  for (const std::string& id : p.engines.ids()) {
    EngineProfile copy = p.engines.get(id);
    for (const char* field : kEngineFittedFields) j["engines"][id][field] = engine_field(copy, field);
  }
  return j;
}

SimParams sim_params_from_json(const Json& j, const std::string& source, KernelParams kernels, EngineCatalog engines) {
  SimParams p;
  p.kernels = std::move(kernels);
  p.engines = std::move(engines);
  JsonReader top(j, source);
  JsonReader shared(top.at("shared"), source + ": shared");
  // Parameters written before 2026-11-24 have w8a8_efficiency, whose meaning changed with its name.
  if (shared.has("w8a8_efficiency") && !shared.has("block_scaled_efficiency"))
    fail(
        "{}: shared: key 'w8a8_efficiency' is now 'block_scaled_efficiency' and covers block-scaled fp8 GEMMs only "
        "(docs/simulator.md); rerun `llmco2 calibrate` to write parameters for this version",
        source);
  // Parameters written before 2026-11-27 fitted one attention efficiency for every GPU, end to end.
  if (shared.has("attention_efficiency"))
    fail(
        "{}: shared: key 'attention_efficiency' is now fitted per GPU generation on measured kernel tables "
        "(data/sim/kernels.json, docs/kernel-fit.md); rerun `llmco2 calibrate` to write parameters for this version",
        source);
  for (const SimField& f : sim_fields())
    f.ref(p) = check_range(shared.number(f.range.name), f.range, source, "shared." + std::string(f.range.name));
  if (!top.has("engines")) return p;
  if (!top.at("engines").is_object())
    fail("{}: key 'engines' must be an object of the fitted engines by id (as llmco2 calibrate writes it), found {}",
         source, top.at("engines").type_name());
  for (const auto& [id, body] : top.at("engines").items()) {
    JsonReader r(body, source + ": engines." + id);
    std::vector<std::pair<std::string, double>> fitted;
    for (const char* field : kEngineFittedFields)
      if (r.has(field)) fitted.emplace_back(field, r.number(field));
    p.engines.overlay(id, std::move(fitted), source);
  }
  return p;
}

std::filesystem::path default_sim_params_path() { return data_dir() / "sim" / "params.json"; }

SimParams load_sim_params_or_default(const std::string& path) {
  return load_sim_params(path.empty() ? default_sim_params_path() : std::filesystem::path(path));
}

SimParams default_sim_params() {
  SimParams p;
  p.kernels = load_kernel_params(default_kernel_params_path());
  p.engines = EngineCatalog::bundled();  // a copy: parameters may overlay host costs
  return p;
}

SimParams load_sim_params(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path)) fail("{}: simulator parameter file not found", path.string());
  const Json json = read_json_file(path);
  KernelParams kernels = load_kernel_params(default_kernel_params_path());
  EngineCatalog engines = EngineCatalog::bundled();  // a copy: the parameters overlay host costs
  return with_json_errors(
      path.string(), [&] { return sim_params_from_json(json, path.string(), std::move(kernels), std::move(engines)); });
}

}  // namespace llmco2::sim
