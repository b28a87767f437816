// The GNN's prepared path (SetupEncoder, PreparedGnnPass, the predictor's per-setup cache) against the plain path
// (encode_graph, gnn_forward): the same encodings and the same outputs to the bit, over every bundled model, several
// GPUs, GPU counts and counts, and over random graphs and weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/paths.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "predictor/gnn_prepared.h"
#include "predictor/predictor.h"
#include "predictor/setup_cache.h"
#include "sample_configs.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

const SimParams& params() {
  static const SimParams p = load_sim_params(default_sim_params_path());
  return p;
}

const GnnWeights& bundled_weights() {
  static const GnnWeights w = [] {
    const auto path = data_dir() / "predictors" / "llmco2.model";
    return gnn_from_file(read_model_file(path), path.string());
  }();
  return w;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

void expect_same_encoding(const EncodedGraph& a, const EncodedGraph& b, const std::string& where) {
  EXPECT_EQ(a.nodes, b.nodes) << where;
  EXPECT_TRUE(same_bits(a.x, b.x)) << where;
  EXPECT_EQ(a.edges, b.edges) << where;
  EXPECT_TRUE(same_bits(a.globals, b.globals)) << where;
  for (int i = 0; i < kOutputs; ++i) EXPECT_EQ(a.physics_log[i], b.physics_log[i]) << where << " output " << i;
  EXPECT_EQ(a.has_decode, b.has_decode) << where;
}

// gnn_forward and the prepared pass (with 8 lanes where the CPU has them, and with 4) on the same graph.
void expect_same_forward(const GnnWeights& w, const SageWeightsByInput& by_input, const EncodedGraph& g,
                         int fixed_columns, const std::string& where) {
  const auto reference = gnn_forward(w, g);
  for (bool avx : {true, false}) {
    PreparedGnnPass pass(w, by_input, g, fixed_columns, avx);
    ASSERT_TRUE(pass.fits(g)) << where;
    const auto fast = pass.forward(w, g);
    for (int i = 0; i < kOutputs; ++i) EXPECT_EQ(fast[i], reference[i]) << where << " avx " << avx << " output " << i;
  }
}

// Batch, prompt, gen: one token, decode-heavy, prefill-heavy, a large batch (waves on small GPUs), a context too long
// for most models (rejected by both paths).
constexpr std::array<std::array<long, 3>, 5> kCounts = {
    {{1, 1, 1}, {1, 128, 1024}, {8, 4000, 64}, {64, 1024, 256}, {1, 200000, 100}}};

// Encodes kCounts on one setup both ways; returns how many the prepared encoder took.
int compare_setup(PredictorInput setup, const std::string& name) {
  std::optional<SetupEncoder> encoder;
  try {
    encoder.emplace(setup, FeatureSet::llmco2, params());
  } catch (const Error&) {
    return 0;  // this model cannot run on this many GPUs
  }
  const auto by_input = sage_weights_by_input(bundled_weights());
  int prepared = 0;
  for (const auto& [batch, prompt, gen] : kCounts) {
    setup.request.batch = batch, setup.request.prompt_tokens = prompt, setup.request.gen_tokens = gen;
    const std::string where = fmt::format("{} {}/{}/{}", name, batch, prompt, gen);
    std::optional<EncodedGraph> reference;
    try {
      reference = encode_graph(setup, FeatureSet::llmco2, params());
    } catch (const Error&) {
    }
    const EncodedGraph* fast = nullptr;
    try {
      fast = encoder->encode(setup);
    } catch (const Error&) {
      EXPECT_FALSE(reference) << where << ": only the prepared encoder rejected it";
      continue;
    }
    if (!fast) continue;
    EXPECT_TRUE(reference) << where << ": only the plain encoder rejected it";
    if (!reference) continue;
    expect_same_encoding(*fast, *reference, where);
    if (by_input) expect_same_forward(bundled_weights(), *by_input, *fast, kSetupNodeColumns, where);
    ++prepared;
  }
  return prepared;
}

TEST(SetupEncoder, EncodesEveryRequestOfASetupAsEncodeGraphDoesAndTheForwardPassesAgree) {
  int prepared = 0;
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const auto model = std::make_shared<const ModelSpec>(ModelCatalog::bundled().resolve(entry.id));
    for (const std::string gpu_id : {"h100-sxm", "l4"}) {
      const auto gpu = std::make_shared<const Gpu>(GpuCatalog::bundled().resolve(gpu_id));
      for (int gpus : {1, 4}) {
        Request setup;
        setup.gpus = gpus;
        setup.precision = engine_precision(*gpu, model->precision_for(""), setup.engine).precision;
        PredictorInput c = predictor_input(*model, *gpu, setup);
        prepared += compare_setup(c, fmt::format("{} {} x{}", entry.id, gpu_id, gpus));
      }
    }
  }
  EXPECT_GT(prepared, 400);
}

