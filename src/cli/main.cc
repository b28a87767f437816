// cli/main.cc - the llmco2 command line: the one place errors are caught and turned into a line on stderr.
#include <algorithm>
#include <exception>
#include <string>
#include <vector>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "core/names.h"

namespace {

constexpr int kUsageOrInputError = 2;
constexpr int kInternalError = 3;

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* command : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(command->get_name());
  return names;
}

// CLI11 reports a mistyped command as "A subcommand is required"; name it instead.
bool is_unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const auto names = command_names(app);
  return std::find(names.begin(), names.end(), argv[1]) == names.end();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"llmco2: energy, latency and carbon of an LLM inference request, before it runs"};
  app.require_subcommand(1);
  llmco2::cli::add_graph_command(app);
  llmco2::cli::add_models_command(app);
  llmco2::cli::add_gpus_command(app);
  llmco2::cli::add_simulate_command(app);
  llmco2::cli::add_import_command(app);
  llmco2::cli::add_calibrate_command(app);
  if (is_unknown_command(app, argc, argv)) {
    std::cerr << "llmco2: error: unknown command '" << argv[1] << "' (expected "
              << llmco2::join_or(command_names(app)) << "; see --help)\n";
    return kUsageOrInputError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "llmco2: error: " << e.what() << "\n";
    return kUsageOrInputError;
  } catch (const llmco2::Error& e) {
    std::cerr << "llmco2: error: " << e.what() << "\n";
    return kUsageOrInputError;
  } catch (const std::exception& e) {
    std::cerr << "llmco2: internal error: " << e.what() << "\n";
    return kInternalError;
  }
  return 0;
}
