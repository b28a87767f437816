// cli/cmd_serve_validate.cc - `llmco2 serve-validate`: binds the flags to research::serve_validate (measured load
// tests replayed through serve-sim as their harness ran them) and prints its table and the skipped rows.
#include <iostream>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_serve_validate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "serve-validate",
      "replay measured steady-state load tests (ML.ENERGY v3) through serve-sim as their harness ran "
      "them and score energy per request and inter-token latency");
  auto o = std::make_shared<research::ServeValidateOptions>();
  auto quiet = std::make_shared<bool>(false);
  command->add_option("--data", o->data_dir, "folder of dataset CSVs (default: data/measured)");
  command->add_option("--source", o->source, "rows of this source")->capture_default_str();
  command->add_option("--params", o->params, "simulator parameters (default: data/sim/params.json)");
  command->add_option("--rows-out", o->rows_out, "per-row CSV of measured and simulated figures");
  command->add_option("--markdown-out", o->markdown_out, "the table as a Markdown file");
  command
      ->add_option("--held-out", o->held_out,
                   "source (fit without the validated source), gpu (without each "
                   "GPU type in turn) or none (--params as given)")
      ->check(CLI::IsMember({"source", "gpu", "none"}))
      ->capture_default_str();
  command->add_flag("--quiet", *quiet, "no progress line");
  command->callback([=] {
    research::ServeValidateOptions options = *o;
    options.progress = !*quiet;
    const api::Result result = research::serve_validate(options);
    std::cout << result.text;
    for (const auto& line : result.warnings) std::cerr << line << "\n";
  });
}

}  // namespace llmco2::cli