TEST(SetupEncoder, TheSetupColumnsAreTheSameForEveryRequestOfTheSetup) {
  CatalogCache catalogs;
  for (const char* model : {"llama-3.1-8b", "mixtral-8x7b", "deepseek-v3.1", "gemma-2-9b"}) {
    PredictorInput c = predictor_input(default_config(model, "h100-sxm", catalogs));
    const EncodedGraph a = encode_graph(c, FeatureSet::llmco2, params());
    c.request.batch = 32, c.request.prompt_tokens = 77, c.request.gen_tokens = 5;
    const EncodedGraph b = encode_graph(c, FeatureSet::llmco2, params());
    const int width = node_width(FeatureSet::llmco2);
    ASSERT_EQ(a.nodes, b.nodes) << model;
    int differing = 0;
    for (int i = 0; i < a.nodes; ++i)
      for (int col = 0; col < width; ++col) {
        const float x = a.x[i * width + col], y = b.x[i * width + col];
        if (col < kSetupNodeColumns) {
          EXPECT_EQ(x, y) << model << " node " << i << " column " << col;
        }
        differing += x != y;
      }
    EXPECT_GT(differing, a.nodes) << model << ": the cost columns follow the counts";
  }
}

TEST(SetupEncoder, LeavesRequestsThatRunInWavesToThePlainPath) {
  CatalogCache catalogs;
  PredictorInput c = predictor_input(default_config("llama-3.1-8b", "l4", catalogs));
  SetupEncoder encoder(c, FeatureSet::llmco2, params());
  c.request.batch = 256, c.request.prompt_tokens = 8000, c.request.gen_tokens = 2000;  // 24 GB L4: many waves
  EXPECT_EQ(encoder.encode(c), nullptr);
  c.request.batch = 1;
  EXPECT_NE(encoder.encode(c), nullptr);
}

// Weights of `hidden` units drawn from N(0, 0.3), with the bundled model's feature widths.
GnnWeights random_weights(int hidden, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  auto matrix = [&](int rows, int cols) {
    return RowMatrix(RowMatrix::NullaryExpr(rows, cols, [&] { return normal(rng); }));
  };
  auto vector = [&](int n) { return Eigen::VectorXf(Eigen::VectorXf::NullaryExpr(n, [&] { return normal(rng); })); };
  GnnWeights w = bundled_weights();
  const int in = node_width(w.features), globals = global_width(w.features);
  w.hidden = hidden;
  w.sage1_self = matrix(hidden, in), w.sage1_neigh = matrix(hidden, in), w.sage1_bias = vector(hidden);
  w.sage2_self = matrix(hidden, hidden), w.sage2_neigh = matrix(hidden, hidden), w.sage2_bias = vector(hidden);
  w.head1 = matrix(hidden, hidden + globals), w.head1_bias = vector(hidden);
  w.head2 = matrix(kOutputs, hidden), w.head2_bias = vector(kOutputs);
  return w;
}

// A graph of `nodes` with random edges and features, a third of them exactly 0.
EncodedGraph random_graph(const GnnWeights& w, int nodes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-3.0f, 30.0f);
  std::uniform_int_distribution<int> node(0, nodes - 1), third(0, 2);
  EncodedGraph g;
  g.nodes = nodes;
  for (int i = 0; i < nodes * node_width(w.features); ++i) g.x.push_back(third(rng) == 0 ? 0.0f : value(rng));
  for (int e = 0; e < 2 * nodes; ++e) g.edges.emplace_back(node(rng), node(rng));
  for (int i = 0; i < global_width(w.features); ++i) g.globals.push_back(value(rng));
  g.physics_log = {1.5, -2.0, 0.25, 3.0};
  return g;
}

