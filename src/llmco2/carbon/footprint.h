// carbon/footprint.h - the carbon of a predicted request: operational = energy x PUE x grid carbon intensity, the
// energy in its scope (the GPUs' own, or the used GPUs' share of the node's wall power: hardware/host_power.h),
// embodied = each GPU's embodied carbon x (latency / lifetime) x GPU count; with 80% intervals [P / f, P x f] from the
// predictor's error factor f on held-out measurements. A GPU without a sourced embodied figure gets no embodied CO2
// and a total that is the operational CO2 alone, said in `embodied_unknown`.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "carbon/embodied.h"
#include "carbon/module.h"
#include "core/json_io.h"
#include "hardware/host_power.h"
#include "predictor/error_band.h"
#include "predictor/predictor.h"

namespace llmco2::carbon {

// Everything the carbon of a request depends on besides its energy and latency, with where each value came from.
struct CarbonInputs {
  std::string region;  // region id, or "--ci" when the intensity was given
  double ci_g_per_kwh = 0;
  std::string ci_label;   // short: "France (FRA), 2023"
  std::string ci_source;  // the label and the full source
  double pue = 1;
  std::string pue_label;  // short: "azure, 2024" or "unknown: 1.0 assumed"
  std::string pue_source;
  GpuEmbodied embodied;  // one GPU
  double lifetime_years = 5;
  int gpus = 1;
  EnergyScope scope;  // which energy the figures count (GPU scope when unset)
};

// The carbon inputs of a setup of `gpus` GPUs of one type (its embodied figure, possibly unknown, and the region);
// throws Error when they cannot be had.
using CarbonFor = std::function<CarbonInputs(const Gpu& gpu, int gpus)>;

struct Interval {
  double low = 0, high = 0;
};
struct PhaseIntervals {
  std::optional<Interval> prefill, decode, total;
};

// The three phases as members of PhaseValues and PhaseIntervals, for code that treats them alike.
struct PhaseMember {
  const char* name;
  std::optional<double> PhaseValues::*value;
  std::optional<Interval> PhaseIntervals::*interval;
};
inline constexpr PhaseMember kPhaseMembers[] = {{"prefill", &PhaseValues::prefill, &PhaseIntervals::prefill},
                                                {"decode", &PhaseValues::decode, &PhaseIntervals::decode},
                                                {"total", &PhaseValues::total, &PhaseIntervals::total}};

struct Footprint {
  std::string energy_scope = "gpu";  // "gpu" or "node": what energy_j and operational_g count
  PhaseValues energy_j, latency_s, operational_g, embodied_g, total_g;  // embodied_g unset when unknown
  // Set when the GPU has no embodied figure: "unknown (no sourced embodied figure for b200)"; total_g is then the
  // operational CO2 only.
  std::optional<std::string> embodied_unknown;
  bool has_intervals = false;  // the predictor has error bands: the intervals below are set
  PhaseIntervals energy_j_interval, latency_s_interval, operational_g_interval, embodied_g_interval, total_g_interval;
};

// g CO2e of `energy_j` drawn by the GPUs in a facility of `pue` on a grid of `ci_g_per_kwh`.
double operational_g(double energy_j, double pue, double ci_g_per_kwh);

// The energy of each phase in `scope` for `gpus` GPUs: as predicted at GPU scope; at node scope the node's wall power
// at the phase's mean GPU power, times the used GPUs' share and the phase's latency.
PhaseValues scoped_energy_j(const Prediction& prediction, const EnergyScope& scope, int gpus);

// A quantity as every JSON result writes it (docs/schema.md): {"prefill", "decode", "total"}, a phase null where it is
// not known, the total the phases' sum where only they are. `scale` converts the unit (J to Wh).
Json quantity_json(const PhaseValues& values, double scale = 1.0);
// A total alone: {"prefill": null, "decode": null, "total": total}.
Json total_json(double total);

// The footprint of a prediction. `bands` may be null (no intervals).
Footprint footprint(const Prediction& prediction, const CarbonInputs& inputs, const PredictorErrorBands* bands);

}  // namespace llmco2::carbon
