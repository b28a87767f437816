// training/gnn_trainer.cc - the GraphSAGE network in libtorch: padded batches, Adam, early stopping.
#include "training/gnn_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <torch/torch.h>

#include "core/error.h"

namespace llmco2 {
namespace {

struct GnnNetImpl : torch::nn::Module {
  GnnNetImpl(int node_width, int global_width, int hidden)
      : sage1_self(register_module("sage1_self", torch::nn::Linear(node_width, hidden))),
        sage1_neigh(register_module("sage1_neigh",
                                    torch::nn::Linear(torch::nn::LinearOptions(node_width, hidden).bias(false)))),
        sage2_self(register_module("sage2_self", torch::nn::Linear(hidden, hidden))),
        sage2_neigh(register_module("sage2_neigh", torch::nn::Linear(torch::nn::LinearOptions(hidden, hidden).bias(false)))),
        head1(register_module("head1", torch::nn::Linear(hidden + global_width, hidden))),
        head2(register_module("head2", torch::nn::Linear(hidden, kOutputs))) {}

  // x [B,N,F], adjacency [B,N,N] (row = destination, mean over sources), pool [B,N] (1/nodes on real nodes).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& adjacency, const torch::Tensor& pool,
                        const torch::Tensor& globals) {
    auto h = torch::relu(sage1_self(x) + sage1_neigh(torch::bmm(adjacency, x)));
    h = torch::relu(sage2_self(h) + sage2_neigh(torch::bmm(adjacency, h)));
    const auto pooled = torch::bmm(pool.unsqueeze(1), h).squeeze(1);
    return head2(torch::relu(head1(torch::cat({pooled, globals}, 1))));
  }

  torch::nn::Linear sage1_self, sage1_neigh, sage2_self, sage2_neigh, head1, head2;
};
TORCH_MODULE(GnnNet);

// A whole set of graphs as padded tensors, standardised.
struct Tensors {
  torch::Tensor x, adjacency, pool, globals, offset;
  torch::Tensor target, known, totals, totals_known, has_decode;  // only for examples
  long size = 0;
};

torch::Tensor from_vector(const std::vector<float>& values, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(values.data()), shape, torch::kFloat32).clone();
}

Tensors graph_tensors(const std::vector<const EncodedGraph*>& graphs, const GnnWeights& w) {
  const long count = static_cast<long>(graphs.size());
  const int node_w = static_cast<int>(w.node_norm.mean.size()), global_w = static_cast<int>(w.global_norm.mean.size());
  int max_nodes = 1;
  for (const auto* g : graphs) max_nodes = std::max(max_nodes, g->nodes);
  std::vector<float> x(static_cast<size_t>(count) * max_nodes * node_w, 0.0f);
  std::vector<float> adjacency(static_cast<size_t>(count) * max_nodes * max_nodes, 0.0f);
  std::vector<float> pool(static_cast<size_t>(count) * max_nodes, 0.0f);
  std::vector<float> globals(static_cast<size_t>(count) * global_w), offset(static_cast<size_t>(count) * kOutputs, 0.0f);
  for (long i = 0; i < count; ++i) {
    const EncodedGraph& g = *graphs[i];
    for (int n = 0; n < g.nodes; ++n) {
      for (int f = 0; f < node_w; ++f)
        x[(static_cast<size_t>(i) * max_nodes + n) * node_w + f] =
            (g.x[static_cast<size_t>(n) * node_w + f] - w.node_norm.mean[f]) / w.node_norm.scale[f];
      pool[static_cast<size_t>(i) * max_nodes + n] = 1.0f / static_cast<float>(g.nodes);
    }
    std::vector<int> in_degree(g.nodes, 0);
    for (const auto& e : g.edges) ++in_degree[e.second];
    for (const auto& [from, to] : g.edges)
      adjacency[(static_cast<size_t>(i) * max_nodes + to) * max_nodes + from] += 1.0f / static_cast<float>(in_degree[to]);
    for (int f = 0; f < global_w; ++f)
      globals[static_cast<size_t>(i) * global_w + f] = (g.globals[f] - w.global_norm.mean[f]) / w.global_norm.scale[f];
    if (w.scaling == TargetScaling::sim_ratio)
      for (int o = 0; o < kOutputs; ++o) offset[static_cast<size_t>(i) * kOutputs + o] = static_cast<float>(g.physics_log[o]);
  }
  Tensors t;
  t.size = count;
  t.x = from_vector(x, {count, max_nodes, node_w});
  t.adjacency = from_vector(adjacency, {count, max_nodes, max_nodes});
  t.pool = from_vector(pool, {count, max_nodes});
  t.globals = from_vector(globals, {count, global_w});
  t.offset = from_vector(offset, {count, kOutputs});
  return t;
}

