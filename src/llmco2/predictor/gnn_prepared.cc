// predictor/gnn_prepared.cc - the prepared forward pass: SAGE products as ordered sums vectorised over the hidden
// units (4 or 8 lanes), layer 1's fixed columns summed once per setup, the readout shared with gnn_forward.
#include "predictor/gnn_prepared.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "core/error.h"

namespace llmco2::predictor {
namespace {

// Eigen's GEMM kernel for float with SSE and without FMA works in panels of 2 packets of 4 rows (mr = 8), each
// entry accumulated over the depth in order with a product and a sum (no even/odd split: that is the 1-packet
// panel's, which a hidden width divisible by 8 never reaches). Other builds: the plain path.
#if defined(EIGEN_VECTORIZE_SSE2) && !defined(EIGEN_VECTORIZE_AVX) && !defined(EIGEN_VECTORIZE_FMA)
constexpr bool kEigenOrderKnown = Eigen::internal::gebp_traits<float, float>::mr == 8;
#else
constexpr bool kEigenOrderKnown = false;
#endif

using Floats4 = float __attribute__((vector_size(16)));
using Floats8 = float __attribute__((vector_size(32)));

// PreparedGnnPass::AddProducts with `V` lanes and the hidden width H: the H sums live in registers across k.
template <typename V, int H>
[[gnu::always_inline]] inline void add_products(const float* a, int k0, int k1, const float* w, float* out) {
  constexpr int lanes = sizeof(V) / sizeof(float), blocks = H / lanes;
  V acc[blocks];
  std::memcpy(acc, out, sizeof acc);
  for (int k = k0; k < k1; ++k) {
    const float ak = a[k];
    if (ak == 0.0f) continue;
    const float* row = w + static_cast<long>(k) * H;
    for (int b = 0; b < blocks; ++b) {
      V wv;
      std::memcpy(&wv, row + b * lanes, sizeof wv);
      acc[b] += ak * wv;  // no FMA in either target: the product is rounded, then the sum, as in Eigen's kernel
    }
  }
  std::memcpy(out, acc, sizeof acc);
}

template <int H>
void add_products_sse(const float* a, int k0, int k1, const float* w, float* out) {
  add_products<Floats4, H>(a, k0, k1, w, out);
}

#if defined(__x86_64__)
template <int H>
[[gnu::target("avx")]] void add_products_avx(const float* a, int k0, int k1, const float* w, float* out) {
  add_products<Floats8, H>(a, k0, k1, w, out);
}
#endif

#if defined(__x86_64__)
// Whether the CPU and the OS run AVX: CPUID's AVX and OSXSAVE bits and the OS saving the SSE and AVX registers (XCR0
// bits 1 and 2), the test __builtin_cpu_supports("avx") makes. Asked here, once, rather than through libgcc's
// __cpu_indicator_init, a constructor that runs ~20 CPUIDs in every process (each traps to the hypervisor in a VM:
// ~50 us of `llmco2 predict`'s start-up, which never needs the answer).
bool cpu_runs_avx() {
  static const bool runs = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_AVX) || !(ecx & bit_OSXSAVE)) return false;
    unsigned xcr0_low = 0, xcr0_high = 0;
    __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    return (xcr0_low & 0x6u) == 0x6u;
  }();
  return runs;
}
#endif

template <int H>
PreparedGnnPass::AddProducts add_products_for(bool avx) {
#if defined(__x86_64__)
  if (avx && cpu_runs_avx()) return &add_products_avx<H>;
#endif
  return &add_products_sse<H>;
}

PreparedGnnPass::AddProducts add_products_for(int hidden, bool avx) {
  switch (hidden) {
    case 32:
      return add_products_for<32>(avx);
    case 64:
      return add_products_for<64>(avx);
    case 128:
      return add_products_for<128>(avx);
  }
  fail("the prepared GNN pass has no kernel for hidden width {}", hidden);
}

// [out, in] row-major -> [in, out] row-major.
std::vector<float> by_input(const RowMatrix& m) {
  std::vector<float> t(static_cast<size_t>(m.size()));
  Eigen::Map<RowMatrix>(t.data(), m.cols(), m.rows()) = m.transpose();
  return t;
}

bool all_finite(const RowMatrix& m) { return m.allFinite(); }

}  // namespace

