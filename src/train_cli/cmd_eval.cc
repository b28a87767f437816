// train_cli/cmd_eval.cc - `llmco2 eval`: binds the flags to research::evaluate (every predictor trained and scored
// on the paper's protocol and on a measured source held out) and prints what was written.
#include <iostream>

#include <fmt/format.h>

#include "llmco2/training.h"
#include "train_cli/commands.h"

namespace llmco2::cli {

void add_eval_command(CLI::App& app) {
  auto* command = app.add_subcommand("eval", "train every predictor and score it on both test sets; write the report");
  auto o = std::make_shared<research::EvalOptions>();
  o->predictors = research::evaluated_predictors();
  command->add_option("--train-count", o->train_count, "simulated training configurations")
      ->check(CLI::Range(100L, 10000000L))
      ->capture_default_str();
  command->add_option("--test-count", o->test_count, "simulated test configurations (a)")
      ->check(CLI::Range(10L, 10000000L))
      ->capture_default_str();
  command->add_option("--held-out", o->held_out, "measured source held out as test set (b)")->capture_default_str();
  command->add_option("--measured", o->measured_dir, "folder of imported measurements (default: data/measured)");
  command->add_option("--predictors", o->predictors, "predictors to evaluate")->delimiter(',')->capture_default_str();
  command->add_option("--report", o->report, "Markdown report to write")->capture_default_str();
  command->add_option("--plots", o->plots, "folder for the PNG plots")->capture_default_str();
  command->add_option("--error-bands", o->error_bands,
                      "where to write each predictor's error band on test set (b) (default: "
                      "data/predictors/error_bands.json; empty: do not write)");
  command->add_option("--max-evaluations", o->max_evaluations, "simulator refit budget for (b)")->capture_default_str();
  command->add_option("--epochs", o->train.epochs, "most GNN epochs")->capture_default_str();
  command->add_option("--patience", o->train.patience, "GNN early-stopping patience")->capture_default_str();
  command->add_option("--seed", o->train.seed, "seed of sampling, splits and training")->capture_default_str();
  command->add_option("--threads", o->train.threads, "CPU threads")->capture_default_str();
  command->add_flag(
      "--quiet", [o](int64_t) { o->train.progress = false; }, "no progress lines");
  command->callback([o] {
    const research::EvalSummary s = research::evaluate(*o);
    if (!s.error_bands_written.empty()) std::cerr << "wrote " << s.error_bands_written << "\n";
    for (const auto& warning : s.warnings) std::cerr << "warning: " << warning << "\n";
    std::cerr << fmt::format("wrote {} ({:.0f} s)\n", s.report_written, s.seconds);
  });
}

}  // namespace llmco2::cli
