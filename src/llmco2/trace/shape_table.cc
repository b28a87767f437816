// trace/shape_table.cc - grid of predictions over (prompt, gen) and its interpolation.
#include "trace/shape_table.h"

#include <algorithm>
#include <cmath>

#include "carbon/footprint.h"
#include "core/error.h"
#include "core/progress.h"
#include "features/memory_fit.h"

namespace llmco2::trace {
namespace {

constexpr long kDenseUpTo = 32;  // every token count up to this is a grid node
constexpr size_t kChunk = 512;   // predictions per predict_all call (progress granularity)

// Largest prompt + gen that fits the model's context window and the GPUs' memory (binary search: both limits grow
// with the total).
long largest_total_tokens(const PredictorInput& base) {
  const auto fits = [&](long total) {
    Request r = base.request;
    r.prompt_tokens = total - 1;
    r.gen_tokens = 1;
    if (base.model->max_positions && total > *base.model->max_positions) return false;
    return plan_memory(*base.model, r, *base.gpu).runs();
  };
  if (!fits(2))
    fail("{} does not fit {} x {} even for a 2-token request", base.model->id, base.request.gpus, base.gpu->id);
  long good = 2, bad = 1L << 22;
  if (fits(bad)) return bad;
  while (bad - good > 1) {
    const long mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  return good;
}

// Bilinear interpolation of one value over the four corners (in log space when all are positive).
std::optional<double> blend(const std::optional<double> (&v)[4], double wp, double wg) {
  for (const auto& x : v)
    if (!x) return std::nullopt;
  const bool logs = *v[0] > 0 && *v[1] > 0 && *v[2] > 0 && *v[3] > 0;
  double c[4];
  for (int i = 0; i < 4; ++i) c[i] = logs ? std::log(*v[i]) : *v[i];
  const double value = (c[0] * (1 - wg) + c[1] * wg) * (1 - wp) + (c[2] * (1 - wg) + c[3] * wg) * wp;
  return logs ? std::exp(value) : value;
}

PhaseValues blend(const PhaseValues* const (&corners)[4], double wp, double wg) {
  PhaseValues out;
  for (const auto& phase : kPhaseMembers) {
    const auto field = phase.value;
    const std::optional<double> v[4] = {corners[0]->*field, corners[1]->*field, corners[2]->*field, corners[3]->*field};
    out.*field = blend(v, wp, wg);
  }
  return out;
}

double log_weight(long x, long low, long high) {
  return low == high ? 0.0
                     : std::log(static_cast<double>(x) / static_cast<double>(low)) /
                           std::log(static_cast<double>(high) / static_cast<double>(low));
}

}  // namespace

ShapeTable::ShapeTable(const Predictor& predictor, PredictorInput base, double grid_ratio)
    : predictor_(predictor), base_(std::move(base)), grid_ratio_(grid_ratio) {
  if (!(grid_ratio >= 1.0 && grid_ratio <= 2.0)) fail("--grid: expected a ratio between 1 and 2, got {}", grid_ratio);
  max_total_tokens_ = largest_total_tokens(base_);
}

bool ShapeTable::valid(const Shape& s) const {
  return s.prompt_tokens >= 1 && s.gen_tokens >= 1 && s.prompt_tokens + s.gen_tokens <= max_total_tokens_;
}

ShapeTable::Bracket ShapeTable::bracket(long x) const {
  if (grid_ratio_ == 1.0 || x <= kDenseUpTo) return {x, x};
  const double step = std::log(grid_ratio_);
  const auto node = [&](long k) { return std::lround(kDenseUpTo * std::exp(step * static_cast<double>(k))); };
  long k = static_cast<long>(std::floor(std::log(static_cast<double>(x) / kDenseUpTo) / step));
  while (node(k) > x) --k;
  while (node(k + 1) <= x) ++k;
  const long low = node(k), high = node(k + 1);
  return low == x ? Bracket{x, x} : Bracket{low, high};
}

bool ShapeTable::exact(const Shape& s) const {
  return grid_ratio_ == 1.0 || exact_shapes_.count(key(s.prompt_tokens, s.gen_tokens)) > 0;
}

void ShapeTable::prepare(const std::vector<Shape>& shapes, bool progress) {
  std::unordered_set<uint64_t> wanted;
  for (const auto& s : shapes) {
    if (!valid(s)) continue;
    const Bracket p = bracket(s.prompt_tokens), g = bracket(s.gen_tokens);
    if (p.high + g.high > max_total_tokens_) {
      exact_shapes_.insert(key(s.prompt_tokens, s.gen_tokens));
      wanted.insert(key(s.prompt_tokens, s.gen_tokens));
      continue;
    }
    for (long prompt : {p.low, p.high})
      for (long gen : {g.low, g.high}) wanted.insert(key(prompt, gen));
  }
  std::vector<uint64_t> todo;
  for (uint64_t k : wanted)
    if (!nodes_.count(k)) todo.push_back(k);
  std::sort(todo.begin(), todo.end());
  Progress bar("predicting shapes", static_cast<long>(todo.size()), progress && todo.size() > 2000);
  for (size_t start = 0; start < todo.size(); start += kChunk) {
    std::vector<PredictorInput> configs;
    const size_t end = std::min(todo.size(), start + kChunk);
    for (size_t i = start; i < end; ++i) {
      PredictorInput c = base_;
      c.request.prompt_tokens = static_cast<long>(todo[i] >> 32);
      c.request.gen_tokens = static_cast<long>(todo[i] & 0xffffffffu);
      configs.push_back(std::move(c));
    }
    const std::vector<Prediction> predictions = predictor_.predict_all(configs);
    for (size_t i = start; i < end; ++i) nodes_[todo[i]] = predictions[i - start];
    bar.update(static_cast<long>(end));
  }
  bar.finish();
}

Prediction ShapeTable::at(const Shape& s) const {
  const auto node = [&](long prompt, long gen) -> const Prediction& {
    const auto it = nodes_.find(key(prompt, gen));
    if (it == nodes_.end()) fail("shape table: prompt {} gen {} was not prepared", prompt, gen);
    return it->second;
  };
  if (exact(s)) return node(s.prompt_tokens, s.gen_tokens);
  const Bracket p = bracket(s.prompt_tokens), g = bracket(s.gen_tokens);
  const Prediction* c[4] = {&node(p.low, g.low), &node(p.low, g.high), &node(p.high, g.low), &node(p.high, g.high)};
  const double wp = log_weight(s.prompt_tokens, p.low, p.high), wg = log_weight(s.gen_tokens, g.low, g.high);
  const PhaseValues* energy[4] = {&c[0]->energy_j, &c[1]->energy_j, &c[2]->energy_j, &c[3]->energy_j};
  const PhaseValues* latency[4] = {&c[0]->latency_s, &c[1]->latency_s, &c[2]->latency_s, &c[3]->latency_s};
  Prediction out{blend(energy, wp, wg), blend(latency, wp, wg), false, {}};
  for (PhaseValues* v : {&out.energy_j, &out.latency_s})
    if (v->prefill && v->decode) v->total = *v->prefill + *v->decode;  // phases and total stay consistent
  return out;
}

}  // namespace llmco2::trace
