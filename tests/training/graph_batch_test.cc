// Flat graph batches: standardisation, the sparse neighbour and pooling matrices of a hand-made batch, their
// transposes, and the prefetching thread handing out the same batches as collating inline.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>

#include "support/all_modules.h"
#include "training/graph_batch.h"

namespace llmco2 {
namespace {

// Two node features standardised as (x - {1, 0}) / {2, 1}; one global feature as (g - 10) / 5.
GnnWeights two_feature_weights() {
  GnnWeights w;
  w.scaling = TargetScaling::sim_ratio;
  w.node_norm = {{1.0f, 0.0f}, {2.0f, 1.0f}};
  w.global_norm = {{10.0f}, {5.0f}};
  return w;
}

EncodedGraph graph(int nodes, std::vector<std::pair<int, int>> edges, float first_x, float global) {
  EncodedGraph g;
  g.nodes = nodes;
  for (int n = 0; n < nodes; ++n) {
    g.x.push_back(first_x + static_cast<float>(n));
    g.x.push_back(1.0f);
  }
  g.edges = std::move(edges);
  g.globals = {global};
  g.physics_log = {0.5, 1.5, 2.5, 3.5};
  return g;
}

using Entries = std::vector<std::tuple<int64_t, int64_t, float>>;  // row, column, weight

Entries entries(const SparseRows& m) {
  Entries out;
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t k = m.start[r]; k < m.start[r + 1]; ++k) out.emplace_back(r, m.column[k], m.weight[k]);
  return out;
}

Entries transposed(const SparseRows& m) {
  Entries out;
  for (const auto& [r, c, w] : entries(m)) out.emplace_back(c, r, w);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  return out;
}

TEST(GraphBatch, CollatesTwoGraphsInTheOrderAskedWithMeanWeights) {
  // a: 0->1, 0->2, 1->2 (node 2 has two in-neighbours); b: 0->1 twice (a doubled edge counts twice).
  const EncodedGraph a = graph(3, {{0, 1}, {0, 2}, {1, 2}}, 5.0f, 15.0f), b = graph(2, {{0, 1}, {0, 1}}, 3.0f, 0.0f);
  const FlatGraphSet set = flatten_graphs({&a, &b}, two_feature_weights());
  GraphBatch batch;
  const std::vector<int64_t> order{1, 0};  // b first: its nodes are 0-1, a's are 2-4
  collate(set, order, batch);
  EXPECT_EQ(batch.graphs, 2);
  EXPECT_EQ(batch.nodes, 5);
  // b's x column 0: 3, 4 -> (x - 1) / 2 = 1, 1.5; a's: 5, 6, 7 -> 2, 2.5, 3; column 1 is 1 -> (1 - 0) / 1 = 1.
  EXPECT_EQ(batch.x, (std::vector<float>{1, 1, 1.5f, 1, 2, 1, 2.5f, 1, 3, 1}));
  EXPECT_EQ(batch.globals, (std::vector<float>{-2, 1}));  // (0 - 10) / 5, (15 - 10) / 5
  EXPECT_EQ(batch.offset, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 0.5f, 1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(entries(batch.neighbours), (Entries{{1, 0, 0.5f}, {1, 0, 0.5f}, {3, 2, 1.0f}, {4, 2, 0.5f}, {4, 3, 0.5f}}));
  EXPECT_EQ(batch.neighbours.rows(), 5);
  EXPECT_EQ(entries(batch.pool),
            (Entries{{0, 0, 0.5f}, {0, 1, 0.5f}, {1, 2, 1 / 3.0f}, {1, 3, 1 / 3.0f}, {1, 4, 1 / 3.0f}}));
  EXPECT_EQ(entries(batch.neighbours_t), transposed(batch.neighbours));
  EXPECT_EQ(entries(batch.pool_t), transposed(batch.pool));
  EXPECT_TRUE(batch.target.empty());  // graphs without targets
}

TEST(GraphBatch, ReusedBuffersHoldOnlyTheNewBatch) {
  const EncodedGraph a = graph(3, {{0, 1}, {1, 2}}, 1.0f, 10.0f), b = graph(2, {{1, 0}}, 1.0f, 10.0f);
  const FlatGraphSet set = flatten_graphs({&a, &b}, two_feature_weights());
  GraphBatch batch;
  collate(set, std::vector<int64_t>{0, 1}, batch);
  collate(set, std::vector<int64_t>{1}, batch);
  EXPECT_EQ(batch.graphs, 1);
  EXPECT_EQ(batch.nodes, 2);
  EXPECT_EQ(entries(batch.neighbours), (Entries{{0, 1, 1.0f}}));
  EXPECT_EQ(entries(batch.pool), (Entries{{0, 0, 0.5f}, {0, 1, 0.5f}}));
}

TEST(GraphBatch, PrefetcherHandsOutTheBatchesOfInlineCollation) {
  std::vector<EncodedGraph> graphs;
  for (int i = 0; i < 11; ++i) graphs.push_back(graph(2 + i % 3, {{0, 1}}, static_cast<float>(i), 10.0f));
  std::vector<const EncodedGraph*> pointers;
  for (const auto& g : graphs) pointers.push_back(&g);
  const FlatGraphSet set = flatten_graphs(pointers, two_feature_weights());
  BatchPrefetcher prefetcher(set, 4);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> order(11);
    std::iota(order.begin(), order.end(), 0);
    if (epoch == 1) std::reverse(order.begin(), order.end());
    prefetcher.begin(order);
    ASSERT_EQ(prefetcher.batches(), 3);  // 4 + 4 + 3
    for (int64_t b = 0; b < 3; ++b) {
      GraphBatch inline_batch;
      collate(set, std::span<const int64_t>(order).subspan(b * 4, std::min<int64_t>(4, 11 - b * 4)), inline_batch);
      const GraphBatch& fetched = prefetcher.next();
      EXPECT_EQ(fetched.graphs, inline_batch.graphs);
      EXPECT_EQ(fetched.x, inline_batch.x);
      EXPECT_EQ(entries(fetched.neighbours), entries(inline_batch.neighbours));
    }
  }
}

}  // namespace
}  // namespace llmco2