std::optional<SageWeightsByInput> sage_weights_by_input(const GnnWeights& w) {
  if (!kEigenOrderKnown || (w.hidden != 32 && w.hidden != 64 && w.hidden != 128)) return std::nullopt;
  for (const RowMatrix* m : {&w.sage1_self, &w.sage1_neigh, &w.sage2_self, &w.sage2_neigh})
    if (!all_finite(*m)) return std::nullopt;
  return SageWeightsByInput{w.hidden, by_input(w.sage1_self), by_input(w.sage1_neigh), by_input(w.sage2_self),
                            by_input(w.sage2_neigh)};
}

PreparedGnnPass::PreparedGnnPass(const GnnWeights& w, const SageWeightsByInput& by_input, const EncodedGraph& first,
                                 int fixed_columns, bool avx)
    : by_input_(by_input),
      add_(add_products_for(by_input.hidden, avx)),
      nodes_(first.nodes),
      width_(static_cast<int>(w.node_norm.mean.size())),
      fixed_(fixed_columns),
      hidden_(by_input.hidden),
      edges_(first.edges),
      degree_(static_cast<size_t>(first.nodes), 0.0f),
      norm_(w.node_norm) {
  if (nodes_ < 2 || fixed_ < 0 || fixed_ > width_ || first.x.size() != static_cast<size_t>(nodes_ * width_))
    fail("the prepared GNN pass needs a graph of at least 2 nodes of {} columns", width_);
  for (int i = 0; i < nodes_; ++i)
    fixed_x_.insert(fixed_x_.end(), first.x.begin() + i * width_, first.x.begin() + i * width_ + fixed_);
  for (const auto& [from, to] : edges_) degree_[to] += 1;
  index_in_neighbours();
  const size_t cells = static_cast<size_t>(nodes_) * hidden_;
  x_.assign(static_cast<size_t>(nodes_) * width_, 0.0f);
  x_mean_ = x_;
  for (auto* v : {&self_prefix_, &neigh_prefix_, &self_, &neigh_, &h1_, &h1_mean_, &h2_}) v->assign(cells, 0.0f);
  standardise(first, 0);
  neighbour_mean(x_, width_, 0, x_mean_);
  for (int i = 0; i < nodes_; ++i) {
    add_(&x_[i * width_], 0, fixed_, by_input_.self1.data(), &self_prefix_[i * hidden_]);
    add_(&x_mean_[i * width_], 0, fixed_, by_input_.neigh1.data(), &neigh_prefix_[i * hidden_]);
  }
}

bool PreparedGnnPass::fits(const EncodedGraph& g) const {
  if (g.nodes != nodes_ || g.edges != edges_ || g.x.size() != x_.size()) return false;
  if (fixed_ == 0) return true;  // no fixed columns (and memcmp may not be given the empty vector's null data)
  for (int i = 0; i < nodes_; ++i)
    if (std::memcmp(g.x.data() + i * width_, fixed_x_.data() + i * fixed_, sizeof(float) * fixed_) != 0) return false;
  return true;
}

// Columns [c0, width_) of the graph's nodes, standardised as gnn_forward's `standardised` does: (x - mean) / scale.
void PreparedGnnPass::standardise(const EncodedGraph& g, int c0) {
  for (int i = 0; i < nodes_; ++i)
    for (int c = c0; c < width_; ++c) x_[i * width_ + c] = (g.x[i * width_ + c] - norm_.mean[c]) / norm_.scale[c];
}

// Each node's in-neighbours in edge order, and its twin: the first node before it with the same in-neighbours in
// the same order, whose neighbour means are therefore its own.
void PreparedGnnPass::index_in_neighbours() {
  in_start_.assign(static_cast<size_t>(nodes_) + 1, 0);
  for (const auto& edge : edges_) ++in_start_[edge.second + 1];
  for (int i = 0; i < nodes_; ++i) in_start_[i + 1] += in_start_[i];
  in_from_.resize(edges_.size());
  std::vector<int> next(in_start_.begin(), in_start_.end() - 1);
  for (const auto& [from, to] : edges_) in_from_[next[to]++] = from;
  const auto sources = [&](int i) {
    return std::vector<int>(in_from_.begin() + in_start_[i], in_from_.begin() + in_start_[i + 1]);
  };
  twin_.assign(static_cast<size_t>(nodes_), -1);
  for (int i = 0; i < nodes_; ++i)
    for (int j = 0; j < i && twin_[i] < 0; ++j)
      if (sources(i) == sources(j)) twin_[i] = j;
  copy_of_ = twin_;
}

