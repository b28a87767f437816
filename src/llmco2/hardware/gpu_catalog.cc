// hardware/gpu_catalog.cc - GPU files: units converted on read (TFLOP/s -> ops/s, GB -> bytes, bidirectional -> per
// direction).
#include "hardware/gpu_catalog.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "core/paths.h"
#include "core/ranges.h"
#include "hardware/catalog_index.h"

namespace llmco2::hardware {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// Value fields that must each name a source.
constexpr std::string_view kGpuSourcedFields[] = {"dense_peak_tflops", "memory_gb", "memory_bandwidth_gb_per_s",
                                                  "host_link",         "tdp_w",     "idle_w",
                                                  "die_area_mm2",      "process"};

void check_sources(const JsonReader& r) {
  const JsonReader sources(r.at("sources"), r.source() + ": sources");
  for (const auto field : kGpuSourcedFields)
    if (!sources.has(field))
      fail("{}: sources has no entry for '{}' (every value names its source)", r.source(), field);
  if (r.has("gpu_link") && !sources.has("gpu_link"))
    fail("{}: sources has no entry for 'gpu_link' (every value names its source)", r.source());
  for (const char* field : {"min_power_limit_w", "max_sm_clock_mhz", "tensor_peak_clock_mhz"})
    if (r.has(field) && !sources.has(field))
      fail("{}: sources has no entry for '{}' (every value names its source)", r.source(), field);
  if (r.has("embodied") && JsonReader(r.at("embodied"), r.source()).has("vendor_pcf_kgco2e") &&
      !sources.has("embodied.vendor_pcf_kgco2e"))
    fail("{}: sources has no entry for 'embodied.vendor_pcf_kgco2e' (every value names its source)", r.source());
}

// The plausible range of every numeric value of a GPU file, in the file's units. A value outside is a typo, a wrong
// unit (MB for GB, a sparse or per-node figure) or a different kind of device; the loader refuses it.
constexpr ParamRange kGpuRanges[] = {
    {"tdp_w", 10, 2000, "W: a 70 W inference card (T4) to a 1200 W GPU (GB200), with headroom both ways"},
    {"idle_w", 1, 2000, "W, and below tdp_w: a powered board never draws 0 (T4 idles at 9 W, Gaudi 3 at 226 W)"},
    {"min_power_limit_w", 1, 2000,
     "W, above idle_w and at most tdp_w: nvidia-smi's Min Power Limit (L4 40 W, H100 200 W)"},
    {"max_sm_clock_mhz", 300, 4000, "MHz: nvidia-smi's Max Clocks, 1410 (A100) to 3105 (RTX 6000 Ada)"},
    {"tensor_peak_clock_mhz", 300, 4000, "MHz: the clock of the tensor peaks, 1545 (H100 NVL) to 2505 (RTX 6000 Ada)"},
    {"memory_gb", 1, 1024, "GB: 16 GB (T4, V100) to 256 GB (MI325X); a TB or more is a node, not one GPU"},
    {"memory_bandwidth_gb_per_s", 50, 20000, "GB/s: 300 GB/s (L4) to 8000 GB/s (B200); below 50 is host DRAM"},
    {"dense_peak_tflops", 0.1, 20000, "TFLOP/s (TOPS for integers), dense: 8.1 (T4 fp32) to 10000 (GB200 fp4)"},
    {"gpu_link.bandwidth_gb_per_s", 1, 20000, "GB/s both ways, positive: 112.5 (GA102 bridge) to 1800 (NVLink 5)"},
    {"gpu_link.max_gpus", 2, 1024,
     "GPUs one link domain joins: a bridge 2 (H200 NVL 4), an NVSwitch domain 8, 72 or 256 (GH200)"},
    {"host_link.bandwidth_gb_per_s", 1, 1000, "GB/s both ways, positive: PCIe Gen3 x16 32 to NVLink-C2C 900 (GH200)"},
    {"die_area_mm2", 10, 5000, "mm2 of silicon: 294 (L4) to 826 (A100), a few reticles for multi-die parts"},
    {"process_nm", 1, 100, "nm, the process node's name: 12 (T4, V100) to 4 (H100, B200)"},
    {"embodied.llmcarbon_cpa_kgco2e_per_cm2", 0.1, 10, "kg per cm2: LLMCarbon's 1.0 (16 nm) to 1.8 (4 nm)"},
    {"embodied.vendor_pcf_kgco2e", 1, 100000, "kg per GPU: a product carbon footprint, board included"},
};

// Pairs (narrower, wider) of data types: the narrower type's tensor peak is at least the wider's on every GPU.
constexpr std::pair<DType, DType> kPeakOrder[] = {
    {DType::fp4, DType::fp8},   {DType::fp8, DType::bf16},  {DType::fp8, DType::fp16},  {DType::int8, DType::fp16},
    {DType::int4, DType::int8}, {DType::bf16, DType::tf32}, {DType::fp16, DType::tf32}, {DType::tf32, DType::fp32},
    {DType::bf16, DType::fp32}, {DType::fp16, DType::fp32}, {DType::int8, DType::fp32}};

const ParamRange& gpu_range(std::string_view key) { return range_named(kGpuRanges, key, "GPU"); }

// `value` of `key` (shown as `shown`, e.g. "dense_peak_tflops.fp8") when finite and within its range, else Error.
double in_range(const std::string& source, std::string_view key, double value, std::string_view shown = {}) {
  return check_range(value, gpu_range(key), source, shown.empty() ? key : shown);
}

double number_in_range(const JsonReader& r, const std::string& file, std::string_view key, std::string_view full_key) {
  return in_range(file, full_key, r.number(key));
}

std::optional<double> optional_in_range(const JsonReader& r, const std::string& file, std::string_view key,
                                        std::string_view full_key) {
  const auto value = r.optional_number(key);
  if (value) in_range(file, full_key, *value);
  return value;
}

// `key` is "gpu_link" or "host_link"; bandwidths are bidirectional in the file, per direction in Link.
Link read_link(const JsonReader& file, std::string_view key, int default_max_gpus) {
  const std::string prefix(key);
  const JsonReader r(file.at(key), file.source() + ": " + prefix);
  Link link;
  link.kind = r.string("kind");
  link.bandwidth_bytes_per_s =
      number_in_range(r, file.source(), "bandwidth_gb_per_s", prefix + ".bandwidth_gb_per_s") * kGiga / 2.0;
  const auto max_gpus = r.optional_number("max_gpus");
  if (max_gpus) in_range(file.source(), "gpu_link.max_gpus", *max_gpus, prefix + ".max_gpus");
  link.max_gpus = static_cast<int>(max_gpus.value_or(default_max_gpus));
  return link;
}

void check_peak_order(const std::string& source, const std::map<DType, double>& tflops) {
  for (const auto& [narrow, wide] : kPeakOrder) {
    const auto n = tflops.find(narrow), w = tflops.find(wide);
    if (n != tflops.end() && w != tflops.end() && n->second < w->second)
      fail(
          "{}: dense_peak_tflops.{} = {} is below dense_peak_tflops.{} = {} (a narrower type's tensor peak is at "
          "least a wider type's; is one of them a sparse figure?)",
          source, dtype_name(narrow), n->second, dtype_name(wide), w->second);
  }
}

void read_peaks(const JsonReader& r, Gpu& gpu) {
  const JsonReader peaks(r.at("dense_peak_tflops"), r.source() + ": dense_peak_tflops");
  std::map<DType, double> tflops;
  // Tensor-unit types only: mxfp4 and nvfp4 are storage formats that run on the fp4 units.
  for (const auto dtype :
       {DType::fp32, DType::tf32, DType::bf16, DType::fp16, DType::fp8, DType::int8, DType::int4, DType::fp4})
    if (auto value = peaks.optional_number(dtype_name(dtype)))
      tflops[dtype] =
          in_range(r.source(), "dense_peak_tflops", *value, fmt::format("dense_peak_tflops.{}", dtype_name(dtype)));
  if (!tflops.contains(DType::fp32))
    fail("{}: missing key 'dense_peak_tflops.fp32' (the vector-unit peak)", r.source());
  check_peak_order(r.source(), tflops);
  for (const auto& [dtype, value] : tflops) gpu.dense_peak_ops_per_s[dtype] = value * kTera;
}

void read_power(const JsonReader& r, Gpu& gpu) {
  gpu.tdp_w = number_in_range(r, r.source(), "tdp_w", "tdp_w");
  gpu.idle_w = number_in_range(r, r.source(), "idle_w", "idle_w");
  if (gpu.idle_w >= gpu.tdp_w)
    fail("{}: idle_w = {} is not below tdp_w = {} (idle is the board with no work)", r.source(), gpu.idle_w, gpu.tdp_w);
  gpu.min_power_limit_w = optional_in_range(r, r.source(), "min_power_limit_w", "min_power_limit_w");
  if (gpu.min_power_limit_w && !(*gpu.min_power_limit_w > gpu.idle_w && *gpu.min_power_limit_w <= gpu.tdp_w))
    fail("{}: min_power_limit_w = {} is not above idle_w = {} and at most tdp_w = {}", r.source(),
         *gpu.min_power_limit_w, gpu.idle_w, gpu.tdp_w);
  gpu.max_sm_clock_mhz = optional_in_range(r, r.source(), "max_sm_clock_mhz", "max_sm_clock_mhz");
  gpu.tensor_peak_clock_mhz = optional_in_range(r, r.source(), "tensor_peak_clock_mhz", "tensor_peak_clock_mhz");
  if (gpu.tensor_peak_clock_mhz && !(gpu.max_sm_clock_mhz && *gpu.tensor_peak_clock_mhz <= *gpu.max_sm_clock_mhz))
    fail("{}: tensor_peak_clock_mhz = {} needs a max_sm_clock_mhz at least as high", r.source(),
         *gpu.tensor_peak_clock_mhz);
}

void read_embodied(const JsonReader& r, Gpu& gpu) {
  if (!r.has("embodied")) return;
  const JsonReader embodied(r.at("embodied"), r.source() + ": embodied");
  gpu.llmcarbon_cpa_kgco2e_per_cm2 =
      optional_in_range(embodied, r.source(), "llmcarbon_cpa_kgco2e_per_cm2", "embodied.llmcarbon_cpa_kgco2e_per_cm2");
  gpu.vendor_pcf_kgco2e = optional_in_range(embodied, r.source(), "vendor_pcf_kgco2e", "embodied.vendor_pcf_kgco2e");
}

}  // namespace

