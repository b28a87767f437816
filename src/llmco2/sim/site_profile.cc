// sim/site_profile.cc - site profiles to and from JSON, and applied over the global parameters.
#include "sim/site_profile.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ranges.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::sim {

const std::vector<SiteKnobInfo>& site_knobs() {
  static const std::vector<SiteKnobInfo> knobs = {
      {SiteKnob::compute, "compute_scale", true, 0.7, 1.3, 0.10,
       "the GEMM, attention and MLA efficiencies of one GPU type: clocks held under a site's cooling and power "
       "delivery, driver and library builds (cuBLAS, FlashAttention) move the achieved tensor throughput by ~10% "
       "between sites of the same board; each efficiency stays inside its kernel-fit range"},
      {SiteKnob::memory, "memory_scale", true, 0.8, 1.2, 0.07,
       "the achievable HBM bandwidth of one GPU type: a property of the memory parts and the memory clock, which "
       "sites change less than the SM clock (~5%); memory_efficiency stays inside its kernel-fit range"},
      {SiteKnob::power, "power_scale", true, 0.7, 1.3, 0.10,
       "the dynamic power of one GPU type (every coefficient of the power model): board-to-board leakage and "
       "voltage bins, temperature and fan power differ by ~10% between fleets of one board"},
      {SiteKnob::host, "host_scale", false, 0.5, 2.0, 0.35,
       "an engine's host work per step, launch and sequence: the site's CPUs, Python and engine build; host CPUs "
       "differ by up to 2x in single-thread speed; each cost stays inside the engine's documented range"},
  };
  return knobs;
}

const SiteKnobInfo& site_knob(SiteKnob knob) {
  for (const auto& info : site_knobs())
    if (info.knob == knob) return info;
  fail("unknown site knob");
}

namespace {

const SiteKnobInfo& site_knob_named(const std::string& name, const std::string& source) {
  for (const auto& info : site_knobs())
    if (info.name == name) return info;
  fail("{}: unknown correction '{}' (expected compute_scale, memory_scale, power_scale or host_scale)", source, name);
}

void check_target(const SiteKnobInfo& info, const std::string& target, const std::string& source) {
  if (info.per_gpu) {
    const Gpu gpu = GpuCatalog::resolve_bundled(target, false);
    if (gpu.id != target) fail("{}: target '{}' is not a GPU catalog id (did you mean '{}'?)", source, target, gpu.id);
  } else if (!EngineCatalog::bundled().has(target)) {
    fail("{}: target '{}' is not an engine of the catalog (data/engines/engines.json)", source, target);
  }
}

}  // namespace

Json site_profile_to_json(const SiteProfile& site) {
  Json j;
  j["site"] = site.name;
  j["data"] = site.data;
  j["rows"] = site.rows;
  j["corrections"] = Json::array();
  for (const SiteCorrection& c : site.corrections) {
    const SiteKnobInfo& info = site_knob(c.knob);
    j["corrections"].push_back({{"target", c.target},
                                {"parameter", info.name},
                                {"value", c.value},
                                {"range", {info.lo, info.hi}},
                                {"sd", c.sd},
                                {"data_share", c.data_share},
                                {"rows", c.rows}});
  }
  j["global"] = site.global;
  if (!site.fit.is_null()) j["fit"] = site.fit;
  return j;
}

SiteProfile site_profile_from_json(const Json& json, const std::string& source) {
  return with_json_errors(source, [&] {
    if (!json.is_object()) fail("{}: a site profile is a JSON object (as llmco2 calibrate --site writes it)", source);
    JsonReader top(json, source);
    SiteProfile site;
    site.name = top.string("site");
    if (site.name.empty()) fail("{}: key 'site' must name the site", source);
    site.data = top.strings("data");
    site.global = top.strings("global");
    if (top.has("rows")) site.rows = static_cast<size_t>(check_range(top.number("rows"), 0, 1e9, source, "rows"));
    if (!top.at("corrections").is_array()) fail("{}: key 'corrections' must be a list", source);
    size_t index = 0;
    for (const Json& body : top.at("corrections")) {
      const std::string where = fmt::format("{}: corrections[{}]", source, index++);
      JsonReader r(body, where);
      SiteCorrection c;
      const SiteKnobInfo& info = site_knob_named(r.string("parameter"), where);
      c.knob = info.knob;
      c.target = r.string("target");
      check_target(info, c.target, where);
      c.value = check_range(r.number("value"), info.lo, info.hi, where, "value");
      if (r.has("sd")) c.sd = check_range(r.number("sd"), 0, 10, where, "sd");
      if (r.has("data_share")) c.data_share = check_range(r.number("data_share"), 0, 1, where, "data_share");
      if (r.has("rows")) c.rows = static_cast<size_t>(check_range(r.number("rows"), 0, 1e9, where, "rows"));
      site.corrections.push_back(std::move(c));
    }
    if (top.has("fit")) site.fit = top.at("fit");
    return site;
  });
}

SiteProfile read_site_profile(const std::filesystem::path& path) {
  return site_profile_from_json(read_json_file(path), path.string());
}

void write_site_profile(const std::filesystem::path& path, const SiteProfile& site) {
  write_file_atomic(path, site_profile_to_json(site).dump(2) + "\n");
}

namespace {

// Scales an engine's host costs, each kept inside its documented range (the engine's own, else the physical bound).
void scale_host(EngineProfile& profile, double scale) {
  for (const char* field : kEngineFittedFields) {
    double& value = engine_field(profile, field);
    if (!(value > 0)) continue;  // a cost the engine does not pay stays unpaid
    const auto range = profile.ranges.find(field);
    const auto [lo, hi] =
        range != profile.ranges.end() ? range->second : std::pair{engine_bound(field).lo, engine_bound(field).hi};
    value = std::clamp(value * scale, lo, hi);
  }
}

}  // namespace

SimParams apply_site(SimParams params, const SiteProfile& site) {
  for (const SiteCorrection& c : site.corrections) {
    if (c.knob == SiteKnob::host) {
      scale_host(params.engines.at(c.target), c.value);
      continue;
    }
    GpuSiteScales& s = params.site_gpus[c.target];
    (c.knob == SiteKnob::compute ? s.compute : c.knob == SiteKnob::memory ? s.memory : s.power) = c.value;
  }
  return params;
}

}  // namespace llmco2::sim
