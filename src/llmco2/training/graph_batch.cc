// training/graph_batch.cc - graphs standardised once, batches collated by copying spans, one batch prepared ahead.
#include "training/graph_batch.h"

#include <algorithm>

namespace llmco2::training {
namespace {

void clear(SparseRows& m) {
  m.start.assign(1, 0);
  m.column.clear();
  m.weight.clear();
}

// Appends one graph's mean over in-neighbours to `m`: rows by destination (`by_destination`) or, for the transpose,
// by source; each edge weighs 1/in-degree of its destination, and entries keep the edges' order within a row.
void append_neighbours(SparseRows& m, const EncodedGraph& g, bool by_destination) {
  std::vector<int> in_degree(g.nodes, 0), row_size(g.nodes, 0);
  for (const auto& [from, to] : g.edges) ++in_degree[to];
  for (const auto& [from, to] : g.edges) ++row_size[by_destination ? to : from];
  const int64_t first = static_cast<int64_t>(m.column.size());
  std::vector<int64_t> fill(g.nodes);
  int64_t at = first;
  for (int n = 0; n < g.nodes; ++n) {
    fill[n] = at;
    at += row_size[n];
    m.start.push_back(at);
  }
  m.column.resize(at);
  m.weight.resize(at);
  for (const auto& [from, to] : g.edges) {
    const int64_t k = fill[by_destination ? to : from]++;
    m.column[k] = by_destination ? from : to;
    m.weight[k] = 1.0f / static_cast<float>(in_degree[to]);
  }
}

void append_standardised(std::vector<float>& out, const std::vector<float>& raw, int rows, const Standardiser& s) {
  const int width = static_cast<int>(s.mean.size());
  for (int r = 0; r < rows; ++r)
    for (int f = 0; f < width; ++f) out.push_back((raw[static_cast<size_t>(r) * width + f] - s.mean[f]) / s.scale[f]);
}

void append_graph(FlatGraphSet& set, const EncodedGraph& g, const GnnWeights& w) {
  append_standardised(set.x, g.x, g.nodes, w.node_norm);
  append_standardised(set.globals, g.globals, 1, w.global_norm);
  for (int o = 0; o < kOutputs; ++o)
    set.offset.push_back(w.scaling == TargetScaling::sim_ratio ? static_cast<float>(g.physics_log[o]) : 0.0f);
  append_neighbours(set.neighbours, g, true);
  append_neighbours(set.neighbours_t, g, false);
  set.node_begin.push_back(set.node_begin.back() + g.nodes);
}

void append_targets(FlatGraphSet& set, const Example& e, bool phase_outputs) {
  const Targets& t = e.targets;
  for (int o = 0; o < kOutputs; ++o) {
    set.target.push_back(t.log_phase[o]);
    set.known.push_back(phase_outputs && t.phase_known[o] ? 1.0f : 0.0f);
  }
  set.totals.insert(set.totals.end(), {t.log_energy_total, t.log_latency_total});
  set.totals_known.insert(set.totals_known.end(),
                          {t.energy_total_known ? 1.0f : 0.0f, t.latency_total_known ? 1.0f : 0.0f});
  set.has_decode.push_back(e.graph.has_decode ? 1.0f : 0.0f);
}

// Appends rows [first_row, first_row + rows) of `from` to `to`, shifting their columns by `column_shift`.
void append_rows(SparseRows& to, const SparseRows& from, int64_t first_row, int64_t rows, int64_t column_shift) {
  const int64_t begin = from.start[first_row], end = from.start[first_row + rows];
  const int64_t shift = static_cast<int64_t>(to.column.size()) - begin;
  for (int64_t r = 1; r <= rows; ++r) to.start.push_back(from.start[first_row + r] + shift);
  for (int64_t k = begin; k < end; ++k) to.column.push_back(from.column[k] + column_shift);
  to.weight.insert(to.weight.end(), from.weight.begin() + begin, from.weight.begin() + end);
}

template <typename T>
void append_span(std::vector<T>& to, const std::vector<T>& from, int64_t index, int64_t width) {
  to.insert(to.end(), from.begin() + index * width, from.begin() + (index + 1) * width);
}

void clear(GraphBatch& b) {
  b.graphs = b.nodes = 0;
  for (auto* v : {&b.x, &b.globals, &b.offset, &b.target, &b.known, &b.totals, &b.totals_known, &b.has_decode})
    v->clear();
  for (auto* m : {&b.neighbours, &b.neighbours_t, &b.pool, &b.pool_t}) clear(*m);
}

// Appends graph `i` of `set` to `b`: its nodes after the batch's current ones.
void append_to_batch(const FlatGraphSet& set, int64_t i, GraphBatch& b) {
  const int64_t first = set.node_begin[i], nodes = set.node_begin[i + 1] - first;
  b.x.insert(b.x.end(), set.x.begin() + first * set.node_width, set.x.begin() + (first + nodes) * set.node_width);
  append_rows(b.neighbours, set.neighbours, first, nodes, b.nodes);
  append_rows(b.neighbours_t, set.neighbours_t, first, nodes, b.nodes);
  const float share = 1.0f / static_cast<float>(nodes);
  for (int64_t n = 0; n < nodes; ++n) {
    b.pool.column.push_back(b.nodes + n);
    b.pool.weight.push_back(share);
    b.pool_t.column.push_back(b.graphs);
    b.pool_t.weight.push_back(share);
    b.pool_t.start.push_back(static_cast<int64_t>(b.pool_t.column.size()));
  }
  b.pool.start.push_back(static_cast<int64_t>(b.pool.column.size()));
  append_span(b.globals, set.globals, i, set.global_width);
  append_span(b.offset, set.offset, i, kOutputs);
  if (set.has_targets) {
    append_span(b.target, set.target, i, kOutputs);
    append_span(b.known, set.known, i, kOutputs);
    append_span(b.totals, set.totals, i, 2);
    append_span(b.totals_known, set.totals_known, i, 2);
    append_span(b.has_decode, set.has_decode, i, 1);
  }
  b.nodes += nodes;
  ++b.graphs;
}

FlatGraphSet empty_set(const GnnWeights& w, int64_t graphs, int64_t nodes) {
  FlatGraphSet set;
  set.node_width = static_cast<int>(w.node_norm.mean.size());
  set.global_width = static_cast<int>(w.global_norm.mean.size());
  set.node_begin.reserve(static_cast<size_t>(graphs + 1));
  set.x.reserve(static_cast<size_t>(nodes * set.node_width));
  set.globals.reserve(static_cast<size_t>(graphs * set.global_width));
  return set;
}

int64_t node_count(const std::vector<const EncodedGraph*>& graphs) {
  int64_t nodes = 0;
  for (const auto* g : graphs) nodes += g->nodes;
  return nodes;
}

}  // namespace

FlatGraphSet flatten_graphs(const std::vector<const EncodedGraph*>& graphs, const GnnWeights& weights) {
  FlatGraphSet set = empty_set(weights, static_cast<int64_t>(graphs.size()), node_count(graphs));
  for (const auto* g : graphs) append_graph(set, *g, weights);
  return set;
}

FlatGraphSet flatten_examples(const std::vector<const Example*>& examples, const GnnWeights& weights) {
  std::vector<const EncodedGraph*> graphs;
  for (const auto* e : examples) graphs.push_back(&e->graph);
  FlatGraphSet set = flatten_graphs(graphs, weights);
  set.has_targets = true;
  for (const auto* e : examples) append_targets(set, *e, weights.phase_outputs);
  return set;
}

void collate(const FlatGraphSet& set, std::span<const int64_t> indices, GraphBatch& batch) {
  clear(batch);
  for (const int64_t i : indices) append_to_batch(set, i, batch);
}

BatchPrefetcher::BatchPrefetcher(const FlatGraphSet& set, int64_t batch_size) : set_(set), batch_size_(batch_size) {}

BatchPrefetcher::~BatchPrefetcher() {
  if (pending_.valid()) pending_.wait();
}

void BatchPrefetcher::begin(std::vector<int64_t> order) {
  if (pending_.valid()) pending_.wait();
  order_ = std::move(order);
  batch_count_ = (static_cast<int64_t>(order_.size()) + batch_size_ - 1) / batch_size_;
  next_ = 0;
  if (batch_count_ > 0) start(0);
}

void BatchPrefetcher::start(int64_t batch) {
  const int64_t at = batch * batch_size_;
  const int64_t count = std::min(batch_size_, static_cast<int64_t>(order_.size()) - at);
  const std::span<const int64_t> indices(order_.data() + at, static_cast<size_t>(count));
  GraphBatch& slot = slots_[batch % 2];
  pending_ = std::async(std::launch::async, [this, indices, &slot] { collate(set_, indices, slot); });
}

const GraphBatch& BatchPrefetcher::next() {
  pending_.get();
  const int64_t batch = next_++;
  if (next_ < batch_count_) start(next_);
  return slots_[batch % 2];
}

}  // namespace llmco2::training