namespace {

// values[c] /= degree for c < count (nothing for degree 0). Dividing by a power of 2 is multiplying by its exact
// inverse (the same correctly rounded quotient), by 1 is nothing: most nodes have 1 or 2 in-neighbours, and a
// division costs several multiplications.
void divide(float* __restrict values, int count, float degree) {
  if (degree == 0.0f || degree == 1.0f) return;
  int exponent = 0;
  if (std::frexp(degree, &exponent) == 0.5f) {
    const float inverse = std::ldexp(1.0f, 1 - exponent);
    for (int c = 0; c < count; ++c) values[c] *= inverse;
    return;
  }
  for (int c = 0; c < count; ++c) values[c] /= degree;
}

}  // namespace

// Columns [c0, width) of each node's in-neighbour mean, in gnn_forward's order: sums in edge order from 0, then
// divided by the in-degree (0 without in-neighbours).
void PreparedGnnPass::neighbour_mean(const std::vector<float>& h, int width, int c0, std::vector<float>& out) const {
  for (int i = 0; i < nodes_; ++i) {
    float* __restrict row = &out[i * width];
    std::fill(row + c0, row + width, 0.0f);
    for (int e = in_start_[i]; e < in_start_[i + 1]; ++e) {
      const float* __restrict from = &h[in_from_[e] * width];
      for (int c = c0; c < width; ++c) row[c] += from[c];
    }
    divide(row + c0, width - c0, degree_[i]);
  }
}

// copy_of_[i]: the twin whose raw features node i repeats (so all its values are the twin's), else -1.
void PreparedGnnPass::find_copies(const EncodedGraph& g) {
  for (int i = 0; i < nodes_; ++i) {
    const int j = twin_[i];
    const bool same = j >= 0 && std::memcmp(&g.x[i * width_], &g.x[j * width_], sizeof(float) * width_) == 0;
    copy_of_[i] = same ? j : -1;
  }
}

// sums (nodes x hidden_) plus the products of `a`'s inputs [k0, width) and the weights `w`; a copy takes its twin's
// sums. One weight matrix at a time: the two of layer 2 together would fill the L1 cache.
void PreparedGnnPass::add_products_of(const std::vector<float>& a, int k0, int width, const std::vector<float>& w,
                                      std::vector<float>& sums) {
  for (int i = 0; i < nodes_; ++i) {
    float* row = &sums[i * hidden_];
    if (const int j = copy_of_[i]; j >= 0) std::copy_n(&sums[j * hidden_], hidden_, row);
    else add_(&a[i * width], k0, width, w.data(), row);
  }
}

// self_ and neigh_ (layer 1's from its prefixes, layer 2's from 0) plus the products over inputs [k0, width) of `a`
// and of its neighbour means `a_mean`.
void PreparedGnnPass::add_layer(const std::vector<float>& a, const std::vector<float>& a_mean, int k0, int width,
                                const std::vector<float>& self_w, const std::vector<float>& neigh_w) {
  add_products_of(a, k0, width, self_w, self_);
  add_products_of(a_mean, k0, width, neigh_w, neigh_);
}

void PreparedGnnPass::combine(const Eigen::VectorXf& bias) {
  const float* __restrict b = bias.data();
  for (int i = 0; i < nodes_; ++i) {
    const float* __restrict self = &self_[i * hidden_];
    const float* __restrict neigh = &neigh_[i * hidden_];
    float* __restrict out = &h2_[i * hidden_];
    for (int j = 0; j < hidden_; ++j) out[j] = std::max(self[j] + neigh[j] + b[j], 0.0f);
  }
}

std::array<double, kOutputs> PreparedGnnPass::forward(const GnnWeights& w, const EncodedGraph& g) {
  find_copies(g);
  standardise(g, fixed_);
  neighbour_mean(x_, width_, fixed_, x_mean_);
  self_ = self_prefix_, neigh_ = neigh_prefix_;
  add_layer(x_, x_mean_, fixed_, width_, by_input_.self1, by_input_.neigh1);
  combine(w.sage1_bias);
  h1_.swap(h2_);
  neighbour_mean(h1_, hidden_, 0, h1_mean_);
  std::fill(self_.begin(), self_.end(), 0.0f);
  std::fill(neigh_.begin(), neigh_.end(), 0.0f);
  add_layer(h1_, h1_mean_, 0, hidden_, by_input_.self2, by_input_.neigh2);
  combine(w.sage2_bias);
  return gnn_readout(w, h2_.data(), nodes_, g);
}

}  // namespace llmco2::predictor