Gpu gpu_from_json(const Json& json, const std::string& source) {
  const JsonReader r(json, source);
  Gpu gpu;
  gpu.source = source;
  gpu.id = r.string("id");
  check_catalog_id(gpu.id, source);
  gpu.name = r.string("name");
  gpu.nvidia_smi_names = r.strings("nvidia_smi_names");
  gpu.aliases = r.strings("aliases");
  gpu.vendor = r.optional_string("vendor").value_or("");
  gpu.architecture = r.optional_string("architecture").value_or("");
  read_peaks(r, gpu);
  gpu.memory_bytes = number_in_range(r, source, "memory_gb", "memory_gb") * kGiga;
  gpu.memory_bandwidth_bytes_per_s =
      number_in_range(r, source, "memory_bandwidth_gb_per_s", "memory_bandwidth_gb_per_s") * kGiga;
  if (r.has("gpu_link")) gpu.gpu_link = read_link(r, "gpu_link", 8);
  gpu.host_link = read_link(r, "host_link", 1 << 20);
  read_power(r, gpu);
  gpu.die_area_mm2 = optional_in_range(r, source, "die_area_mm2", "die_area_mm2");
  gpu.process = r.optional_string("process").value_or("");
  gpu.process_nm = optional_in_range(r, source, "process_nm", "process_nm");
  read_embodied(r, gpu);
  gpu.notes = r.strings("notes");
  check_sources(r);
  return gpu;
}

