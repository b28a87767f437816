// cli/cmd_validate.cc - `llmco2 validate`: binds the flags to research::validate (held-out accuracy, evidence labels,
// conformal intervals and ranking quality on every imported public source) and prints what was written.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_validate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "validate", "score the default predictor and its baselines on every public source, held out (docs/accuracy.md)");
  auto o = std::make_shared<research::ValidateOptions>();
  command->add_option("--data", o->data_dir, "folder of dataset CSVs (default: data/measured)");
  command->add_option("--report", o->report, "markdown report; plots go to <its folder>/<its stem>/")
      ->capture_default_str();
  command->add_option("--index-out", o->index_out, "evidence index (default: data/evidence/index.csv)");
  command->add_option("--intervals-out", o->intervals_out,
                      "intervals per label (default: data/evidence/intervals.json)");
  command->add_option("--level", o->level, "the intervals' nominal coverage")
      ->check(CLI::Range(0.5, 0.99))
      ->capture_default_str();
  command->add_option("--max-evaluations", o->max_evaluations, "objective evaluations per held-out fit")
      ->check(CLI::Range(10, 1000000))
      ->capture_default_str();
  command->add_option("--rows-out", o->rows_out,
                      "also write a CSV of every held-out prediction: its label, and whether its interval covered it");
  command->add_option("--threads", o->threads, "parallel held-out fits (default: every core)");
  command->add_option("--predictor", o->predictors,
                      "also score these bundled predictors beside the simulator, as they are (repeatable)");
  command->add_option("--model-file", o->model_file, "also score the model file of llmco2 train, as it is");
  command->callback([o] {
    const research::ValidateSummary s = research::validate(*o);
    for (const auto& warning : s.warnings) std::cerr << "validate: " << warning << "\n";
    std::cerr << fmt::format("validate: {} rows; wrote {}, {} and {} in {:.0f} s\n", s.rows, s.report_written,
                             s.index_written, s.intervals_written, s.seconds);
  });
}

}  // namespace llmco2::cli
