// train_cli/cmd_train.cc - `llmco2 train`: binds the flags to research::train (one predictor fitted on dataset CSVs,
// its model file written).
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "llmco2/training.h"
#include "train_cli/commands.h"

namespace llmco2::cli {

void add_train_command(CLI::App& app) {
  auto* command = app.add_subcommand("train", "train a predictor on dataset CSVs and write its model file");
  auto o = std::make_shared<research::TrainOptions>();
  auto quiet = std::make_shared<bool>(false);
  research::TrainSettings& s = o->settings;
  command->add_option("--data", o->data, "dataset CSVs (llmco2 simulate --plan, llmco2 import)")
      ->required()
      ->delimiter(',');
  command->add_option("--out", o->out, "model file to write")->required();
  command->add_option("--predictor", o->predictor, fmt::format("{}", fmt::join(research::trainable_predictors(), ", ")))
      ->capture_default_str();
  command->add_option("--features", s.features, "GNN features: llmco2, phases or merged (default: the predictor's)");
  command->add_option("--scaling", s.scaling, "GNN target: log or sim_ratio (default: the predictor's)");
  command->add_option("--epochs", s.epochs, "most epochs")->check(CLI::Range(1, 100000))->capture_default_str();
  command->add_option("--patience", s.patience, "epochs without validation gain before stopping")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--hidden", s.hidden, "hidden width")->check(CLI::Range(4, 1024))->capture_default_str();
  command->add_option("--batch-size", s.batch_size, "GNN: graphs per Adam step (paper 4.1: 512)")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  command->add_option("--trees", s.trees, "DeepEn: trees per forest")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  command->add_option("--depth", s.depth, "DeepEn: tree depth")->check(CLI::Range(1, 32))->capture_default_str();
  command->add_option("--threads", s.threads, "CPU threads (libtorch intra-op; one more thread collates batches)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  command->add_option("--seed", s.seed, "seed (split, initialisation, batches)")->capture_default_str();
  command->add_option("--params", o->params,
                      "simulator parameters for the physics features (default: data/sim/params.json)");
  command->add_flag("--quiet", *quiet, "no progress lines");
  command->callback([=] {
    research::TrainOptions options = *o;
    options.settings.progress = !*quiet;
    const std::string kind = research::train(options);
    std::cerr << fmt::format("wrote {} ({} model)\n", options.out, kind);
  });
}

}  // namespace llmco2::cli
