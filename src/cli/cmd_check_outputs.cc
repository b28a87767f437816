// cli/cmd_check_outputs.cc - `llmco2 check-outputs MANIFEST`: which outputs a run's manifest lists are that run's as
// finished (size and checksum match); exit code 0 when all are, 1 when some are missing or were rewritten since.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_check_outputs_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "check-outputs", "check a run's outputs against its manifest (manifest.json or <file>.manifest.json)");
  auto manifest = std::make_shared<std::string>();
  command->add_option("manifest", *manifest, "the run's manifest")->required();
  command->callback([manifest] {
    const std::vector<std::string> stale = research::check_outputs(*manifest);
    for (const auto& line : stale) std::cout << "not from this run: " << line << "\n";
    if (stale.empty()) std::cout << fmt::format("{}: every output is as the run wrote it\n", *manifest);
    if (!stale.empty()) throw CLI::RuntimeError(1);
  });
}

}  // namespace llmco2::cli