Gpu read_gpu_file(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  return with_json_errors(path.string(), [&] { return gpu_from_json(json, path.string()); });
}

GpuCatalog GpuCatalog::load(const std::filesystem::path& dir) {
  GpuCatalog catalog;
  for (const auto& path : json_files_in(dir, "GPU catalog")) catalog.gpus_.push_back(read_gpu_file(path));
  std::sort(catalog.gpus_.begin(), catalog.gpus_.end(), [](const Gpu& a, const Gpu& b) { return a.id < b.id; });
  return catalog;
}

const GpuCatalog& GpuCatalog::bundled() {
  static const GpuCatalog catalog = load(data_dir() / "gpus");
  return catalog;
}

namespace {

// Whether `key` (normalised) is the entry's id, one of its aliases or one of its nvidia-smi names: the one rule by
// which
// --gpu names a board, for a catalog's Gpu and for an index entry alike.
template <typename Entry>
bool names_board(const Entry& e, const std::string& key) {
  if (e.id == key) return true;
  for (const auto& alias : e.aliases)
    if (normalize_name(alias) == key) return true;
  for (const auto& smi : e.nvidia_smi_names)
    if (normalize_name(smi) == key) return true;
  return false;
}

// The index's entries sorted by id, the catalog's order.
const std::vector<const IndexedGpu*>& indexed_by_id() {
  static const std::vector<const IndexedGpu*> sorted = [] {
    std::vector<const IndexedGpu*> out;
    for (const IndexedGpu& entry : indexed_gpus()) out.push_back(&entry);
    std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
    return out;
  }();
  return sorted;
}

// The first entry (by id) of which `key` (normalised) is the id, an alias or an nvidia-smi name, as resolve matches.
const IndexedGpu* indexed_entry(const std::string& key) {
  for (const IndexedGpu* entry : indexed_by_id())
    if (names_board(*entry, key)) return entry;
  return nullptr;
}

// The GPU of an index entry, read from its file once; nullptr when the file no longer says what the index does (the
// data changed since the build configured): the caller reads the whole catalog instead.
const Gpu* indexed_gpu(const IndexedGpu& entry) {
  static ReadOnce<Gpu> gpus;
  const Gpu& gpu = gpus.get(entry.id, [&] { return read_gpu_file(data_dir() / "gpus" / entry.file); });
  const bool same = gpu.id == entry.id && gpu.architecture == entry.architecture && gpu.tdp_w == entry.tdp_w;
  return same ? &gpu : nullptr;
}

}  // namespace