Tensors example_tensors(const std::vector<const Example*>& examples, const GnnWeights& w) {
  std::vector<const EncodedGraph*> graphs;
  for (const auto* e : examples) graphs.push_back(&e->graph);
  Tensors t = graph_tensors(graphs, w);
  const long count = t.size;
  std::vector<float> target(static_cast<size_t>(count) * kOutputs), known(target.size());
  std::vector<float> totals(static_cast<size_t>(count) * 2), totals_known(totals.size()), has_decode(count);
  for (long i = 0; i < count; ++i) {
    const Targets& tg = examples[i]->targets;
    for (int o = 0; o < kOutputs; ++o) {
      target[i * kOutputs + o] = tg.log_phase[o];
      known[i * kOutputs + o] = (w.phase_outputs && tg.phase_known[o]) ? 1.0f : 0.0f;
    }
    totals[i * 2] = tg.log_energy_total;
    totals[i * 2 + 1] = tg.log_latency_total;
    totals_known[i * 2] = tg.energy_total_known ? 1.0f : 0.0f;
    totals_known[i * 2 + 1] = tg.latency_total_known ? 1.0f : 0.0f;
    has_decode[i] = examples[i]->graph.has_decode ? 1.0f : 0.0f;
  }
  t.target = from_vector(target, {count, kOutputs});
  t.known = from_vector(known, {count, kOutputs});
  t.totals = from_vector(totals, {count, 2});
  t.totals_known = from_vector(totals_known, {count, 2});
  t.has_decode = from_vector(has_decode, {count}).to(torch::kBool);
  return t;
}

// log(prefill + decode) of one quantity; a request without decode steps has only its prefill.
torch::Tensor log_total(const torch::Tensor& prediction, int prefill, int decode, const torch::Tensor& has_decode) {
  const auto pre = prediction.select(1, prefill);
  const auto dec = torch::where(has_decode, prediction.select(1, decode), pre - 50.0f);
  return torch::logsumexp(torch::stack({pre, dec}, 1), 1);
}

struct Batch {
  torch::Tensor x, adjacency, pool, globals, offset, target, known, totals, totals_known, has_decode;
};

Batch select(const Tensors& t, const torch::Tensor& index) {
  return {t.x.index_select(0, index),       t.adjacency.index_select(0, index), t.pool.index_select(0, index),
          t.globals.index_select(0, index), t.offset.index_select(0, index),    t.target.index_select(0, index),
          t.known.index_select(0, index),   t.totals.index_select(0, index),    t.totals_known.index_select(0, index),
          t.has_decode.index_select(0, index)};
}

torch::Tensor loss_of(GnnNet& net, const Batch& b) {
  const auto prediction = net->forward(b.x, b.adjacency, b.pool, b.globals) + b.offset;
  const auto phase = ((prediction - b.target).pow(2) * b.known).sum();
  const auto energy = (log_total(prediction, energy_prefill, energy_decode, b.has_decode) - b.totals.select(1, 0)).pow(2);
  const auto latency =
      (log_total(prediction, latency_prefill, latency_decode, b.has_decode) - b.totals.select(1, 1)).pow(2);
  const auto total = (energy * b.totals_known.select(1, 0) + latency * b.totals_known.select(1, 1)).sum();
  return (phase + total) / static_cast<double>(b.x.size(0));
}

