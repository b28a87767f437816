// training/graph_batch.h - a training set's graphs standardised once into flat arrays, and batches collated from
// them into reused buffers: every node of a batch stacked in one matrix, edges and pooling as sparse row lists.
#pragma once

#include <cstdint>
#include <future>
#include <span>
#include <vector>

#include "predictor/gnn.h"
#include "training/module.h"
#include "training/training_set.h"

namespace llmco2::training {

// A sparse matrix by rows: row r is the sum over k in [start[r], start[r + 1]) of weight[k] x row column[k] of the
// matrix it multiplies.
struct SparseRows {
  std::vector<int64_t> start{0};
  std::vector<int64_t> column;
  std::vector<float> weight;
  int64_t rows() const { return static_cast<int64_t>(start.size()) - 1; }
};

// Graphs (and, for training, their targets) ready for the network: standardised features, the mean over
// in-neighbours and the mean over a graph's nodes as sparse matrices with their transposes (for the backward pass).
struct GraphBatch {
  int64_t graphs = 0, nodes = 0;
  std::vector<float> x;                 // nodes x node width, standardised
  std::vector<float> globals;           // graphs x global width, standardised
  std::vector<float> offset;            // graphs x kOutputs: the simulator's log estimate (sim_ratio) or 0
  SparseRows neighbours, neighbours_t;  // nodes x nodes: row = destination, 1/in-degree per edge; transpose
  SparseRows pool, pool_t;              // graphs x nodes: 1/nodes on the graph's own nodes; transpose
  // Targets (empty for graphs without): graphs x kOutputs, graphs x 2 (energy, latency totals), graphs.
  std::vector<float> target, known, totals, totals_known, has_decode;
};

// Every graph of a set standardised and laid out once, so that collating a batch is copying spans.
struct FlatGraphSet {
  int node_width = 0, global_width = 0;
  bool has_targets = false;
  std::vector<int64_t> node_begin{0};  // graphs + 1: the first node of each graph in `x`
  std::vector<float> x, globals, offset;
  SparseRows neighbours, neighbours_t;  // per graph, columns local to the graph (0 = its first node)
  std::vector<float> target, known, totals, totals_known, has_decode;
  int64_t size() const { return static_cast<int64_t>(node_begin.size()) - 1; }
};

// Standardises `graphs` with `weights`' standardisers (offsets when its scaling is sim_ratio).
FlatGraphSet flatten_graphs(const std::vector<const EncodedGraph*>& graphs, const GnnWeights& weights);
// The same with each example's targets (phase targets masked when `weights.phase_outputs` is false).
FlatGraphSet flatten_examples(const std::vector<const Example*>& examples, const GnnWeights& weights);

// Fills `batch` with the graphs `indices` of `set`, in that order, reusing its buffers' capacity.
void collate(const FlatGraphSet& set, std::span<const int64_t> indices, GraphBatch& batch);

// Collates the batches of an epoch (consecutive slices of an order, `batch_size` graphs each) on a second thread,
// one batch ahead of the caller: two buffers, used in turn and kept across epochs, so the batch returned by next()
// stays valid until the following call.
class BatchPrefetcher {
 public:
  BatchPrefetcher(const FlatGraphSet& set, int64_t batch_size);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // Starts an epoch over `order` (indices into the set) and collates its first batch.
  void begin(std::vector<int64_t> order);
  int64_t batches() const { return batch_count_; }
  // The epoch's next batch (waits until it is collated); at most batches() calls per epoch.
  const GraphBatch& next();

 private:
  void start(int64_t batch);

  const FlatGraphSet& set_;
  std::vector<int64_t> order_;
  int64_t batch_size_, batch_count_ = 0, next_ = 0;
  GraphBatch slots_[2];
  std::future<void> pending_;
};

}  // namespace llmco2::training
