// The Eigen GraphSAGE forward pass on a graph small enough to compute by hand.
#include <gtest/gtest.h>

#include "core/error.h"
#include "predictor/gnn.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

RowMatrix m(int rows, int cols, std::vector<float> values) { return Eigen::Map<RowMatrix>(values.data(), rows, cols); }
Eigen::VectorXf v(std::vector<float> values) { return Eigen::Map<Eigen::VectorXf>(values.data(), values.size()); }

// Two nodes with one feature, edge 0 -> 1, hidden width 1, one global feature.
GnnWeights tiny_weights(TargetScaling scaling) {
  GnnWeights w;
  w.scaling = scaling;
  w.hidden = 1;
  w.node_norm = {{0.0f}, {1.0f}};
  w.global_norm = {{1.0f}, {2.0f}};
  w.sage1_self = m(1, 1, {1});
  w.sage1_neigh = m(1, 1, {1});
  w.sage1_bias = v({0});
  w.sage2_self = m(1, 1, {2});
  w.sage2_neigh = m(1, 1, {-1});
  w.sage2_bias = v({0.5f});
  w.head1 = m(1, 2, {0.5f, 1});
  w.head1_bias = v({-1});
  w.head2 = m(4, 1, {1, 2, -1, 0});
  w.head2_bias = v({0, 0, 0, 1});
  return w;
}

EncodedGraph tiny_graph() {
  EncodedGraph g;
  g.nodes = 2;
  g.x = {1, 2};
  g.edges = {{0, 1}};
  g.globals = {3};
  g.physics_log = {1, 1, 1, 1};
  return g;
}

TEST(GnnForward, MatchesTheHandComputation) {
  // Layer 1: node0 = relu(1) = 1 (no in-neighbour), node1 = relu(2 + 1) = 3.
  // Layer 2: node0 = relu(2*1 + 0.5) = 2.5, node1 = relu(2*3 - 1*1 + 0.5) = 5.5; mean pool = 4.
  // Global (3 - 1) / 2 = 1; head1 = relu(0.5*4 + 1*1 - 1) = 2; head2 = [2, 4, -2, 0 + 1].
  const auto y = gnn_forward(tiny_weights(TargetScaling::log), tiny_graph());
  EXPECT_NEAR(y[0], 2.0, 1e-6);
  EXPECT_NEAR(y[1], 4.0, 1e-6);
  EXPECT_NEAR(y[2], -2.0, 1e-6);
  EXPECT_NEAR(y[3], 1.0, 1e-6);
}

TEST(GnnForward, SimRatioAddsThePhysicsEstimate) {
  const auto y = gnn_forward(tiny_weights(TargetScaling::sim_ratio), tiny_graph());
  EXPECT_NEAR(y[0], 3.0, 1e-6);
  EXPECT_NEAR(y[2], -1.0, 1e-6);
}

std::string load_error(const ModelFile& file) {
  try {
    gnn_from_file(file, "m.model");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GnnModelFile, MismatchedFeaturesOrShapesAreCleanErrors) {
  // The tiny network claims the llmco2 feature set but has 1-wide inputs: its tensors do not fit those features.
  ModelFile file = gnn_to_file(tiny_weights(TargetScaling::log));
  EXPECT_NE(load_error(file).find("m.model: tensor 'node_norm_mean' has shape [1]"), std::string::npos)
      << load_error(file);
  // A file written by a build with other feature columns.
  file.header["node_features"][0] = "renamed";
  EXPECT_NE(load_error(file).find("feature columns differ"), std::string::npos) << load_error(file);
  file.header["kind"] = "deepen";
  EXPECT_NE(load_error(file).find("not a GNN model"), std::string::npos);
}

}  // namespace
}  // namespace llmco2
