// cli/main.cc - the llmco2 command line. `train` and `eval` run in llmco2-train (libtorch), `serve` in llmco2-serve
// (the HTTP server), and what needs dlopen in llmco2-dynamic: predict must pay for none of them at start-up.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string_view>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/run_app.h"
#include "core/dynamic_loading.h"
#include "llmco2/api.h"

namespace {

// Whether the command loads a library with dlopen: NVML (measure) or libxgboost (a --predictor that loads it, as
// api::predictor_loads_library says, and --model-file, whose file may hold forests). An argument that only looks
// like one costs a detour, not an error.
bool needs_dlopen(int argc, char** argv) {
  if (std::string_view(argv[1]) == "measure") return true;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--model-file" || arg.starts_with("--model-file=")) return true;
    if (arg.starts_with("--predictor=") && llmco2::api::predictor_loads_library(arg.substr(12))) return true;
    if (arg == "--predictor" && i + 1 < argc && llmco2::api::predictor_loads_library(argv[i + 1])) return true;
  }
  return false;
}

// The commands another program beside llmco2 runs, so that llmco2 itself maps neither libtorch (train, eval: a
// libtorch process costs ~0.4 s before main) nor the HTTP server and its threads (serve), and can be
// linked statically (no dynamic loader at start-up): llmco2-dynamic, the same commands linked dynamically, runs
// those that dlopen.
const char* sibling_program(int argc, char** argv) {
  if (argc < 2) return nullptr;
  const std::string_view command = argv[1];
  if (command == "train" || command == "eval") return "llmco2-train";
  if (command == "serve") return "llmco2-serve";
  if (!llmco2::can_dlopen() && needs_dlopen(argc, argv)) return "llmco2-dynamic";
  return nullptr;
}

// libgomp's threads (libtorch's intra-op threads in llmco2-train) spin 300,000 rounds at each barrier before they
// sleep. On a machine shared with other jobs a spinning thread burns the CPU share that the thread it waits for
// needs: `train --threads 2` took 10x the wall time of --threads 1 at load 10 (docs/history/performance-log.md,
// Training). A short spin keeps an idle machine's barriers quick. The user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT
// wins.
void shorten_openmp_spinning() {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) setenv("GOMP_SPINCOUNT", "10000", 0);
}

// Replaces this process with `program` (installed beside llmco2), passing the arguments on (llmco2-dynamic gets
// argv[0] as it is, so that its usage lines name the program as llmco2's would).
int exec_sibling(const char* program, char** argv) {
  if (std::string_view(program) == "llmco2-train") shorten_openmp_spinning();
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto path = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / program;
  if (std::string_view(program) != "llmco2-dynamic") argv[0] = const_cast<char*>("llmco2");
  execv(path.c_str(), argv);
  std::cerr << "llmco2: error: '" << argv[1] << "' needs " << path.string()
            << ", which could not be run (make test builds it; make demo builds the CLI alone)\n";
  return llmco2::cli::kUsageOrInputError;
}

// The subcommands, in the order `llmco2 --help` lists them, each with the function that registers it.
struct Command {
  std::string_view name;
  void (*add)(CLI::App&);
};
constexpr Command kCommands[] = {
    {"graph", llmco2::cli::add_graph_command},
    {"models", llmco2::cli::add_models_command},
    {"gpus", llmco2::cli::add_gpus_command},
    {"nodes", llmco2::cli::add_nodes_command},
    {"simulate", llmco2::cli::add_simulate_command},
    {"import", llmco2::cli::add_import_command},
    {"import-bench", llmco2::cli::add_import_bench_command},
    {"calibrate", llmco2::cli::add_calibrate_command},
    {"plan-site", llmco2::cli::add_plan_site_command},
    {"validate", llmco2::cli::add_validate_command},
    {"sample", llmco2::cli::add_sample_command},
    {"predict", llmco2::cli::add_predict_command},
    {"trace", llmco2::cli::add_trace_command},
    {"compare", llmco2::cli::add_compare_command},
    {"measure", llmco2::cli::add_measure_command},
    {"serve-sim", llmco2::cli::add_serve_sim_command},
    {"make-log", llmco2::cli::add_make_log_command},
    {"serve-validate", llmco2::cli::add_serve_validate_command},
    {"check-outputs", llmco2::cli::add_check_outputs_command},
    {"score-campaign", llmco2::cli::add_score_campaign_command},
};

// The command argv[1] names, or nullptr (none, an option, a sibling's or a mistyped one).
const Command* named_command(int argc, char** argv) {
  if (argc < 2) return nullptr;
  for (const Command& command : kCommands)
    if (command.name == argv[1]) return &command;
  return nullptr;
}

// Ends the process once a command has run: its output flushed, then _Exit, without the destructors of the command's
// options and the catalogs it read (tens of thousands of small blocks freed one by one, for memory the kernel takes
// back whole: ~0.1 ms of `predict`). Each command has committed its files and joined its threads by now.
[[noreturn]] void exit_now(int code) {
  std::cout.flush();
  std::clog.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace

// A named command is the only one registered (parsing it reads nothing of the others, and building every command's
// options cost predict about a third of its start-up); otherwise all are, for --help and the unknown-command message.
int main(int argc, char** argv) {
  if (const char* program = sibling_program(argc, argv)) return exec_sibling(program, argv);
  if (argc == 2 && std::string_view(argv[1]) == "--version") {  // llmco2's version and what its answers rest on
    const llmco2::api::Json v = llmco2::api::Session().versions();
    std::cout << "llmco2 " << v["llmco2"].get<std::string>() << "\ndata " << v["data"].get<std::string>() << " ("
              << v["checksum"].get<std::string>() << " of data/)\n";
    for (const auto& [name, checksum] : v["predictors"].items())
      std::cout << "predictor " << name << " " << checksum.get<std::string>() << "\n";
    return 0;
  }
  CLI::App app{"llmco2: energy, latency and carbon of an LLM inference request, before it runs"};
  app.require_subcommand(1);
  if (const Command* command = named_command(argc, argv)) {
    command->add(app);
    exit_now(llmco2::cli::run_app(app, "llmco2", argc, argv));
  }
  for (const Command& command : kCommands) command.add(app);
  app.add_subcommand("train", "train a predictor (runs llmco2-train; see llmco2 train --help)");
  app.add_subcommand("eval", "evaluate every predictor on both test sets (runs llmco2-train)");
  app.add_subcommand("serve", "serve the HTTP API and the web calculator (runs llmco2-serve; docs/api.md)");
  return llmco2::cli::run_app(app, "llmco2", argc, argv);
}
