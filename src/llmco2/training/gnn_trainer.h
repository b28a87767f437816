// training/gnn_trainer.h - training the GraphSAGE predictor with libtorch (the only code that links it), and the
// same network's libtorch forward pass, against which the Eigen one is tested.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "predictor/gnn.h"
#include "training/module.h"
#include "training/training_set.h"

namespace llmco2::training {

struct GnnTrainOptions {
  std::string name = "llmco2";  // predictor name in reports
  TargetScaling scaling = TargetScaling::log;
  bool phase_outputs = true;  // false: learn from totals only (NNLQP)
  int hidden = 64;
  int max_epochs = 150;
  int patience = 20;            // epochs without a better validation MAPE before stopping
  int batch_size = 512;         // paper 4.1
  double learning_rate = 1e-3;  // paper 4.1 (Adam)
  double validation_share = 0.1;
  uint64_t seed = 1;
  int threads = 2;  // libtorch intra-op threads; batches are collated on one more
  bool progress = true;
};

// Trains on `examples` (a seeded `validation_share` of them held out for early stopping) and returns the best
// weights by validation MAPE of the total energy. Throws Error when there are too few examples.
GnnWeights train_gnn(const std::vector<const Example*>& examples, FeatureSet features, const GnnTrainOptions& options);

// How a batch of graphs enters the network. flat (training's): every node of the batch in one matrix, the mean over
// in-neighbours and the pooling as sparse products. padded: every graph padded to the largest with a dense
// adjacency and batched products, the plain reference the flat layout is tested against.
enum class GraphLayout { flat, padded };

// The libtorch network loaded with `weights`, run on `graphs` as one batch: the 4 outputs of each, offsets included.
// For checking the Eigen forward pass.
std::vector<std::array<double, kOutputs>> torch_forward(const GnnWeights& weights,
                                                        const std::vector<EncodedGraph>& graphs,
                                                        GraphLayout layout = GraphLayout::flat);

// The training loss of `examples` as one batch and its gradient (every parameter, in the network's order).
struct LossGradient {
  double loss = 0;
  std::vector<double> gradient;
};
// For checking the flat layout's backward pass against the padded one.
LossGradient torch_loss_gradient(const GnnWeights& weights, const std::vector<const Example*>& examples,
                                 GraphLayout layout);

}  // namespace llmco2::training
