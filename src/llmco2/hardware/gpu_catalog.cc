// hardware/gpu_catalog.cc - GPU files: units converted on read (TFLOP/s -> ops/s, GB -> bytes, bidirectional -> per direction).
#include "hardware/gpu_catalog.h"

#include <algorithm>

#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"

namespace llmco2 {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// Value fields that must each name a source.
constexpr std::string_view kSourcedFields[] = {"dense_peak_tflops", "memory_gb", "memory_bandwidth_gb_per_s",
                                               "host_link", "tdp_w", "idle_w", "die_area_mm2", "process"};

void check_sources(const JsonReader& r) {
  const JsonReader sources(r.at("sources"), r.source() + ": sources");
  for (const auto field : kSourcedFields)
    if (!sources.has(field)) fail("{}: sources has no entry for '{}' (every value names its source)", r.source(), field);
  if (r.has("gpu_link") && !sources.has("gpu_link"))
    fail("{}: sources has no entry for 'gpu_link' (every value names its source)", r.source());
  if (r.has("embodied") && JsonReader(r.at("embodied"), r.source()).has("vendor_pcf_kgco2e") &&
      !sources.has("embodied.vendor_pcf_kgco2e"))
    fail("{}: sources has no entry for 'embodied.vendor_pcf_kgco2e' (every value names its source)", r.source());
}

Link read_link(const Json& json, const std::string& source, int default_max_gpus) {
  const JsonReader r(json, source);
  Link link;
  link.kind = r.string("kind");
  link.bandwidth_bytes_per_s = r.positive_number("bandwidth_gb_per_s") * kGiga / 2.0;
  link.max_gpus = static_cast<int>(r.optional_number("max_gpus").value_or(default_max_gpus));
  return link;
}

std::vector<std::string> read_strings(const JsonReader& r, std::string_view key) {
  std::vector<std::string> out;
  if (!r.has(key)) return out;
  for (const auto& item : r.at(key)) {
    if (!item.is_string()) fail("{}: key '{}' must list strings", r.source(), key);
    out.push_back(item.get<std::string>());
  }
  return out;
}

void read_peaks(const JsonReader& r, Gpu& gpu) {
  const JsonReader peaks(r.at("dense_peak_tflops"), r.source() + ": dense_peak_tflops");
  for (const auto dtype : {DType::fp32, DType::tf32, DType::bf16, DType::fp16, DType::fp8, DType::int8, DType::int4})
    if (auto value = peaks.optional_number(dtype_name(dtype))) {
      if (*value <= 0) fail("{}: dense_peak_tflops.{} must be positive", r.source(), dtype_name(dtype));
      gpu.dense_peak_ops_per_s[dtype] = *value * kTera;
    }
  if (!gpu.dense_peak_ops_per_s.contains(DType::fp32))
    fail("{}: missing key 'dense_peak_tflops.fp32' (the vector-unit peak)", r.source());
}

}  // namespace

Gpu gpu_from_json(const Json& json, const std::string& source) {
  const JsonReader r(json, source);
  Gpu gpu;
  gpu.source = source;
  gpu.id = r.string("id");
  if (gpu.id != normalize_name(gpu.id)) fail("{}: key 'id' must be lower-case with '-', found '{}'", source, gpu.id);
  gpu.name = r.string("name");
  gpu.nvidia_smi_names = read_strings(r, "nvidia_smi_names");
  gpu.aliases = read_strings(r, "aliases");
  gpu.vendor = r.optional_string("vendor").value_or("");
  gpu.architecture = r.optional_string("architecture").value_or("");
  read_peaks(r, gpu);
  gpu.memory_bytes = r.positive_number("memory_gb") * kGiga;
  gpu.memory_bandwidth_bytes_per_s = r.positive_number("memory_bandwidth_gb_per_s") * kGiga;
  if (r.has("gpu_link")) gpu.gpu_link = read_link(r.at("gpu_link"), source + ": gpu_link", 8);
  gpu.host_link = read_link(r.at("host_link"), source + ": host_link", 1 << 20);
  gpu.tdp_w = r.positive_number("tdp_w");
  gpu.idle_w = r.positive_number("idle_w");
  if (gpu.idle_w >= gpu.tdp_w) fail("{}: idle_w ({}) must be below tdp_w ({})", source, gpu.idle_w, gpu.tdp_w);
  gpu.die_area_mm2 = r.optional_number("die_area_mm2");
  gpu.process = r.optional_string("process").value_or("");
  gpu.process_nm = r.optional_number("process_nm");
  if (r.has("embodied")) {
    const JsonReader embodied(r.at("embodied"), source + ": embodied");
    gpu.llmcarbon_cpa_kgco2e_per_cm2 = embodied.optional_number("llmcarbon_cpa_kgco2e_per_cm2");
    gpu.vendor_pcf_kgco2e = embodied.optional_number("vendor_pcf_kgco2e");
    if (gpu.vendor_pcf_kgco2e && !(*gpu.vendor_pcf_kgco2e > 0))
      fail("{}: embodied.vendor_pcf_kgco2e must be positive, got {}", source, *gpu.vendor_pcf_kgco2e);
  }
  gpu.notes = read_strings(r, "notes");
  check_sources(r);
  return gpu;
}

Gpu read_gpu_file(const std::filesystem::path& path) { return gpu_from_json(read_json_file(path), path.string()); }

GpuCatalog GpuCatalog::load(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) fail("{}: GPU catalog folder not found", dir.string());
  GpuCatalog catalog;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") catalog.gpus_.push_back(read_gpu_file(entry.path()));
  std::sort(catalog.gpus_.begin(), catalog.gpus_.end(), [](const Gpu& a, const Gpu& b) { return a.id < b.id; });
  return catalog;
}

const GpuCatalog& GpuCatalog::bundled() {
  static const GpuCatalog catalog = load(data_dir() / "gpus");
  return catalog;
}

Gpu GpuCatalog::resolve(const std::string& name) const {
  const std::string key = normalize_name(name);
  auto matches = [&](const Gpu& gpu) {
    if (gpu.id == key) return true;
    for (const auto& alias : gpu.aliases) if (normalize_name(alias) == key) return true;
    for (const auto& smi : gpu.nvidia_smi_names) if (normalize_name(smi) == key) return true;
    return false;
  };
  for (const auto& gpu : gpus_) if (matches(gpu)) return gpu;
  if (name.ends_with(".json")) return read_gpu_file(name);
  std::vector<std::string> names, owners;  // ids and short aliases (both accepted by --gpu), and their GPU ids
  for (const auto& gpu : gpus_) {
    names.push_back(gpu.id), owners.push_back(gpu.id);
    for (const auto& alias : gpu.aliases) names.push_back(alias), owners.push_back(gpu.id);
  }
  std::vector<std::string> ids;  // the nearest names' GPU ids, nearest first, without repeats
  for (const auto& near : nearest_names(name, names, names.size())) {
    const auto& id = owners[std::find(names.begin(), names.end(), near) - names.begin()];
    if (std::find(ids.begin(), ids.end(), id) == ids.end() && ids.size() < 3) ids.push_back(id);
  }
  fail("unknown GPU '{}' (did you mean {}? `llmco2 gpus` lists all; a GPU JSON file path also works)", name,
       join_or(ids));
}

}  // namespace llmco2
