// cli/run_app.cc - unknown commands, parse errors, input errors and internal errors, each as one line on stderr.
#include "cli/run_app.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/names.h"
#include "core/output_manifest.h"

namespace llmco2::cli {
namespace {

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

// For an unexpected option ("--batc"), the nearest options of the command ("did you mean --batch?"), or "".
std::string option_suggestion(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return "";
  const CLI::App* command = nullptr;
  for (const auto* c : app.get_subcommands([](const CLI::App*) { return true; }))
    if (c->get_name() == argv[1]) command = c;
  if (!command) return "";
  std::vector<std::string> options;
  for (const auto* option : command->get_options())
    for (const auto& name : option->get_lnames()) options.push_back("--" + name);
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.starts_with("--")) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(options.begin(), options.end(), arg) != options.end()) continue;
    const auto nearest = nearest_names(arg, options, 2);
    if (!nearest.empty()) return " (did you mean " + join_or(nearest) + "?)";
  }
  return "";
}

}  // namespace

int run_app(CLI::App& app, const char* program, int argc, char** argv) {
  if (is_unknown_command(app, argc, argv)) {
    std::cerr << program << ": error: unknown command '" << argv[1] << "' (expected " << join_or(command_names(app))
              << "; see --help)\n";
    return kUsageOrInputError;
  }
  set_run_command_line({argv, argv + argc});  // what output manifests record
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {  // a command's own non-zero exit, already explained on stdout/stderr
    return e.get_exit_code();
  } catch (const CLI::ExtrasError& e) {
    std::cerr << program << ": error: " << e.what() << option_suggestion(app, argc, argv) << "\n";
    return kUsageOrInputError;
  } catch (const CLI::ParseError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return kUsageOrInputError;
  } catch (const Error& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return kUsageOrInputError;
  } catch (const std::filesystem::filesystem_error& e) {  // an output folder that cannot be made or written: the
    // user's path, not llmco2's fault
    std::cerr << program << ": error: " << e.path1().string() << ": " << e.code().message() << "\n";
    return kUsageOrInputError;
  } catch (const std::exception& e) {
    std::cerr << program << ": internal error: " << e.what() << "\n";
    return kInternalError;
  }
  return 0;
}

}  // namespace llmco2::cli
