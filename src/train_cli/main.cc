// train_cli/main.cc - llmco2-train: the `train` and `eval` commands, the part of the CLI that links libtorch.
#include <CLI/CLI.hpp>

#include "cli/run_app.h"
#include "train_cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"llmco2 train/eval: fit the predictors and measure their accuracy"};
  app.require_subcommand(1);
  llmco2::cli::add_train_command(app);
  llmco2::cli::add_eval_command(app);
  return llmco2::cli::run_app(app, "llmco2", argc, argv);
}
