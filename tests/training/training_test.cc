// Training: the Eigen forward pass equals libtorch's on many graphs, training is reproducible, the baselines fit what
// they should.
#include <gtest/gtest.h>

#include <cmath>

#include "predictor/deepen.h"
#include "predictor/predictor.h"
#include "sampling/focused_sampling.h"
#include "sim/label.h"
#include "support/all_modules.h"
#include "training/baselines_fit.h"
#include "training/gnn_trainer.h"

namespace llmco2 {
namespace {

// 300 simulated configurations of the paper's models on two GPUs, labelled without noise.
const std::vector<DatasetRow>& rows() {
  static const std::vector<DatasetRow> labelled = [] {
    SamplingSpace space;
    space.models = {"qwen2-0.5b", "gemma-2-2b", "llama-3.1-8b", "mixtral-8x7b"};
    space.gpus = {"l4", "h100-sxm"};
    space.requests = bundled_azure_requests();
    return label_plan(sample_plan(space, 300, 5), default_sim_params(), {}).rows;
  }();
  return labelled;
}

std::vector<const Example*> pointers(const ExampleSet& set) {
  std::vector<const Example*> out;
  for (const auto& e : set.examples) out.push_back(&e);
  return out;
}

GnnTrainOptions quick(TargetScaling scaling) {
  GnnTrainOptions o;
  o.scaling = scaling;
  o.max_epochs = 4;
  o.hidden = 16;
  o.batch_size = 64;
  o.threads = 1;
  o.progress = false;
  return o;
}

TEST(TrainingSet, RowsThatCannotLabelGpuWorkAreSkippedWithTheirReason) {
  std::vector<DatasetRow> three(rows().begin(), rows().begin() + 3);
  three[1].caveats.push_back("node_wall_power");       // a whole node at the wall: not the GPUs' energy
  three[2].caveats.push_back("batch_ran_to_longest");  // decode steps unknown
  const ExampleSet set = make_examples(three, FeatureSet::llmco2, default_sim_params(), false);
  ASSERT_EQ(set.examples.size(), 1u);
  EXPECT_EQ(set.examples[0].row, &three[0]);
  ASSERT_EQ(set.skipped.size(), 2u);
  EXPECT_NE(set.skipped[0].reason.find("whole-node wall energy"), std::string::npos);
  EXPECT_NE(set.skipped[1].reason.find("longest response"), std::string::npos);
}

TEST(GnnTraining, EigenForwardMatchesLibtorchOnManyGraphs) {
  for (auto scaling : {TargetScaling::log, TargetScaling::sim_ratio}) {
    const ExampleSet set = make_examples(rows(), FeatureSet::llmco2, default_sim_params(), false);
    ASSERT_EQ(set.examples.size(), 300u);
    const GnnWeights w = train_gnn(pointers(set), FeatureSet::llmco2, quick(scaling));
    std::vector<EncodedGraph> graphs;
    for (const auto& e : set.examples) graphs.push_back(e.graph);
    const GnnWeights reloaded = gnn_from_file(parse_model_file(serialize_model_file(gnn_to_file(w)), "t"), "t");
    for (auto layout : {GraphLayout::flat, GraphLayout::padded}) {
      const auto reference = torch_forward(w, graphs, layout);
      double worst = 0;
      for (size_t i = 0; i < graphs.size(); ++i) {
        const auto eigen = gnn_forward(reloaded, graphs[i]);
        for (int o = 0; o < kOutputs; ++o) worst = std::max(worst, std::abs(eigen[o] - reference[i][o]));
      }
      EXPECT_LT(worst, 1e-5) << target_scaling_name(scaling) << (layout == GraphLayout::flat ? " flat" : " padded");
    }
  }
}

TEST(GnnTraining, FlatBatchGradientEqualsThePaddedReference) {
  // The flat layout's backward pass (sparse products by the transposes) against libtorch's own autograd through
  // dense padded batches: same loss, same gradient of every weight, up to float rounding.
  const ExampleSet set = make_examples(rows(), FeatureSet::llmco2, default_sim_params(), false);
  const GnnWeights w = train_gnn(pointers(set), FeatureSet::llmco2, quick(TargetScaling::sim_ratio));
  const LossGradient flat = torch_loss_gradient(w, pointers(set), GraphLayout::flat);
  const LossGradient padded = torch_loss_gradient(w, pointers(set), GraphLayout::padded);
  EXPECT_NEAR(flat.loss, padded.loss, 1e-5 * padded.loss);
  ASSERT_EQ(flat.gradient.size(), padded.gradient.size());
  double largest = 0, worst = 0;
  for (size_t i = 0; i < flat.gradient.size(); ++i) {
    largest = std::max(largest, std::abs(padded.gradient[i]));
    worst = std::max(worst, std::abs(flat.gradient[i] - padded.gradient[i]));
  }
  EXPECT_GT(largest, 1e-3);  // a gradient worth comparing
  EXPECT_LT(worst, 1e-4 * largest);
}

TEST(GnnTraining, SameSeedSameWeights) {
  const ExampleSet set = make_examples(rows(), FeatureSet::phases, default_sim_params(), false);
  const auto a =
      serialize_model_file(gnn_to_file(train_gnn(pointers(set), FeatureSet::phases, quick(TargetScaling::log))));
  const auto b =
      serialize_model_file(gnn_to_file(train_gnn(pointers(set), FeatureSet::phases, quick(TargetScaling::log))));
  EXPECT_EQ(a, b);
}

TEST(GnnTraining, LearnsTheSimulatorWithinAFewPercent) {
  // With the simulator-ratio target the network starts at the physics estimate; the labels are that same noiseless
  // simulator, so a trained model must stay within a few percent of it.
  const ExampleSet set = make_examples(rows(), FeatureSet::llmco2, default_sim_params(), false);
  GnnTrainOptions o = quick(TargetScaling::sim_ratio);
  o.max_epochs = 30;
  const GnnWeights w = train_gnn(pointers(set), FeatureSet::llmco2, o);
  EXPECT_LT(w.info.at("validation_energy_mape_percent").get<double>(), 5.0);
}

TEST(Baselines, LlmCarbonRecoversTheUtilisationItWasGenerated) {
  // Labels made by the LLMCarbon equation at 30% utilisation: the fit must return 0.3.
  std::vector<DatasetRow> labelled = rows();
  CatalogCache catalogs;
  const auto truth = make_llmcarbon_predictor(0.3);
  for (auto& row : labelled) row.energy_j = truth->predict(predictor_input(config_for_row(row, catalogs))).energy_j;
  const ExampleSet set = make_examples(labelled, FeatureSet::merged, default_sim_params(), false);
  EXPECT_NEAR(fit_llmcarbon_utilisation(pointers(set)), 0.3, 1e-6);  // targets are stored as float logs
}

TEST(Baselines, DeepEnSumsPositiveKernelPredictions) {
  const ExampleSet set = make_examples(rows(), FeatureSet::merged, default_sim_params(), false);
  DeepEnOptions o;
  o.trees = 10;
  o.max_depth = 6;
  o.threads = 1;
  const ModelFile file = parse_model_file(serialize_model_file(fit_deepen(pointers(set), o)), "deepen.model");
  const auto deepen = make_deepen_predictor(file, "deepen.model");
  std::vector<PredictorInput> configs;
  for (const auto& e : set.examples) configs.push_back(e.config);
  const auto predictions = deepen->predict_all(configs);
  ASSERT_EQ(predictions.size(), configs.size());
  double log_error = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const auto& p = predictions[i];
    ASSERT_GT(*p.energy_j.prefill, 0);
    EXPECT_NEAR(*p.energy_j.total, *p.energy_j.prefill + *p.energy_j.decode, 1e-9 * *p.energy_j.total);
    log_error += std::abs(std::log(*p.energy_j.total) - set.examples[i].targets.log_energy_total);
  }
  // On its own training rows the forest must land within a factor 1.5 on average (it sees every kernel's share).
  EXPECT_LT(log_error / static_cast<double>(predictions.size()), std::log(1.5));
}

}  // namespace
}  // namespace llmco2