Gpu GpuCatalog::resolve_bundled(const std::string& name, bool paths) {
  if (catalog_index_applies()) {
    if (const IndexedGpu* entry = indexed_entry(normalize_name(name)))
      if (const Gpu* gpu = indexed_gpu(*entry)) return *gpu;
  }
  return bundled().resolve(name, paths);
}

const Gpu& GpuCatalog::reference_board(const Gpu& gpu) {
  if (catalog_index_applies()) {
    const IndexedGpu* best = nullptr;
    double best_tdp_w = gpu.tdp_w;
    for (const IndexedGpu* entry : indexed_by_id())
      if (entry->architecture == gpu.architecture && entry->tdp_w > best_tdp_w) best = entry, best_tdp_w = entry->tdp_w;
    if (!best) return gpu;
    if (const Gpu* board = indexed_gpu(*best)) return *board;
  }
  const Gpu* reference = &gpu;
  for (const Gpu& other : bundled().gpus())
    if (other.architecture == gpu.architecture && other.tdp_w > reference->tdp_w) reference = &other;
  return *reference;
}

Gpu GpuCatalog::resolve(const std::string& name, bool paths) const {
  const std::string key = normalize_name(name);
  for (const auto& gpu : gpus_)
    if (names_board(gpu, key)) return gpu;
  if (paths && name.ends_with(".json")) return read_gpu_file(name);
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
  fail("unknown GPU '{}' (did you mean {}? {})", name, join_or(ids),
       paths ? "`llmco2 gpus` lists all; a GPU JSON file path also works" : "here a GPU is a catalog id");
}

}  // namespace llmco2::hardware
