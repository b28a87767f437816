// cli/predictor_flags.h - choosing a predictor (--predictor, --model-file, --params), shared by predict, trace and
// compare: the request's predictor and the API session's settings.
#pragma once

#include <CLI/CLI.hpp>

#include "llmco2/api.h"

namespace llmco2::cli {

void add_predictor_flags(CLI::App& command, api::Request& request, api::Settings& settings);

}  // namespace llmco2::cli