TEST(PreparedGnnPass, RandomGraphsAndWeightsAsGnnForward) {
  for (int hidden : {32, 64, 128}) {
    const GnnWeights w = random_weights(hidden, 7u + hidden);
    const auto by_input = sage_weights_by_input(w);
    if (!by_input) GTEST_SKIP() << "this build's Eigen kernels are not the ones the prepared pass reproduces";
    for (int nodes : {2, 3, 5, 8, 17, 40})
      for (int fixed : {0, kSetupNodeColumns, node_width(w.features)})
        expect_same_forward(w, *by_input, random_graph(w, nodes, 100u * nodes + fixed), fixed,
                            fmt::format("hidden {} nodes {} fixed {}", hidden, nodes, fixed));
  }
}

TEST(PreparedGnnPass, OtherShapesDoNotFit) {
  const GnnWeights& w = bundled_weights();
  const auto by_input = sage_weights_by_input(w);
  if (!by_input) GTEST_SKIP() << "this build's Eigen kernels are not the ones the prepared pass reproduces";
  const EncodedGraph g = random_graph(w, 6, 1);
  const PreparedGnnPass pass(w, *by_input, g, kSetupNodeColumns);
  EncodedGraph other = g;
  other.x[node_width(w.features) + 2] += 1;  // node 1's third setup column
  EXPECT_FALSE(pass.fits(other));
  other = g;
  other.x[node_width(w.features) + kSetupNodeColumns] += 1;  // a cost column: the pass's to vary
  EXPECT_TRUE(pass.fits(other));
  other.edges.pop_back();
  EXPECT_FALSE(pass.fits(other));
}

TEST(SageWeightsByInput, NotFiniteOrUnsupportedWidthsTakeThePlainPath) {
  GnnWeights w = random_weights(64, 3);
  if (!sage_weights_by_input(w))
    GTEST_SKIP() << "this build's Eigen kernels are not the ones the prepared pass reproduces";
  w.sage2_neigh(5, 7) = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(sage_weights_by_input(w));
  EXPECT_FALSE(sage_weights_by_input(random_weights(48, 3)));
}

TEST(SetupCache, LendsEachStateToOneHolderAndKeepsTheLatest) {
  CatalogCache catalogs;
  const PredictorInput a = predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
  PredictorInput a_other_counts = a;
  a_other_counts.request.batch = 7, a_other_counts.batch_scale = 0.5;
  PredictorInput b = a;
  b.request.gpus = 2;
  SetupCache<int> cache(2);
  auto first = cache.take(a);
  ASSERT_EQ(first.state, nullptr);
  EXPECT_FALSE(first.seen);
  first.state = std::make_unique<int>(1);
  auto second = cache.take(a);  // the first is lent out: none idle, but the setup was asked for before
  EXPECT_EQ(second.state, nullptr);
  EXPECT_TRUE(second.seen);
  cache.give_back(std::move(first));
  auto again = cache.take(a_other_counts);
  ASSERT_NE(again.state, nullptr);
  EXPECT_EQ(*again.state, 1);
  const auto b_first = cache.take(b);
  EXPECT_EQ(b_first.state, nullptr);
  EXPECT_FALSE(b_first.seen);
  cache.give_back(std::move(again));
  cache.give_back({b, std::make_unique<int>(2)});
  cache.give_back({a, std::make_unique<int>(3)});  // full: the state 1, given back first, goes
  auto got = cache.take(a);
  ASSERT_NE(got.state, nullptr);
  EXPECT_EQ(*got.state, 3);
  EXPECT_EQ(cache.take(a).state, nullptr);
  EXPECT_EQ(*cache.take(b).state, 2);
}

TEST(SetupCache, ForgetsTheOldestSetupsSeenWithoutAState) {
  CatalogCache catalogs;
  const PredictorInput a = predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
  PredictorInput b = a, c = a;
  b.request.gpus = 2, c.request.gpus = 4;
  SetupCache<int> cache(2);
  EXPECT_FALSE(cache.take(a).seen);
  EXPECT_FALSE(cache.take(b).seen);
  EXPECT_TRUE(cache.take(a).seen);
  EXPECT_FALSE(cache.take(c).seen);  // 2 remembered: a goes
  EXPECT_FALSE(cache.take(a).seen);  // c and a remembered now
  EXPECT_TRUE(cache.take(c).seen);
  EXPECT_FALSE(cache.take(b).seen);
}

