// cli/main.cc - the llmco2 command line. `train` and `eval` run in llmco2-train, the only program linking libtorch
// (a libtorch process costs ~0.4 s before main; predict must not pay it).
#include <filesystem>
#include <iostream>
#include <string_view>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/run_app.h"

namespace {

bool runs_in_trainer(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view command = argv[1];
  return command == "train" || command == "eval";
}

// Replaces this process with llmco2-train (installed beside llmco2), passing the arguments on.
int exec_trainer(char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto trainer = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "llmco2-train";
  argv[0] = const_cast<char*>("llmco2");
  execv(trainer.c_str(), argv);
  std::cerr << "llmco2: error: '" << argv[1] << "' needs " << trainer.string()
            << ", which could not be run (build it with make build)\n";
  return llmco2::cli::kUsageOrInputError;
}

}  // namespace

int main(int argc, char** argv) {
  if (runs_in_trainer(argc, argv)) return exec_trainer(argv);
  CLI::App app{"llmco2: energy, latency and carbon of an LLM inference request, before it runs"};
  app.require_subcommand(1);
  llmco2::cli::add_graph_command(app);
  llmco2::cli::add_models_command(app);
  llmco2::cli::add_gpus_command(app);
  llmco2::cli::add_nodes_command(app);
  llmco2::cli::add_simulate_command(app);
  llmco2::cli::add_import_command(app);
  llmco2::cli::add_calibrate_command(app);
  llmco2::cli::add_sample_command(app);
  llmco2::cli::add_predict_command(app);
  llmco2::cli::add_trace_command(app);
  llmco2::cli::add_compare_command(app);
  llmco2::cli::add_measure_command(app);
  llmco2::cli::add_serve_sim_command(app);
  llmco2::cli::add_serve_validate_command(app);
  llmco2::cli::add_check_outputs_command(app);
  llmco2::cli::add_serve_command(app);
  app.add_subcommand("train", "train a predictor (runs llmco2-train; see llmco2 train --help)");
  app.add_subcommand("eval", "evaluate every predictor on both test sets (runs llmco2-train)");
  return llmco2::cli::run_app(app, "llmco2", argc, argv);
}