// MAPE of the total energy over a set, in %.
double energy_mape(GnnNet& net, const Tensors& t) {
  torch::NoGradGuard no_grad;
  const auto prediction = net->forward(t.x, t.adjacency, t.pool, t.globals) + t.offset;
  const auto log_ratio = log_total(prediction, energy_prefill, energy_decode, t.has_decode) - t.totals.select(1, 0);
  return 100.0 * (log_ratio.exp() - 1).abs().mean().item<double>();
}

Standardiser standardiser(const std::vector<const Example*>& examples, bool nodes, int width) {
  std::vector<double> sum(width, 0), square(width, 0);
  double count = 0;
  for (const auto* e : examples) {
    const auto& values = nodes ? e->graph.x : e->graph.globals;
    const int rows = nodes ? e->graph.nodes : 1;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < width; ++c) {
        const double v = values[static_cast<size_t>(r) * width + c];
        sum[c] += v;
        square[c] += v * v;
      }
    count += rows;
  }
  Standardiser s;
  for (int c = 0; c < width; ++c) {
    const double mean = sum[c] / count;
    const double sd = std::sqrt(std::max(square[c] / count - mean * mean, 0.0));
    s.mean.push_back(static_cast<float>(mean));
    s.scale.push_back(static_cast<float>(sd > 1e-6 ? sd : 1.0));
  }
  return s;
}

RowMatrix to_matrix(const torch::Tensor& t) {
  const auto c = t.detach().contiguous();
  return Eigen::Map<const RowMatrix>(c.data_ptr<float>(), c.size(0), c.size(1));
}
Eigen::VectorXf to_vector(const torch::Tensor& t) {
  const auto c = t.detach().contiguous();
  return Eigen::Map<const Eigen::VectorXf>(c.data_ptr<float>(), c.size(0));
}

void export_weights(GnnNet& net, GnnWeights& w) {
  w.sage1_self = to_matrix(net->sage1_self->weight);
  w.sage1_bias = to_vector(net->sage1_self->bias);
  w.sage1_neigh = to_matrix(net->sage1_neigh->weight);
  w.sage2_self = to_matrix(net->sage2_self->weight);
  w.sage2_bias = to_vector(net->sage2_self->bias);
  w.sage2_neigh = to_matrix(net->sage2_neigh->weight);
  w.head1 = to_matrix(net->head1->weight);
  w.head1_bias = to_vector(net->head1->bias);
  w.head2 = to_matrix(net->head2->weight);
  w.head2_bias = to_vector(net->head2->bias);
}

torch::Tensor tensor_of(const RowMatrix& m) {
  return torch::from_blob(const_cast<float*>(m.data()), {m.rows(), m.cols()}, torch::kFloat32).clone();
}
torch::Tensor tensor_of(const Eigen::VectorXf& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {v.size()}, torch::kFloat32).clone();
}

void import_weights(GnnNet& net, const GnnWeights& w) {
  torch::NoGradGuard no_grad;
  net->sage1_self->weight.copy_(tensor_of(w.sage1_self));
  net->sage1_self->bias.copy_(tensor_of(w.sage1_bias));
  net->sage1_neigh->weight.copy_(tensor_of(w.sage1_neigh));
  net->sage2_self->weight.copy_(tensor_of(w.sage2_self));
  net->sage2_self->bias.copy_(tensor_of(w.sage2_bias));
  net->sage2_neigh->weight.copy_(tensor_of(w.sage2_neigh));
  net->head1->weight.copy_(tensor_of(w.head1));
  net->head1->bias.copy_(tensor_of(w.head1_bias));
  net->head2->weight.copy_(tensor_of(w.head2));
  net->head2->bias.copy_(tensor_of(w.head2_bias));
}

std::vector<torch::Tensor> snapshot(GnnNet& net) {
  std::vector<torch::Tensor> copy;
  for (const auto& p : net->parameters()) copy.push_back(p.detach().clone());
  return copy;
}

void restore(GnnNet& net, const std::vector<torch::Tensor>& copy) {
  torch::NoGradGuard no_grad;
  auto params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(copy[i]);
}

