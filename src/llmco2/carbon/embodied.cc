// carbon/embodied.cc - embodied carbon per GPU and its amortisation over the hardware lifetime.
#include "carbon/embodied.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::carbon {

std::string_view embodied_basis_name(EmbodiedBasis basis) {
  switch (basis) {
    case EmbodiedBasis::llmcarbon:
      return "llmcarbon";
    case EmbodiedBasis::vendor:
      return "vendor";
    case EmbodiedBasis::user:
      return "user";
  }
  return "?";
}

std::vector<std::string> offered_embodied_bases() {
  std::vector<std::string> bases = {"llmcarbon"};
  const auto& gpus = GpuCatalog::bundled().gpus();
  if (std::any_of(gpus.begin(), gpus.end(), [](const Gpu& gpu) { return gpu.vendor_pcf_kgco2e.has_value(); }))
    bases.emplace_back("vendor");
  return bases;
}

EmbodiedBasis parse_embodied_basis(std::string_view name) {
  if (name == "llmcarbon") return EmbodiedBasis::llmcarbon;  // the default: no need to read every GPU file
  const std::vector<std::string> offered = offered_embodied_bases();
  if (std::find(offered.begin(), offered.end(), name) != offered.end()) return EmbodiedBasis::vendor;
  if (name == "vendor")
    fail(
        "--embodied-basis vendor: no GPU file in the catalog carries a sourced vendor product carbon footprint "
        "(embodied.vendor_pcf_kgco2e); use llmcarbon, or give your own figure with --embodied-kg");
  fail("--embodied-basis: expected {}, got '{}'", fmt::format("{}", fmt::join(offered, " or ")), name);
}

EmbodiedParams read_embodied_params(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  const JsonReader r(json, path.string());
  EmbodiedParams p;
  p.lifetime_years = r.positive_number("lifetime_years");
  p.llmcarbon_memory_kgco2e_per_gb =
      JsonReader(r.at("llmcarbon"), path.string() + ": llmcarbon").positive_number("memory_kgco2e_per_gb");
  const JsonReader sources(r.at("sources"), path.string() + ": sources");
  for (const char* key : {"lifetime_years", "llmcarbon.memory_kgco2e_per_gb"})
    if (!sources.has(key)) fail("{}: sources has no entry for '{}' (every value names its source)", path.string(), key);
  return p;
}

const EmbodiedParams& bundled_embodied_params() {
  static const EmbodiedParams params = read_embodied_params(data_dir() / "carbon" / "embodied.json");
  return params;
}

std::string GpuEmbodied::unknown_label() const {
  return fmt::format("unknown (no sourced embodied figure for {})", gpu_id.empty() ? "this GPU" : gpu_id);
}

namespace {

GpuEmbodied vendor_embodied(const Gpu& gpu) {
  if (!gpu.vendor_pcf_kgco2e)
    fail(
        "{} has no vendor product carbon footprint in its GPU file ({}); use --embodied-basis llmcarbon, give "
        "one with --embodied-kg, or add embodied.vendor_pcf_kgco2e with its source to the file",
        gpu.id, gpu.source);
  return {*gpu.vendor_pcf_kgco2e, EmbodiedBasis::vendor,
          fmt::format("vendor PCF {:.4g} kg per GPU", *gpu.vendor_pcf_kgco2e), gpu.id};
}

GpuEmbodied llmcarbon_embodied(const Gpu& gpu, const EmbodiedParams& params) {
  if (!gpu.die_area_mm2 || !gpu.llmcarbon_cpa_kgco2e_per_cm2) {
    const std::string why =
        gpu.die_area_mm2 ? "LLMCarbon has no carbon per area for its node" : "no die area is published";
    return {std::nullopt, EmbodiedBasis::llmcarbon,
            fmt::format("unknown for {}: {} ({}); CO2 totals are operational only, give a figure with --embodied-kg",
                        gpu.id, why, gpu.process.empty() ? "process unknown" : gpu.process),
            gpu.id};
  }
  const double die_cm2 = *gpu.die_area_mm2 / 100.0, cpa = *gpu.llmcarbon_cpa_kgco2e_per_cm2;
  const double memory_gb = gpu.memory_bytes / 1e9, per_gb = params.llmcarbon_memory_kgco2e_per_gb;
  const double kg = die_cm2 * cpa + memory_gb * per_gb;
  return {kg, EmbodiedBasis::llmcarbon,
          fmt::format("die {:.4g} cm2 x {:.4g} kg/cm2 + memory {:.4g} GB x {:.4g} kg/GB = {:.4g} kg per GPU", die_cm2,
                      cpa, memory_gb, per_gb, kg),
          gpu.id};
}

}  // namespace

GpuEmbodied gpu_embodied(const Gpu& gpu, EmbodiedBasis basis, const EmbodiedParams& params) {
  switch (basis) {
    case EmbodiedBasis::vendor:
      return vendor_embodied(gpu);
    case EmbodiedBasis::llmcarbon:
      return llmcarbon_embodied(gpu, params);
    case EmbodiedBasis::user:
      break;
  }
  fail("the user basis takes its figure from --embodied-kg");
}

double lifetime_seconds(double years) { return years * 365.0 * 86400.0; }

double embodied_g(double kgco2e_per_gpu, double busy_s, double lifetime_years, int gpus) {
  return kgco2e_per_gpu * 1000.0 * busy_s / lifetime_seconds(lifetime_years) * gpus;
}

}  // namespace llmco2::carbon
