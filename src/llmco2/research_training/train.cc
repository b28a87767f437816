// research_training/train.cc - fitting one learned predictor on dataset rows (`llmco2 train`): LLMCarbon's
// utilisation, DeepEn's forests or a GNN by its registered recipe.
#include "research_training/train.h"

#include <iostream>

#include <fmt/format.h>

#include "core/error.h"
#include "predictor/encoding.h"
#include "predictor/registry.h"
#include "training/baselines_fit.h"
#include "training/gnn_trainer.h"
#include "training/training_set.h"

namespace llmco2::research {
namespace {

std::vector<const Example*> pointers(const ExampleSet& set) {
  std::vector<const Example*> out;
  for (const auto& e : set.examples) out.push_back(&e);
  return out;
}

ModelFile fit_baseline(const PredictorInfo& info, const std::vector<DatasetRow>& rows, const SimParams& params,
                       const TrainSettings& s) {
  const ExampleSet set = make_examples(rows, FeatureSet::merged, params, s.progress);
  if (info.family == PredictorFamily::analytic) return llmcarbon_model_file(fit_llmcarbon_utilisation(pointers(set)));
  DeepEnOptions o;
  o.trees = s.trees;
  o.max_depth = s.depth;
  o.seed = s.seed;
  o.threads = s.threads;
  return fit_deepen(pointers(set), o);
}

}  // namespace

std::vector<std::string> trainable_predictors() {
  std::vector<std::string> names;
  for (const PredictorInfo& p : predictor_registry())
    if (p.family != PredictorFamily::simulator) names.emplace_back(p.name);
  return names;
}

std::vector<std::string> evaluated_predictors() {
  std::vector<std::string> names;
  for (const PredictorInfo& p : predictor_registry()) names.emplace_back(p.name);
  return names;
}

ModelFile train_predictor(const std::string& predictor, const std::vector<DatasetRow>& rows, const SimParams& params,
                          const TrainSettings& s) {
  const PredictorInfo& info = predictor_info(predictor);
  if (info.family == PredictorFamily::simulator)
    fail("--predictor sim: the simulator has no model to train (llmco2 calibrate fits its parameters)");
  if (info.family != PredictorFamily::gnn) return fit_baseline(info, rows, params, s);
  GnnRecipe recipe = info.recipe;
  if (!s.features.empty()) recipe.features = parse_feature_set(s.features);
  if (!s.scaling.empty()) recipe.scaling = parse_target_scaling(s.scaling);
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

std::string train(const TrainOptions& o) {
  if (o.out.empty()) fail("train: no model file to write (--out)");
  const SimParams params = load_sim_params_or_default(o.params);
  const std::vector<DatasetRow> rows = read_datasets(o.data);
  ModelFile file = train_predictor(o.predictor, rows, params, o.settings);
  file.header["info"]["data"] = o.data;
  write_model_file(o.out, file);
  return file.header.value("kind", "");
}

}  // namespace llmco2::research
