// cli/carbon_flags.h - the carbon flags shared by predict, trace, compare and serve-sim (--scope --node --region --ci
// --pue --lifetime --embodied-basis --embodied-kg), and the footprint as JSON and as a table.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "carbon/footprint.h"
#include "core/json_io.h"
#include "hardware/gpu.h"

namespace llmco2::cli {

struct CarbonFlags {
  std::string scope = "node";         // gpu: the GPUs' energy (NVML); node: the node's wall energy, the GPUs' share
  std::string node;                   // node catalog id or file; empty: the GPU type's default node
  std::string region;                 // empty: WORLD unless --ci
  std::optional<double> ci;           // g/kWh, overrides the region's intensity
  std::string pue;                    // number or data/carbon/pue.csv id; empty: the region's provider, else 1.0
  std::optional<double> lifetime_years;
  std::string embodied_basis = "llmcarbon";
  std::optional<double> embodied_kg;  // per GPU; sets the basis to "user"
};

void add_carbon_flags(CLI::App& command, CarbonFlags& flags);

// The energy scope for `gpu`: GPU scope, or its node (--node, else the catalog's default for the GPU type; GPU scope
// with the reason in `fallback` when the catalog has none). Throws Error naming the flag.
EnergyScope resolve_scope(const CarbonFlags& flags, const Gpu& gpu);

// Resolves the energy scope, region, intensity, PUE and the GPU's embodied carbon. Throws Error naming the flag.
CarbonInputs resolve_carbon(const CarbonFlags& flags, const Gpu& gpu, int gpus);

// {"energy_scope": "gpu" or "node", "node": id or null, "energy_scope_label"}: which energy the figures count.
Json energy_scope_json(const EnergyScope& scope);
// {"pue", "ci_g_per_kwh", "embodied_basis", "lifetime_years", ...} with each value's source.
Json carbon_inputs_json(const CarbonInputs& inputs);
// energy_j, energy_wh, latency_s, co2_g {operational, embodied, total} (each {prefill, decode, total}), and the
// intervals when there are some.
Json footprint_json(const Footprint& footprint, double level);
// A table: one row per quantity, columns prefill, decode, total, each "value [low-high]".
std::string footprint_table(const Footprint& footprint);
// One or two lines on where the intensity, PUE and embodied figure come from.
std::string carbon_inputs_lines(const CarbonInputs& inputs);

}  // namespace llmco2::cli
