// cli/request_flags.h - the request flags shared by every command (--model --gpu --gpus --batch --prompt --gen ...),
// bound straight to the public API's Request (llmco2/api.h), so the CLI reads a request as the server and the
// bindings do.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "llmco2/api.h"

namespace llmco2::cli {

// `with_tokens`: also --prompt and --gen (commands that take tokens from a file leave them out).
void add_request_flags(CLI::App& command, api::Request& request, bool with_tokens = true);

// The notes and warnings of an API result, each as one "llmco2: note: ..." line on stderr.
void print_warnings(const std::vector<std::string>& lines);

}  // namespace llmco2::cli
