// training/gnn_trainer.cc - the GraphSAGE network in libtorch: flat batches (every node of a batch in one matrix,
// sparse mean aggregation) prepared one ahead on a second thread, Adam, early stopping; and the padded reference.
#include "training/gnn_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <numeric>
#include <random>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "core/error.h"
#include "core/progress.h"
#include "training/graph_batch.h"

namespace llmco2::training {
namespace {

// out[r] = sum over the row's entries of weight x in[column]; rows in parallel, each summed in entry order by one
// thread, so the result does not depend on the thread count.
torch::Tensor sparse_rows_times(const torch::Tensor& start, const torch::Tensor& column, const torch::Tensor& weight,
                                const torch::Tensor& in) {
  const int64_t rows = start.size(0) - 1, width = in.size(1);
  auto out = torch::zeros({rows, width}, in.options());
  const auto* s = start.data_ptr<int64_t>();
  const auto* c = column.data_ptr<int64_t>();
  const auto* w = weight.data_ptr<float>();
  const auto* x = in.data_ptr<float>();
  auto* y = out.data_ptr<float>();
  at::parallel_for(0, rows, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t k = s[r]; k < s[r + 1]; ++k)
        for (int64_t f = 0; f < width; ++f) y[r * width + f] += w[k] * x[c[k] * width + f];
  });
  return out;
}

struct SparseTensor {
  torch::Tensor start, column, weight;
};

// A sparse matrix times a dense one, differentiable in the dense one: the backward pass multiplies by the transpose.
struct SparseProduct : torch::autograd::Function<SparseProduct> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& in,
                               const torch::Tensor& start, const torch::Tensor& column, const torch::Tensor& weight,
                               const torch::Tensor& start_t, const torch::Tensor& column_t,
                               const torch::Tensor& weight_t) {
    ctx->save_for_backward({start_t, column_t, weight_t});
    return sparse_rows_times(start, column, weight, in.contiguous());
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const auto t = ctx->get_saved_variables();
    return {sparse_rows_times(t[0], t[1], t[2], grad[0].contiguous()), {}, {}, {}, {}, {}, {}};
  }
};

torch::Tensor times(const SparseTensor& m, const SparseTensor& m_t, const torch::Tensor& in) {
  return SparseProduct::apply(in, m.start, m.column, m.weight, m_t.start, m_t.column, m_t.weight);
}

// What the loss compares a batch's predictions with.
struct TargetTensors {
  torch::Tensor target, known, totals, totals_known, has_decode;
};

// A flat batch as tensors over the batch's own buffers (no copy): they are valid while the GraphBatch is unchanged.
struct FlatTensors {
  torch::Tensor x, globals, offset;
  SparseTensor neighbours, neighbours_t, pool, pool_t;
  TargetTensors targets;
  int64_t graphs = 0;
};

// A set of graphs padded to the largest one with a dense adjacency: the reference the flat layout is tested against.
struct PaddedTensors {
  torch::Tensor x, adjacency, pool, globals, offset;
  TargetTensors targets;
  int64_t graphs = 0;
};

struct GnnNetImpl : torch::nn::Module {
  GnnNetImpl(int node_width, int global_width, int hidden)
      : sage1_self(register_module("sage1_self", torch::nn::Linear(node_width, hidden))),
        sage1_neigh(register_module("sage1_neigh",
                                    torch::nn::Linear(torch::nn::LinearOptions(node_width, hidden).bias(false)))),
        sage2_self(register_module("sage2_self", torch::nn::Linear(hidden, hidden))),
        sage2_neigh(
            register_module("sage2_neigh", torch::nn::Linear(torch::nn::LinearOptions(hidden, hidden).bias(false)))),
        head1(register_module("head1", torch::nn::Linear(hidden + global_width, hidden))),
        head2(register_module("head2", torch::nn::Linear(hidden, kOutputs))) {}

  // Every node of the batch in one matrix [nodes, F]; aggregation and pooling as sparse products. Offsets included.
  torch::Tensor forward(const FlatTensors& b) {
    auto h = torch::relu(sage1_self(b.x) + sage1_neigh(times(b.neighbours, b.neighbours_t, b.x)));
    h = torch::relu(sage2_self(h) + sage2_neigh(times(b.neighbours, b.neighbours_t, h)));
    return head(times(b.pool, b.pool_t, h), b.globals) + b.offset;
  }

  // x [B,N,F], adjacency [B,N,N] (row = destination, mean over sources), pool [B,N] (1/nodes on real nodes).
  torch::Tensor forward(const PaddedTensors& b) {
    auto h = torch::relu(sage1_self(b.x) + sage1_neigh(torch::bmm(b.adjacency, b.x)));
    h = torch::relu(sage2_self(h) + sage2_neigh(torch::bmm(b.adjacency, h)));
    return head(torch::bmm(b.pool.unsqueeze(1), h).squeeze(1), b.globals) + b.offset;
  }

  torch::Tensor head(const torch::Tensor& pooled, const torch::Tensor& globals) {
    return head2(torch::relu(head1(torch::cat({pooled, globals}, 1))));
  }

