// evidence/intervals.cc - conformal intervals per evidence label from held-out residuals.
#include "evidence/intervals.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/paths.h"

namespace llmco2::evidence {
namespace {

struct Weighted {
  double ratio, weight;
};

// The smallest ratio whose cumulative weight reaches q (weights summing to 1).
double weighted_quantile(const std::vector<Weighted>& sorted, double q) {
  double cumulative = 0;
  for (const Weighted& w : sorted) {
    cumulative += w.weight;
    if (cumulative >= q - 1e-12) return w.ratio;
  }
  return sorted.back().ratio;
}

RatioInterval interval_of(const std::vector<const HeldOutResidual*>& residuals, double level) {
  std::map<std::string, size_t> per_source;
  for (const HeldOutResidual* r : residuals) ++per_source[r->source];
  std::vector<Weighted> sorted;
  for (const HeldOutResidual* r : residuals)
    sorted.push_back(
        {r->ratio, 1.0 / (static_cast<double>(per_source.size()) * static_cast<double>(per_source[r->source]))});
  std::sort(sorted.begin(), sorted.end(), [](const Weighted& a, const Weighted& b) { return a.ratio < b.ratio; });
  RatioInterval out;
  out.n = residuals.size();
  out.sources = per_source.size();
  out.lower = weighted_quantile(sorted, (1 - level) / 2);
  out.upper = weighted_quantile(sorted, (1 + level) / 2);
  out.median = weighted_quantile(sorted, 0.5);
  return out;
}

bool enough(const std::vector<const HeldOutResidual*>& residuals) {
  std::set<std::string> sources;
  for (const HeldOutResidual* r : residuals) sources.insert(r->source);
  return residuals.size() >= kMinResiduals && sources.size() >= 2;
}

Json interval_json(const RatioInterval& i) {
  Json j = {{"n", i.n}, {"sources", i.sources}, {"lower", i.lower}, {"upper", i.upper}, {"median", i.median}};
  if (!i.pooled_with.empty()) j["pooled_with"] = i.pooled_with;
  return j;
}

LabelIntervals labels_from(const JsonReader& parent, std::string_view key) {
  LabelIntervals out;
  const Json& object = parent.at(key);
  if (!object.is_object()) fail("{}: key '{}' must be an object of labels", parent.source(), key);
  for (const auto& [name, value] : object.items()) {
    const std::string where = fmt::format("{}: {}.{}", parent.source(), key, name);
    const auto label = parse_label(name);
    if (!label) fail("{}: not a label (calibrated, interpolated or extrapolated)", where);
    const JsonReader r(value, where);
    RatioInterval i;
    i.n = static_cast<size_t>(r.positive_number("n"));
    i.sources = static_cast<size_t>(r.positive_number("sources"));
    i.lower = r.positive_number("lower");
    i.upper = r.positive_number("upper");
    i.median = r.positive_number("median");
    i.pooled_with = r.optional_string("pooled_with").value_or("");
    if (!(i.lower <= i.median && i.median <= i.upper))
      fail("{}: expected lower <= median <= upper, got {}, {}, {}", where, i.lower, i.median, i.upper);
    out[*label] = i;
  }
  return out;
}

Json coverages_json(const RegimeCoverages& coverages) {
  Json out = Json::array();
  for (const auto& [cell, c] : coverages)
    out.push_back({{"label", std::string(label_name(cell.first))},
                   {"batch_band", cell.second.batch},
                   {"context_band", cell.second.context},
                   {"regime", regime_name(cell.second)},
                   {"n", c.n},
                   {"sources", c.sources},
                   {"covered", c.covered}});
  return out;
}

// "<quantity>_coverage": [{label, batch_band, context_band, n, sources, covered}], optional.
RegimeCoverages coverages_from(const JsonReader& parent, const std::string& key) {
  RegimeCoverages out;
  if (!parent.has(key)) return out;
  const Json& array = parent.at(key);
  if (!array.is_array()) fail("{}: key '{}' must be an array of regimes", parent.source(), key);
  for (size_t k = 0; k < array.size(); ++k) {
    const std::string where = fmt::format("{}: {}[{}]", parent.source(), key, k);
    const JsonReader r(array[k], where);
    const auto label = parse_label(r.string("label"));
    if (!label) fail("{}: key 'label' is not calibrated, interpolated or extrapolated", where);
    auto band = [&](const char* name) {
      const double b = r.number(name);
      if (!(b >= 0 && b < kRegimeBands && b == std::floor(b)))
        fail("{}: key '{}' = {} must be a band from 0 to {}", where, name, b, kRegimeBands - 1);
      return static_cast<int>(b);
    };
    RegimeCoverage c;
    c.n = static_cast<size_t>(r.positive_number("n"));
    c.sources = static_cast<size_t>(r.positive_number("sources"));
    c.covered = r.number("covered");
    if (!(c.covered >= 0 && c.covered <= 1)) fail("{}: key 'covered' = {} must be a share in [0, 1]", where, c.covered);
    out[{*label, Regime{band("batch_band"), band("context_band")}}] = c;
  }
  return out;
}

}  // namespace

Regime regime_of(const EvidenceKey& key) {
  return {std::min(key.batch_band, kRegimeBands - 1), std::min(key.context_band, kRegimeBands - 1)};
}

std::string regime_name(const Regime& regime) {
  static constexpr const char* kBatch[] = {"batch 1-3", "batch 4-15", "batch 16+"};
  static constexpr const char* kContext[] = {"context <1k", "context 1k-4k", "context 4k+"};
  return fmt::format("{}, {}", kBatch[std::clamp(regime.batch, 0, kRegimeBands - 1)],
                     kContext[std::clamp(regime.context, 0, kRegimeBands - 1)]);
}

std::string coverage_sentence(const RegimeCoverage& c, const Regime& regime) {
  return fmt::format("held out, it covered {:.0f}% of {} rows ({} sources) in this regime ({})", 100 * c.covered, c.n,
                     c.sources, regime_name(regime));
}

LabelIntervals fit_label_intervals(const std::vector<HeldOutResidual>& residuals, double level) {
  std::map<EvidenceLabel, std::vector<const HeldOutResidual*>> by_label;
  for (const HeldOutResidual& r : residuals)
    if (r.ratio > 0 && std::isfinite(r.ratio)) by_label[r.label].push_back(&r);
  constexpr int kLabels = static_cast<int>(std::size(kEvidenceLabels));
  LabelIntervals out;
  for (int i = 0; i < kLabels; ++i) {
    std::vector<const HeldOutResidual*> pool = by_label[kEvidenceLabels[i]];
    std::string pooled;
    auto pool_with = [&](int j) {
      const auto& more = by_label[kEvidenceLabels[j]];
      if (more.empty()) return;
      pool.insert(pool.end(), more.begin(), more.end());
      pooled += (pooled.empty() ? "" : ", ") + std::string(label_name(kEvidenceLabels[j]));
    };
    for (int j = i + 1; j < kLabels && !enough(pool); ++j) pool_with(j);
    for (int j = i - 1; j >= 0 && !enough(pool); --j) pool_with(j);
    if (pool.empty()) continue;
    RatioInterval interval = interval_of(pool, level);
    interval.pooled_with = pooled;
    out[kEvidenceLabels[i]] = interval;
  }
  const RatioInterval* better = nullptr;  // nesting: each label holds the better evidenced one's interval
  for (EvidenceLabel label : kEvidenceLabels) {
    auto it = out.find(label);
    if (it == out.end()) continue;
    if (better) {
      it->second.lower = std::min(it->second.lower, better->lower);
      it->second.upper = std::max(it->second.upper, better->upper);
    }
    better = &it->second;
  }
  return out;
}

bool covers(const RatioInterval& interval, double ratio) { return ratio >= interval.lower && ratio <= interval.upper; }

EvidenceIntervals read_evidence_intervals(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  return with_json_errors(path.string(), [&] {
    const JsonReader r(json, path.string());
    EvidenceIntervals out;
    out.level = r.positive_number("level");
    if (out.level >= 1) fail("{}: key 'level' = {} must be below 1", path.string(), out.level);
    out.basis = r.string("basis");
    out.energy = labels_from(r, "energy");
    out.latency = labels_from(r, "latency");
    out.energy_coverage = coverages_from(r, "energy_coverage");
    out.latency_coverage = coverages_from(r, "latency_coverage");
    return out;
  });
}

void write_evidence_intervals(const std::filesystem::path& path, const EvidenceIntervals& intervals) {
  Json j = {{"level", intervals.level}, {"basis", intervals.basis}};
  for (const auto& [key, labels] : {std::pair{"energy", &intervals.energy}, std::pair{"latency", &intervals.latency}}) {
    Json object = Json::object();
    for (const auto& [label, interval] : *labels) object[std::string(label_name(label))] = interval_json(interval);
    j[key] = object;
  }
  j["energy_coverage"] = coverages_json(intervals.energy_coverage);
  j["latency_coverage"] = coverages_json(intervals.latency_coverage);
  write_file_atomic(path, j.dump(2) + "\n");
}

std::filesystem::path default_evidence_intervals_path() { return data_dir() / "evidence" / "intervals.json"; }

std::string interval_sentence(const RatioInterval& i, double level, EvidenceLabel label) {
  return fmt::format(
      "{:.0f}% interval x{:.2f}-x{:.2f} of the prediction, from {} held-out rows of {} sources labelled {}{}; they "
      "measured {:.2f}x the prediction in the median",
      100 * level, i.lower, i.upper, i.n, i.sources, label_name(label),
      i.pooled_with.empty() ? "" : " (pooled with " + i.pooled_with + ")", i.median);
}

}  // namespace llmco2::evidence
