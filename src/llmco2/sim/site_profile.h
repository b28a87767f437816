// sim/site_profile.h - a site profile: small bounded corrections of the global simulator parameters for the GPUs and
// engines of one deployment, fitted by `llmco2 calibrate --site` on the site's own benchmark (docs/calibration.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "sim/module.h"
#include "sim/sim_params.h"

namespace llmco2::sim {

// What a correction multiplies: a GPU type's matrix-kernel efficiencies (GEMM, attention, MLA), its achievable
// memory bandwidth, its dynamic power, or an engine's host costs per step, launch and sequence.
enum class SiteKnob { compute, memory, power, host };

// A knob's range and the spread the global fit leaves for it: a site's correction is a multiplier in [lo, hi], drawn
// toward 1 by a prior of `prior_sd` (log scale), so that a few rows move it little and many rows move it freely.
struct SiteKnobInfo {
  SiteKnob knob;
  std::string_view name;  // in site-NAME.json: "compute_scale", ...
  bool per_gpu;           // its target is a GPU type (else an engine)
  double lo, hi, prior_sd;
  std::string_view why;  // the physical argument for the range and the prior
};
const std::vector<SiteKnobInfo>& site_knobs();
const SiteKnobInfo& site_knob(SiteKnob knob);

struct SiteCorrection {
  std::string target;  // a GPU catalog id (compute, memory, power) or an engine id (host)
  SiteKnob knob = SiteKnob::compute;
  double value = 1;       // the multiplier applied over the global parameter
  double sd = 0;          // its posterior standard deviation (log scale: ~relative)
  double data_share = 0;  // how much the site's rows determine it: 0 the global value kept, 1 the rows alone
  size_t rows = 0;        // the site's rows of this target
};

struct SiteProfile {
  std::string name;
  std::vector<std::string> data;  // the files it was fitted on
  size_t rows = 0;                // rows fitted
  std::vector<SiteCorrection> corrections;
  std::vector<std::string> global;  // what stays global and why ("power_scale of h100-sxm: no energy measured")
  Json fit;                         // the rows' error before and after (calibration/site_fit.h)
};

// A correction counts as identified by the site's rows when they determine at least half of it.
constexpr double kIdentifiedDataShare = 0.5;

Json site_profile_to_json(const SiteProfile& site);
// Checks every correction: a known knob, a value inside its range, a GPU or engine id. Errors name file and key.
SiteProfile site_profile_from_json(const Json& json, const std::string& source);
SiteProfile read_site_profile(const std::filesystem::path& path);
void write_site_profile(const std::filesystem::path& path, const SiteProfile& site);  // atomic

// The parameters with the site's corrections: GPU types' scales into params.site_gpus, engines' host costs scaled in
// params.engines (each kept inside the engine's documented range).
SimParams apply_site(SimParams params, const SiteProfile& site);

}  // namespace llmco2::sim