  torch::nn::Linear sage1_self, sage1_neigh, sage2_self, sage2_neigh, head1, head2;
};
TORCH_MODULE(GnnNet);

torch::Tensor view_of(const std::vector<float>& values, const std::vector<int64_t>& shape) {
  return torch::from_blob(const_cast<float*>(values.data()), shape, torch::kFloat32);
}

SparseTensor view_of(const SparseRows& m) {
  const auto entries = static_cast<int64_t>(m.column.size());
  return {torch::from_blob(const_cast<int64_t*>(m.start.data()), {m.rows() + 1}, torch::kInt64),
          torch::from_blob(const_cast<int64_t*>(m.column.data()), {entries}, torch::kInt64),
          view_of(m.weight, {entries})};
}

TargetTensors target_views(const GraphBatch& b) {
  if (b.target.empty()) return {};
  return {view_of(b.target, {b.graphs, kOutputs}), view_of(b.known, {b.graphs, kOutputs}),
          view_of(b.totals, {b.graphs, 2}), view_of(b.totals_known, {b.graphs, 2}),
          view_of(b.has_decode, {b.graphs}) > 0.5f};
}

FlatTensors flat_tensors(const GraphBatch& b, int node_width, int global_width) {
  FlatTensors t;
  t.graphs = b.graphs;
  t.x = view_of(b.x, {b.nodes, node_width});
  t.globals = view_of(b.globals, {b.graphs, global_width});
  t.offset = view_of(b.offset, {b.graphs, kOutputs});
  t.neighbours = view_of(b.neighbours);
  t.neighbours_t = view_of(b.neighbours_t);
  t.pool = view_of(b.pool);
  t.pool_t = view_of(b.pool_t);
  t.targets = target_views(b);
  return t;
}

// The padded reference built from a collated batch: the same standardised values, scattered into padded tensors.
PaddedTensors padded_tensors(const GraphBatch& b, int node_width, int global_width) {
  int64_t max_nodes = 1;
  for (int64_t g = 0; g < b.graphs; ++g) max_nodes = std::max(max_nodes, b.pool.start[g + 1] - b.pool.start[g]);
  auto x = torch::zeros({b.graphs, max_nodes, node_width});
  auto adjacency = torch::zeros({b.graphs, max_nodes, max_nodes}), pool = torch::zeros({b.graphs, max_nodes});
  auto xs = x.accessor<float, 3>(), as = adjacency.accessor<float, 3>();
  auto ps = pool.accessor<float, 2>();
  for (int64_t g = 0; g < b.graphs; ++g) {
    const int64_t first = b.pool.start[g], nodes = b.pool.start[g + 1] - first;
    for (int64_t n = 0; n < nodes; ++n) {
      for (int f = 0; f < node_width; ++f) xs[g][n][f] = b.x[static_cast<size_t>((first + n) * node_width + f)];
      ps[g][n] = 1.0f / static_cast<float>(nodes);
      for (int64_t k = b.neighbours.start[first + n]; k < b.neighbours.start[first + n + 1]; ++k)
        as[g][n][b.neighbours.column[k] - first] += b.neighbours.weight[k];
    }
  }
  return {x,
          adjacency,
          pool,
          view_of(b.globals, {b.graphs, global_width}),
          view_of(b.offset, {b.graphs, kOutputs}),
          target_views(b),
          b.graphs};
}

// log(prefill + decode) of one quantity; a request without decode steps has only its prefill.
torch::Tensor log_total(const torch::Tensor& prediction, int prefill, int decode, const torch::Tensor& has_decode) {
  const auto pre = prediction.select(1, prefill);
  const auto dec = torch::where(has_decode, prediction.select(1, decode), pre - 50.0f);
  return torch::logsumexp(torch::stack({pre, dec}, 1), 1);
}

// Mean over graphs of the squared log errors of the known phase outputs and totals.
torch::Tensor loss_of(const torch::Tensor& prediction, const TargetTensors& b, int64_t graphs) {
  const auto phase = ((prediction - b.target).pow(2) * b.known).sum();
  const auto energy =
      (log_total(prediction, energy_prefill, energy_decode, b.has_decode) - b.totals.select(1, 0)).pow(2);
  const auto latency =
      (log_total(prediction, latency_prefill, latency_decode, b.has_decode) - b.totals.select(1, 1)).pow(2);
  const auto total = (energy * b.totals_known.select(1, 0) + latency * b.totals_known.select(1, 1)).sum();
  return (phase + total) / static_cast<double>(graphs);
}

