// cli/carbon_flags.h - the carbon flags shared by predict, trace, compare and serve-sim (--scope --node --region --ci
// --pue --lifetime --embodied-basis --embodied-kg), bound to the carbon fields of the API's Request.
#pragma once

#include <CLI/CLI.hpp>

#include "llmco2/api.h"

namespace llmco2::cli {

void add_carbon_flags(CLI::App& command, api::Request& request);

}  // namespace llmco2::cli
