// train_cli/cmd_train.cc - `llmco2 train`: fits one predictor on dataset CSVs and writes its model file.
#include <iostream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "predictor/registry.h"
#include "train_cli/commands.h"
#include "training/baselines_fit.h"
#include "training/gnn_trainer.h"

namespace llmco2::cli {
namespace {

struct TrainOptions {
  std::vector<std::string> data;
  std::string out, predictor = "llmco2", features, scaling, params;
  int epochs = 150, patience = 20, hidden = 64, threads = 2, batch_size = 512, trees = 100, depth = 12;
  uint64_t seed = 1;
  bool quiet = false;
};

std::vector<const Example*> pointers(const ExampleSet& set) {
  std::vector<const Example*> out;
  for (const auto& e : set.examples) out.push_back(&e);
  return out;
}

}  // namespace

ModelFile train_predictor(const std::string& predictor, const std::vector<DatasetRow>& rows, const SimParams& params,
                          const TrainSettings& s) {
  const PredictorInfo& info = predictor_info(predictor);
  if (info.family == PredictorFamily::simulator)
    fail("--predictor sim: the simulator has no model to train (llmco2 calibrate fits its parameters)");
  if (info.family != PredictorFamily::gnn) {
    const ExampleSet set = make_examples(rows, FeatureSet::merged, params, s.progress);
    if (info.family == PredictorFamily::analytic) return llmcarbon_model_file(fit_llmcarbon_utilisation(pointers(set)));
    DeepEnOptions o;
    o.trees = s.trees;
    o.max_depth = s.depth;
    o.seed = s.seed;
    o.threads = s.threads;
    return fit_deepen(pointers(set), o);
  }
  GnnRecipe recipe = info.recipe;
  if (s.features) recipe.features = *s.features;
  if (s.scaling) recipe.scaling = *s.scaling;
  const ExampleSet set = make_examples(rows, recipe.features, params, s.progress);
  if (s.progress)
    std::cerr << fmt::format("{}: {} examples ({} rows skipped: no catalog model/GPU or no energy)\n", predictor,
                             set.examples.size(), set.skipped.size());
  GnnTrainOptions o;
  o.name = predictor;
  o.scaling = recipe.scaling;
  o.phase_outputs = recipe.phase_outputs;
  o.hidden = s.hidden;
  o.max_epochs = s.epochs;
  o.patience = s.patience;
  o.seed = s.seed;
  o.threads = s.threads;
  o.batch_size = s.batch_size;
  o.progress = s.progress;
  return gnn_to_file(train_gnn(pointers(set), recipe.features, o));
}

void add_train_command(CLI::App& app) {
  auto* command = app.add_subcommand("train", "train a predictor on dataset CSVs and write its model file");
  auto o = std::make_shared<TrainOptions>();
  command->add_option("--data", o->data, "dataset CSVs (llmco2 simulate --plan, llmco2 import)")->required()
      ->delimiter(',');
  command->add_option("--out", o->out, "model file to write")->required();
  std::vector<std::string> trainable;  // every registered predictor but the simulator (predictor/registry.h)
  for (const PredictorInfo& p : predictor_registry())
    if (p.family != PredictorFamily::simulator) trainable.emplace_back(p.name);
  command->add_option("--predictor", o->predictor, join_or(trainable))
      ->capture_default_str();
  command->add_option("--features", o->features, "GNN features: llmco2, phases or merged (default: the predictor's)");
  command->add_option("--scaling", o->scaling, "GNN target: log or sim_ratio (default: the predictor's)");
  command->add_option("--epochs", o->epochs, "most epochs")->check(CLI::Range(1, 100000))->capture_default_str();
  command->add_option("--patience", o->patience, "epochs without validation gain before stopping")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  command->add_option("--hidden", o->hidden, "hidden width")->check(CLI::Range(4, 1024))->capture_default_str();
  command->add_option("--batch-size", o->batch_size, "GNN: graphs per Adam step (paper 4.1: 512)")
      ->check(CLI::Range(1, 65536))->capture_default_str();
  command->add_option("--trees", o->trees, "DeepEn: trees per forest")->check(CLI::Range(1, 10000))
      ->capture_default_str();
  command->add_option("--depth", o->depth, "DeepEn: tree depth")->check(CLI::Range(1, 32))->capture_default_str();
  command->add_option("--threads", o->threads, "CPU threads (libtorch intra-op; one more thread collates batches)")
      ->check(CLI::Range(1, 256))->capture_default_str();
  command->add_option("--seed", o->seed, "seed (split, initialisation, batches)")->capture_default_str();
  command->add_option("--params", o->params, "simulator parameters for the physics features (default: data/sim/params.json)");
  command->add_flag("--quiet", o->quiet, "no progress lines");
  command->callback([o] {
    const SimParams params = load_sim_params_or_default(o->params);
    const std::vector<DatasetRow> rows = read_datasets(o->data);
    TrainSettings s;
    if (!o->features.empty()) s.features = parse_feature_set(o->features);
    if (!o->scaling.empty()) s.scaling = parse_target_scaling(o->scaling);
    s.epochs = o->epochs;
    s.patience = o->patience;
    s.hidden = o->hidden;
    s.threads = o->threads;
    s.batch_size = o->batch_size;
    s.trees = o->trees;
    s.depth = o->depth;
    s.seed = o->seed;
    s.progress = !o->quiet;
    ModelFile file = train_predictor(o->predictor, rows, params, s);
    file.header["info"]["data"] = o->data;
    write_model_file(o->out, file);
    std::cerr << fmt::format("wrote {} ({} model)\n", o->out, file.header.value("kind", ""));
  });
}

}  // namespace llmco2::cli