// The predictor as served (prepared path, states kept between calls) against the plain encode_graph + gnn_forward.
TEST(GnnPredictor, PredictsAsThePlainPathToTheBit) {
  const auto predictor = load_predictor(data_dir() / "predictors" / "llmco2.model", params());
  CatalogCache catalogs;
  const std::vector<PredictorInput> configs = sample_configs(catalogs);
  for (int round = 0; round < 3; ++round)  // the plain path first, then the prepared states, made and kept
    for (const PredictorInput& c : configs) {
      const EncodedGraph g = encode_graph(c, bundled_weights().features, params());
      const auto y = gnn_forward(bundled_weights(), g);
      const Prediction p = predictor->predict(c);
      const std::string where = fmt::format("{} x{} batch {} gen {} round {}", c.model->id, c.request.gpus,
                                            c.request.batch, c.request.gen_tokens, round);
      EXPECT_EQ(*p.energy_j.prefill, std::exp(y[energy_prefill])) << where;
      EXPECT_EQ(*p.latency_s.prefill, std::exp(y[latency_prefill])) << where;
      EXPECT_EQ(*p.energy_j.decode, g.has_decode ? std::exp(y[energy_decode]) : 0.0) << where;
      EXPECT_EQ(*p.latency_s.decode, g.has_decode ? std::exp(y[latency_decode]) : 0.0) << where;
    }
}

void expect_same_values(const PhaseValues& a, const PhaseValues& b, const std::string& where) {
  EXPECT_EQ(a.prefill, b.prefill) << where;
  EXPECT_EQ(a.decode, b.decode) << where;
  EXPECT_EQ(a.total, b.total) << where;
}

// Both bundled GNNs (LLMCO2's features and NNLQP's merged ones, totals only): a predictor answering from kept states
// (through the prepared pass where this build has it) against a fresh one, whose only request takes the plain path.
TEST(GnnPredictor, BothBundledGnnsPredictAsAFreshPredictor) {
  CatalogCache catalogs;
  const std::vector<PredictorInput> configs = sample_configs(catalogs);
  for (const char* name : {"llmco2.model", "nnlqp.model"}) {
    const auto file = data_dir() / "predictors" / name;
    const auto kept = load_predictor(file, params());
    for (int round = 0; round < 3; ++round)
      for (const PredictorInput& c : configs) {
        const Prediction fresh = load_predictor(file, params())->predict(c), p = kept->predict(c);
        const std::string where =
            fmt::format("{} {} x{} batch {} round {}", name, c.model->id, c.request.gpus, c.request.batch, round);
        expect_same_values(p.energy_j, fresh.energy_j, where);
        expect_same_values(p.latency_s, fresh.latency_s, where);
      }
  }
}

// Four threads predicting the sample requests at once through one predictor (each lent its own states) answer what
// one thread answers.
TEST(GnnPredictor, ThreadsShareOnePredictor) {
  const auto predictor = load_predictor(data_dir() / "predictors" / "llmco2.model", params());
  CatalogCache catalogs;
  const std::vector<PredictorInput> configs = sample_configs(catalogs);
  std::vector<double> expected;
  for (const PredictorInput& c : configs) expected.push_back(*predictor->predict(c).energy_j.total);
  std::vector<std::vector<double>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (size_t i = 0; i < configs.size(); ++i) {
          const size_t at = (i + t) % configs.size();  // the threads start at different requests
          if (round == 19) got[t].push_back(*predictor->predict(configs[at]).energy_j.total);
          else predictor->predict(configs[at]);
        }
    });
  for (auto& thread : threads) thread.join();
  for (size_t t = 0; t < got.size(); ++t)
    for (size_t i = 0; i < configs.size(); ++i)
      EXPECT_EQ(got[t][i], expected[(i + t) % configs.size()]) << "thread " << t << " request " << i;
}

}  // namespace
}  // namespace llmco2
