// cli/run_app.h - parsing and running a CLI11 app, the one place errors become one line on stderr and an exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace llmco2::cli {

inline constexpr int kUsageOrInputError = 2;
inline constexpr int kInternalError = 3;

// Parses argv and runs the chosen subcommand; returns the process exit code.
int run_app(CLI::App& app, const char* program, int argc, char** argv);

}  // namespace llmco2::cli
