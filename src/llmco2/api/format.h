// api/format.h - the answers' two forms, one definition each: the JSON documents (CLI --format json, HTTP, Python)
// and the tables the CLI prints.
#pragma once

#include <string>

#include "api/module.h"
#include "api/resolve.h"
#include "carbon/footprint.h"
#include "core/json_io.h"

namespace llmco2::api {

// The request as JSON fields (model, gpu, gpus, batch, prompt_tokens, gen_tokens, dtype, engine, notes) and as one
// line.
Json request_json(const ResolvedRequest& r);
// The request's speculative decoding: method, draft tokens, tokens per verification and their basis; null when off.
Json speculation_json(const Speculation& speculation);
std::string request_line(const ResolvedRequest& r);
// " x N stages" for a request with pipeline stages, else "": after the GPUs per stage in a setup's words.
std::string stages_words(const graph::Request& request);

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

}  // namespace llmco2::api
