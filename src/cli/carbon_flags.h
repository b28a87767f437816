// cli/carbon_flags.h - the carbon flags shared by predict, trace, compare and serve-sim (--scope --node --region --ci
// --pue --lifetime --embodied-basis --embodied-kg), bound to the carbon fields of the API's Request.
#pragma once

#include <CLI/CLI.hpp>

#include "api/format.h"
#include "api/resolve.h"
#include "llmco2/api.h"

namespace llmco2::cli {

using api::carbon_inputs_json;
using api::energy_scope_json;

void add_carbon_flags(CLI::App& command, api::Request& request);

// The carbon inputs of `gpus` GPUs of type `gpu` (paths allowed). Throws Error naming the flag.
CarbonInputs resolve_carbon(const api::Request& request, const Gpu& gpu, int gpus);

}  // namespace llmco2::cli