void print_epoch(const GnnTrainOptions& o, int epoch, double loss, double mape, double best, double elapsed_s, bool end) {
  if (!o.progress) return;
  const double rate = epoch / std::max(elapsed_s, 1e-9);
  std::cerr << fmt::format("\r{}: epoch {}/{} loss {:.4f} val MAPE {:.2f}% (best {:.2f}%) {:.2f} epochs/s ETA <= {:.0f} s   ",
                           o.name, epoch, o.max_epochs, loss, mape, best, rate, (o.max_epochs - epoch) / rate)
            << (end ? "\n" : "") << std::flush;
}

}  // namespace

GnnWeights train_gnn(const std::vector<const Example*>& examples, FeatureSet features, const GnnTrainOptions& o) {
  if (examples.size() < 20) fail("training needs at least 20 examples, got {}", examples.size());
  torch::set_num_threads(o.threads);
  torch::manual_seed(o.seed);
  std::mt19937_64 rng(o.seed);
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const size_t validation = std::max<size_t>(1, static_cast<size_t>(o.validation_share * examples.size()));
  std::vector<const Example*> train_set, validation_set;
  for (size_t i = 0; i < order.size(); ++i) (i < validation ? validation_set : train_set).push_back(examples[order[i]]);

  GnnWeights w;
  w.features = features;
  w.scaling = o.scaling;
  w.phase_outputs = o.phase_outputs;
  w.hidden = o.hidden;
  w.node_norm = standardiser(train_set, true, node_width(features));
  w.global_norm = standardiser(train_set, false, global_width(features));
  const Tensors train = example_tensors(train_set, w), valid = example_tensors(validation_set, w);

  GnnNet net(node_width(features), global_width(features), o.hidden);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(o.learning_rate));
  double best = INFINITY;
  int best_epoch = 0, epoch = 0;
  std::vector<torch::Tensor> best_params = snapshot(net);
  const auto start = std::chrono::steady_clock::now();
  for (epoch = 1; epoch <= o.max_epochs; ++epoch) {
    const auto permutation = torch::randperm(train.size, torch::kLong);
    double loss_sum = 0;
    long batches = 0;
    for (long at = 0; at < train.size; at += o.batch_size) {
      const auto index = permutation.slice(0, at, std::min(at + o.batch_size, train.size));
      adam.zero_grad();
      const auto loss = loss_of(net, select(train, index));
      loss.backward();
      adam.step();
      loss_sum += loss.item<double>();
      ++batches;
    }
    const double mape = energy_mape(net, valid);
    if (mape < best) {
      best = mape;
      best_epoch = epoch;
      best_params = snapshot(net);
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool stop = epoch - best_epoch >= o.patience || epoch == o.max_epochs;
    print_epoch(o, epoch, loss_sum / batches, mape, best, elapsed, stop);
    if (stop) break;
  }
  restore(net, best_params);
  export_weights(net, w);
  w.info = {{"name", o.name},           {"examples", examples.size()},  {"validation_examples", validation_set.size()},
            {"seed", o.seed},           {"epochs", std::min(epoch, o.max_epochs)}, {"best_epoch", best_epoch},
            {"validation_energy_mape_percent", best}, {"batch_size", o.batch_size}, {"learning_rate", o.learning_rate}};
  return w;
}

std::vector<std::array<double, kOutputs>> torch_forward(const GnnWeights& w, const std::vector<EncodedGraph>& graphs) {
  GnnNet net(node_width(w.features), global_width(w.features), w.hidden);
  import_weights(net, w);
  std::vector<const EncodedGraph*> pointers;
  for (const auto& g : graphs) pointers.push_back(&g);
  const Tensors t = graph_tensors(pointers, w);
  torch::NoGradGuard no_grad;
  const auto out = (net->forward(t.x, t.adjacency, t.pool, t.globals) + t.offset).contiguous();
  std::vector<std::array<double, kOutputs>> result(graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i)
    for (int o = 0; o < kOutputs; ++o) result[i][o] = out[static_cast<long>(i)][o].item<double>();
  return result;
}

}  // namespace llmco2
