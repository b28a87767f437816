// calibration/screening.cc - rows slower than the same work on a GPU they beat on every figure.
#include "calibration/screening.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sim/label.h"

namespace llmco2::calibration {
namespace {

// What makes two rows the same work on two GPUs.
using WorkKey = std::tuple<std::string, std::string, std::string, std::string, int, int, Parallelism, Measures,
                           std::string, long, long>;

WorkKey work_key(const DatasetRow& row) {
  const long gen = row.measures == Measures::steady_state ? 0 : std::lround(row.gen_tokens);
  return {row.source,
          row.model,
          row.dtype,
          row.engine,
          row.gpus,
          row.tensor_parallel,
          row.parallelism,
          row.measures,
          row.note("task"),
          std::lround(row.prompt_tokens),
          gen};
}

struct BatchPoint {
  double batch = 0, s_per_token = 0, gen_tokens = 0;
};

// Sorts a GPU's points by batch and replaces repeats at one batch by their median (time and output length), so that
// one outlying repeat does not decide the comparison.
void collapse_repeats(std::vector<BatchPoint>& points) {
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.batch < b.batch; });
  std::vector<BatchPoint> out;
  for (size_t i = 0; i < points.size();) {
    size_t j = i;
    while (j < points.size() && points[j].batch == points[i].batch) ++j;
    std::vector<double> times, gens;
    for (size_t k = i; k < j; ++k) times.push_back(points[k].s_per_token), gens.push_back(points[k].gen_tokens);
    std::sort(times.begin(), times.end());
    std::sort(gens.begin(), gens.end());
    const size_t n = times.size();
    const auto median = [n](const std::vector<double>& v) { return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; };
    out.push_back({points[i].batch, median(times), median(gens)});
    i = j;
  }
  points = std::move(out);
}

// Time per generated token at `batch` from a GPU's points (sorted by batch), linear in log batch; < 0 outside them.
double interpolated_s_per_token(const std::vector<BatchPoint>& points, double batch) {
  if (points.empty() || batch < points.front().batch / 1.1 || batch > points.back().batch * 1.1) return -1;
  if (batch <= points.front().batch) return points.front().s_per_token;
  if (batch >= points.back().batch) return points.back().s_per_token;
  const auto hi =
      std::lower_bound(points.begin(), points.end(), batch, [](const BatchPoint& p, double b) { return p.batch < b; });
  const auto lo = hi - 1;
  const double t = std::log(batch / lo->batch) / std::log(hi->batch / lo->batch);
  return lo->s_per_token + t * (hi->s_per_token - lo->s_per_token);
}

// Steady-state rows leave the output length out of the work key (it is measured, not set): their time per token
// grows with the context, so the two GPUs' mean output lengths must agree within this factor.
constexpr double kOutputLengthRatio = 1.5;

double mean_gen_tokens(const std::vector<BatchPoint>& points) {
  double sum = 0;
  for (const auto& p : points) sum += p.gen_tokens;
  return points.empty() ? 0.0 : sum / static_cast<double>(points.size());
}

}  // namespace

std::vector<NotGpuBound> not_gpu_bound(const CalibrationSet& set) {
  // Per work key, per GPU: the rows' (batch, time per generated token), sorted by batch.
  std::map<WorkKey, std::map<std::string, std::vector<BatchPoint>>> work;
  for (const auto& sample : set.samples) {
    const DatasetRow& row = set.rows[sample.row];
    if (sample.latency_s && row.gen_tokens > 0)
      work[work_key(row)][row.gpu].push_back({row.batch, *sample.latency_s / row.gen_tokens, row.gen_tokens});
  }
  for (auto& [key, gpus] : work)
    for (auto& [gpu, points] : gpus) collapse_repeats(points);
  CatalogCache catalogs;
  std::vector<NotGpuBound> out;
  for (size_t s = 0; s < set.samples.size(); ++s) {
    const DatasetRow& row = set.rows[set.samples[s].row];
    if (!set.samples[s].latency_s || !(row.gen_tokens > 0)) continue;
    const double s_per_token = *set.samples[s].latency_s / row.gen_tokens;
    const auto found = work.find(work_key(row));
    if (found == work.end()) continue;
    const std::shared_ptr<const Gpu> gpu = catalogs.gpu(row.gpu);
    for (const auto& [other_id, points] : found->second) {
      const std::shared_ptr<const Gpu> other = catalogs.gpu(other_id);
      // The same vendor's software stack, the link the row's GPU count uses, outputs of about the same length.
      if (other_id == row.gpu || other->vendor != gpu->vendor || !gpu->at_least_as_good_as(*other, row.gpus)) continue;
      const double gen_ratio = mean_gen_tokens(points) / row.gen_tokens;
      if (gen_ratio > kOutputLengthRatio || gen_ratio < 1 / kOutputLengthRatio) continue;
      const double other_s = interpolated_s_per_token(points, row.batch);
      if (other_s > 0 && s_per_token > kNotGpuBoundMargin * other_s) {
        out.push_back(
            {s, fmt::format("slower than the same work on a GPU it is at least as good as on every figure, so "
                            "not GPU-bound ({} x{:.2f} of {} at batch {:.0f})",
                            row.gpu, s_per_token / other_s, other_id, row.batch)});
        break;
      }
    }
  }
  return out;
}

}  // namespace llmco2::calibration
