// train_cli/commands.h - the subcommands of llmco2-train (the libtorch half of the CLI: train and eval), each
// binding its flags to a call of llmco2/training.h.
#pragma once

#include <CLI/CLI.hpp>

namespace llmco2::cli {

void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);

}  // namespace llmco2::cli