// MAPE of the total energy over a set, in %.
double energy_mape(GnnNet& net, const FlatTensors& t) {
  torch::NoGradGuard no_grad;
  const auto prediction = net->forward(t);
  const auto log_ratio =
      log_total(prediction, energy_prefill, energy_decode, t.targets.has_decode) - t.targets.totals.select(1, 0);
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

GnnNet net_with(const GnnWeights& w) {
  GnnNet net(node_width(w.features), global_width(w.features), w.hidden);
  import_weights(net, w);
  return net;
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

void print_epoch(const GnnTrainOptions& o, int epoch, double loss, double mape, double best, double elapsed_s,
                 bool end) {
  if (!o.progress) return;
  const double rate = epoch / std::max(elapsed_s, 1e-9);
  std::cerr << fmt::format(
                   "\r{}: epoch {}/{} loss {:.4f} val MAPE {:.2f}% (best {:.2f}%) {:.2f} epochs/s ETA <= {:.0f} s   ",
                   o.name, epoch, o.max_epochs, loss, mape, best, rate, (o.max_epochs - epoch) / rate)
            << (end ? "\n" : "") << std::flush;
}

std::vector<int64_t> all_indices(int64_t count) {
  std::vector<int64_t> indices(static_cast<size_t>(count));
  std::iota(indices.begin(), indices.end(), 0);
  return indices;
}

// One epoch of Adam steps over the training set in a fresh random order; returns the mean batch loss.
double train_epoch(GnnNet& net, torch::optim::Adam& adam, BatchPrefetcher& batches, const FlatGraphSet& set) {
  const auto permutation = torch::randperm(set.size(), torch::kLong);
  batches.begin(std::vector<int64_t>(permutation.data_ptr<int64_t>(), permutation.data_ptr<int64_t>() + set.size()));
  double loss_sum = 0;
  for (int64_t b = 0; b < batches.batches(); ++b) {
    const FlatTensors t = flat_tensors(batches.next(), set.node_width, set.global_width);
    adam.zero_grad();
    const auto loss = loss_of(net->forward(t), t.targets, t.graphs);
    loss.backward();
    adam.step();
    loss_sum += loss.item<double>();
  }
  return loss_sum / static_cast<double>(batches.batches());
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
  const FlatGraphSet train = flatten_examples(train_set, w), valid_set = flatten_examples(validation_set, w);
  GraphBatch valid_batch;
  collate(valid_set, all_indices(valid_set.size()), valid_batch);
  const FlatTensors valid = flat_tensors(valid_batch, valid_set.node_width, valid_set.global_width);
  BatchPrefetcher batches(train, o.batch_size);

  GnnNet net(node_width(features), global_width(features), o.hidden);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(o.learning_rate));
  double best = INFINITY;
  int best_epoch = 0, epoch = 0;
  std::vector<torch::Tensor> best_params = snapshot(net);
  const auto start = std::chrono::steady_clock::now();
  for (epoch = 1; epoch <= o.max_epochs; ++epoch) {
    const double loss = train_epoch(net, adam, batches, train);
    const double mape = energy_mape(net, valid);
    if (mape < best) {
      best = mape;
      best_epoch = epoch;
      best_params = snapshot(net);
    }
    const double elapsed = seconds_since(start);
    const bool stop = epoch - best_epoch >= o.patience || epoch == o.max_epochs;
    print_epoch(o, epoch, loss, mape, best, elapsed, stop);
    if (stop) break;
  }
  restore(net, best_params);
  export_weights(net, w);
  w.info = {{"name", o.name},
            {"examples", examples.size()},
            {"validation_examples", validation_set.size()},
            {"seed", o.seed},
            {"epochs", std::min(epoch, o.max_epochs)},
            {"best_epoch", best_epoch},
            {"validation_energy_mape_percent", best},
            {"batch_size", o.batch_size},
            {"learning_rate", o.learning_rate}};
  return w;
}

std::vector<std::array<double, kOutputs>> torch_forward(const GnnWeights& w, const std::vector<EncodedGraph>& graphs,
                                                        GraphLayout layout) {
  GnnNet net = net_with(w);
  std::vector<const EncodedGraph*> pointers;
  for (const auto& g : graphs) pointers.push_back(&g);
  const FlatGraphSet set = flatten_graphs(pointers, w);
  GraphBatch batch;
  collate(set, all_indices(set.size()), batch);
  torch::NoGradGuard no_grad;
  const auto out = (layout == GraphLayout::flat ? net->forward(flat_tensors(batch, set.node_width, set.global_width))
                                                : net->forward(padded_tensors(batch, set.node_width, set.global_width)))
                       .to(torch::kFloat64)
                       .contiguous();
  std::vector<std::array<double, kOutputs>> result(graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i)
    std::copy_n(out.data_ptr<double>() + i * kOutputs, kOutputs, result[i].data());
  return result;
}

LossGradient torch_loss_gradient(const GnnWeights& w, const std::vector<const Example*>& examples, GraphLayout layout) {
  GnnNet net = net_with(w);
  const FlatGraphSet set = flatten_examples(examples, w);
  GraphBatch batch;
  collate(set, all_indices(set.size()), batch);
  const auto prediction = layout == GraphLayout::flat
                              ? net->forward(flat_tensors(batch, set.node_width, set.global_width))
                              : net->forward(padded_tensors(batch, set.node_width, set.global_width));
  const auto loss = loss_of(prediction, target_views(batch), batch.graphs);
  loss.backward();
  LossGradient result{loss.item<double>(), {}};
  for (const auto& p : net->parameters()) {
    const auto g = p.grad().to(torch::kFloat64).contiguous();
    result.gradient.insert(result.gradient.end(), g.data_ptr<double>(), g.data_ptr<double>() + g.numel());
  }
  return result;
}

}  // namespace llmco2::training
