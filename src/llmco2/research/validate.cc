// research/validate.cc - `llmco2 validate`: the default predictor (the calibrated simulator) and its baselines scored
// on every imported public source, leave one source out and leave one GPU type out; the evidence label of every
// held-out row as the held-out study saw it; conformal intervals per label with their held-out coverage; and how well
// each predictor ranks the setups that answer the same request. Writes docs/accuracy.md, its plots and rows, and the
// data the interfaces read (data/evidence/index.csv, data/evidence/intervals.json).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "calibration/calibration.h"
#include "core/accuracy.h"
#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/output_manifest.h"
#include "core/paths.h"
#include "core/plot.h"
#include "core/progress.h"
#include "core/statistics.h"
#include "evidence/evidence.h"
#include "evidence/intervals.h"
#include "llmco2/research.h"
#include "predictor/predictor.h"
#include "research/held_out.h"
#include "research/module.h"
#include "research/validation_baselines.h"

namespace llmco2::research {
namespace {

using evidence::Evidence;
using evidence::EvidenceIndex;
using evidence::EvidenceKey;
using evidence::EvidenceLabel;
using evidence::HeldOutResidual;
using evidence::LabelIntervals;
using evidence::RatioInterval;

// Which rows a held-out prediction was made without: its source, its GPU type, or a fifth of all rows (its fold).
enum class Split { source, gpu, rows };
constexpr Split kSplits[] = {Split::source, Split::gpu, Split::rows};
constexpr const char* split_name(Split s) { return s == Split::source ? "source" : s == Split::gpu ? "gpu" : "rows"; }
inline constexpr size_t kFolds = 5;

// A row's fold: FNV-1a of where it comes from, so that it stays the same from run to run and machine to machine.
size_t fold_of(const DatasetRow& row) {
  uint64_t h = 1469598103934665603ull;
  for (char ch : row.source + "/" + row.source_ref) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return static_cast<size_t>(h % kFolds);
}

// A measured row predicted by parameters fitted without its source (or its GPU type), with its evidence then.
struct Instance {
  size_t sample = 0;
  Split split = Split::source;
  Evidence evidence;
  SimEstimate predicted;
};

// Everything the report is made of.
struct Study {
  const CalibrationSet* set = nullptr;
  std::vector<EvidenceKey> keys;                        // per sample
  EvidenceIndex index;                                  // every simulatable row
  std::vector<SimEstimate> by_source, by_gpu, by_rows;  // held-out predictions per sample
  std::vector<Instance> instances;                      // three per sample
  std::vector<BaselineEstimates> baselines;             // per baseline, per sample (held out by source)
  evidence::EvidenceIntervals intervals;                // fitted on every instance (shipped)
  std::vector<bool> energy_covered, latency_covered;    // per instance, by intervals fitted without its source
  std::vector<std::optional<evidence::RatioInterval>> energy_interval, latency_interval;  // per instance, ditto
};

const DatasetRow& row_of(const Study& s, size_t sample) { return s.set->rows[s.set->samples[sample].row]; }

std::optional<double> measured(const CalibrationSample& sample, Quantity q) {
  return q == Quantity::energy ? sample.energy_j : sample.latency_s;
}
double value(const SimEstimate& e, Quantity q) { return q == Quantity::energy ? e.energy_j : e.latency_s; }

// The measured / predicted ratio of an instance, when both are positive.
std::optional<double> ratio(const Study& s, const Instance& i, Quantity q) {
  const auto m = measured(s.set->samples[i.sample], q);
  const double p = value(i.predicted, q);
  if (!m || !(*m > 0) || !(p > 0)) return std::nullopt;
  return *m / p;
}

std::vector<EvidenceKey> sample_keys(const CalibrationSet& set) {
  CatalogCache catalogs;
  std::vector<EvidenceKey> keys;
  for (const CalibrationSample& sample : set.samples) {
    const DatasetRow& row = set.rows[sample.row];
    const SimConfig config = config_for_row(row, catalogs);
    keys.push_back(evidence::evidence_key(*config.gpu, config.request.engine, config.request.precision,
                                          config.model->family, row.batch, row.prompt_tokens + row.gen_tokens));
  }
  return keys;
}

void label_instances(Study& s) {
  std::vector<EvidenceIndex> without_fold(kFolds);
  for (size_t k = 0; k < s.keys.size(); ++k) {
    s.index.add(row_of(s, k).source, s.keys[k]);
    for (size_t f = 0; f < kFolds; ++f)
      if (f != fold_of(row_of(s, k))) without_fold[f].add(row_of(s, k).source, s.keys[k]);
  }
  for (size_t k = 0; k < s.keys.size(); ++k) {
    const std::string& source = row_of(s, k).source;
    const std::string& gpu = s.keys[k].gpu;
    s.instances.push_back(
        {k, Split::source,
         s.index.assess(s.keys[k], [&](const evidence::EvidenceEntry& e) { return e.source == source; }),
         s.by_source[k]});
    s.instances.push_back(
        {k, Split::gpu, s.index.assess(s.keys[k], [&](const evidence::EvidenceEntry& e) { return e.key.gpu == gpu; }),
         s.by_gpu[k]});
    s.instances.push_back({k, Split::rows, without_fold[fold_of(row_of(s, k))].assess(s.keys[k]), s.by_rows[k]});
  }
}

evidence::Regime regime_of(const Study& s, const Instance& i) { return evidence::regime_of(s.keys[i.sample]); }

// The residuals of every instance (optionally leaving out one source's), for one quantity.
std::vector<HeldOutResidual> residuals(const Study& s, Quantity q, const std::string& without_source = "") {
  std::vector<HeldOutResidual> out;
  for (const Instance& i : s.instances) {
    const std::string& source = row_of(s, i.sample).source;
    if (source == without_source) continue;
    if (const auto r = ratio(s, i, q)) out.push_back({i.evidence.label, source, *r});
  }
  return out;
}

// Cross-conformal by source: each source's instances judged by intervals fitted on the other sources' residuals.
void cross_conformal(Study& s, double level) {
  s.energy_covered.assign(s.instances.size(), false);
  s.latency_covered.assign(s.instances.size(), false);
  s.energy_interval.assign(s.instances.size(), std::nullopt);
  s.latency_interval.assign(s.instances.size(), std::nullopt);
  for (const std::string& source : s.set->sources()) {
    const LabelIntervals energy = evidence::fit_label_intervals(residuals(s, Quantity::energy, source), level);
    const LabelIntervals latency = evidence::fit_label_intervals(residuals(s, Quantity::latency, source), level);
    for (size_t k = 0; k < s.instances.size(); ++k) {
      const Instance& i = s.instances[k];
      if (row_of(s, i.sample).source != source) continue;
      if (auto it = energy.find(i.evidence.label); it != energy.end()) {
        s.energy_interval[k] = it->second;
        if (const auto r = ratio(s, i, Quantity::energy)) s.energy_covered[k] = evidence::covers(it->second, *r);
      }
      if (auto it = latency.find(i.evidence.label); it != latency.end()) {
        s.latency_interval[k] = it->second;
        if (const auto r = ratio(s, i, Quantity::latency)) s.latency_covered[k] = evidence::covers(it->second, *r);
      }
    }
  }
}

// ---- accuracy tables ----

struct Score {
  Accuracy accuracy;
  double median_ratio = 1;  // measured / predicted
  size_t covered = 0, judged = 0;
};

Score score(const Study& s, const std::vector<size_t>& instances, Quantity q) {
  AccuracyCounter counter;
  std::vector<double> ratios;
  Score out;
  const auto& covered = q == Quantity::energy ? s.energy_covered : s.latency_covered;
  const auto& interval = q == Quantity::energy ? s.energy_interval : s.latency_interval;
  for (size_t k : instances) {
    const auto r = ratio(s, s.instances[k], q);
    if (!r) continue;
    counter.add(value(s.instances[k].predicted, q), *measured(s.set->samples[s.instances[k].sample], q));
    ratios.push_back(*r);
    if (interval[k]) {
      ++out.judged;
      out.covered += covered[k] ? 1 : 0;
    }
  }
  out.accuracy = counter.result();
  if (!ratios.empty()) out.median_ratio = percentile(ratios, 0.5);
  return out;
}

Accuracy baseline_accuracy(const Study& s, const BaselineEstimates& b, const std::vector<size_t>& samples, Quantity q) {
  AccuracyCounter counter;
  for (size_t k : samples) {
    const auto m = measured(s.set->samples[k], q);
    const auto p = q == Quantity::energy ? b.energy_j[k] : b.latency_s[k];
    if (m && *m > 0 && p && *p > 0) counter.add(*p, *m);
  }
  return counter.result();
}

std::string coverage_cell(const Score& sc) {
  return sc.judged ? percent(static_cast<double>(sc.covered) / static_cast<double>(sc.judged)) : "-";
}

// Instances of `split` grouped by `group_of` (their source, or their GPU), in first-seen order.
std::vector<std::pair<std::string, std::vector<size_t>>> grouped(
    const Study& s, Split split, const std::function<std::string(const Instance&)>& group_of) {
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  for (size_t k = 0; k < s.instances.size(); ++k) {
    if (s.instances[k].split != split) continue;
    const std::string g = group_of(s.instances[k]);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == g; });
    if (it == out.end()) it = out.insert(out.end(), {g, {}});
    it->second.push_back(k);
  }
  return out;
}

std::vector<size_t> samples_of(const Study& s, const std::vector<size_t>& instances) {
  std::vector<size_t> out;
  for (size_t k : instances) out.push_back(s.instances[k].sample);
  return out;
}

std::string accuracy_table(const Study& s, Split split, Quantity q) {
  const bool by_source = split != Split::gpu, baselines = split == Split::source;
  std::string head = fmt::format("| {} | rows | MAPE | median measured/predicted | EBA(10%) | EBA(30%) | 80% coverage",
                                 by_source ? "source" : "GPU");
  std::string rule = "|---|---:|---:|---:|---:|---:|---:";
  if (baselines)
    for (const BaselineEstimates& b : s.baselines) {
      head += fmt::format(" | {} MAPE | {} EBA(30%)", b.name, b.name);
      rule += "|---:|---:";
    }
  std::string out = head + " |\n" + rule + "|\n";
  auto groups = grouped(
      s, split, [&](const Instance& i) { return by_source ? row_of(s, i.sample).source : s.keys[i.sample].gpu; });
  std::vector<size_t> all;
  for (const auto& group : groups) all.insert(all.end(), group.second.begin(), group.second.end());
  groups.push_back({"all rows", all});
  for (const auto& [name, members] : groups) {
    const Score sc = score(s, members, q);
    if (sc.accuracy.n == 0) continue;
    out += fmt::format("| {} | {} | {} | {:.2f} | {} | {} | {}", name, sc.accuracy.n, percent(sc.accuracy.mape),
                       sc.median_ratio, percent(sc.accuracy.eba10), percent(sc.accuracy.eba30), coverage_cell(sc));
    if (baselines)
      for (const BaselineEstimates& b : s.baselines) {
        const Accuracy a = baseline_accuracy(s, b, samples_of(s, members), q);
        out += a.n ? fmt::format(" | {} | {}", percent(a.mape), percent(a.eba30)) : " | - | -";
      }
    out += " |\n";
  }
  return out;
}

// ---- intervals by label and regime ----

// One row of the coverage table: the instances of a group with a ratio, judged by their cross-conformal intervals.
std::string coverage_row(const Study& s, Quantity q, const std::string& group, const std::vector<size_t>& members,
                         const RatioInterval* shipped, const std::string& shipped_note) {
  const Score sc = score(s, members, q);
  // Coverage per source, then its mean: a source with many rows does not decide it alone.
  std::map<std::string, std::pair<size_t, size_t>> per_source;
  std::vector<double> widths;
  const auto& covered = q == Quantity::energy ? s.energy_covered : s.latency_covered;
  const auto& interval = q == Quantity::energy ? s.energy_interval : s.latency_interval;
  for (size_t k : members)
    if (interval[k]) {
      auto& [c, n] = per_source[row_of(s, s.instances[k].sample).source];
      c += covered[k] ? 1 : 0;
      ++n;
      widths.push_back(interval[k]->upper / interval[k]->lower);
    }
  double mean = 0;
  for (const auto& [source, cn] : per_source) mean += static_cast<double>(cn.first) / static_cast<double>(cn.second);
  mean = per_source.empty() ? 0 : mean / static_cast<double>(per_source.size());
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", q == Quantity::energy ? "energy" : "latency",
                     group, members.size(), shipped ? fmt::format("{}", shipped->sources) : "-",
                     shipped ? fmt::format("x{:.2f} - x{:.2f}{}", shipped->lower, shipped->upper, shipped_note) : "-",
                     shipped ? fmt::format("{:.2f}", shipped->median) : "-", coverage_cell(sc),
                     per_source.empty() ? "-" : percent(mean),
                     widths.empty() ? "-" : fmt::format("x{:.2f}", percentile(widths, 0.5)));
}

std::string coverage_header(const char* group) {
  return fmt::format(
      "| quantity | {} | held-out rows | sources | interval (x measured/predicted) | median measured/predicted | "
      "coverage, cross-conformal by source | coverage, mean over sources | median width |\n"
      "|---|---|---:|---:|---|---:|---:|---:|---:|\n",
      group);
}

// Per label: every instance of the label, judged by its label's interval fitted without its source.
std::string interval_table(const Study& s) {
  std::string out = coverage_header("label");
  for (Quantity q : {Quantity::energy, Quantity::latency}) {
    const LabelIntervals& shipped = q == Quantity::energy ? s.intervals.energy : s.intervals.latency;
    for (EvidenceLabel label : evidence::kEvidenceLabels) {
      std::vector<size_t> members;
      for (size_t k = 0; k < s.instances.size(); ++k)
        if (s.instances[k].evidence.label == label && ratio(s, s.instances[k], q)) members.push_back(k);
      const auto it = shipped.find(label);
      if (members.empty() && it == shipped.end()) continue;
      const RatioInterval* interval = it == shipped.end() ? nullptr : &it->second;
      out += coverage_row(
          s, q, std::string(evidence::label_name(label)), members, interval,
          interval && !interval->pooled_with.empty() ? " (pooled with " + interval->pooled_with + ")" : "");
    }
  }
  return out;
}

// The instances with a ratio of each label and regime.
std::map<std::pair<EvidenceLabel, evidence::Regime>, std::vector<size_t>> regime_groups(const Study& s, Quantity q) {
  std::map<std::pair<EvidenceLabel, evidence::Regime>, std::vector<size_t>> groups;
  for (size_t k = 0; k < s.instances.size(); ++k)
    if (ratio(s, s.instances[k], q)) groups[{s.instances[k].evidence.label, regime_of(s, s.instances[k])}].push_back(k);
  return groups;
}

// How the labels' intervals covered the held-out rows of each regime (cross-conformal), shipped to be said beside
// each answer of that kind.
evidence::RegimeCoverages regime_coverages(const Study& s, Quantity q) {
  evidence::RegimeCoverages out;
  const auto& interval = q == Quantity::energy ? s.energy_interval : s.latency_interval;
  for (const auto& [cell, members] : regime_groups(s, q)) {
    const Score sc = score(s, members, q);
    if (sc.judged == 0) continue;
    std::set<std::string> sources;
    for (size_t k : members)
      if (interval[k]) sources.insert(row_of(s, s.instances[k].sample).source);
    out[cell] = {sc.judged, sources.size(), static_cast<double>(sc.covered) / static_cast<double>(sc.judged)};
  }
  return out;
}

// Per label and regime: the same intervals (the label's), their coverage in each regime.
std::string regime_table(const Study& s) {
  std::string out = coverage_header("label, regime");
  for (Quantity q : {Quantity::energy, Quantity::latency}) {
    const LabelIntervals& shipped = q == Quantity::energy ? s.intervals.energy : s.intervals.latency;
    for (const auto& [cell, members] : regime_groups(s, q)) {
      const auto it = shipped.find(cell.first);
      out += coverage_row(s, q,
                          fmt::format("{}, {}", evidence::label_name(cell.first), evidence::regime_name(cell.second)),
                          members, it == shipped.end() ? nullptr : &it->second, "");
    }
  }
  return out;
}

std::string label_mix_table(const Study& s) {
  std::string out =
      "| source | held out | calibrated | interpolated | extrapolated | nearest sources (first row) |\n"
      "|---|---|---:|---:|---:|---|\n";
  for (Split split : kSplits)
    for (const auto& [name, members] :
         grouped(s, split, [&](const Instance& i) { return row_of(s, i.sample).source; })) {
      std::map<EvidenceLabel, size_t> count;
      for (size_t k : members) ++count[s.instances[k].evidence.label];
      std::string nearest;
      for (const auto& n : s.instances[members.front()].evidence.nearest)
        nearest += (nearest.empty() ? "" : "; ") + n.source;
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", name,
                         split == Split::rows ? "a fifth of all rows" : std::string("its ") + split_name(split),
                         count[EvidenceLabel::calibrated], count[EvidenceLabel::interpolated],
                         count[EvidenceLabel::extrapolated], nearest.empty() ? "none" : nearest);
    }
  return out;
}

}  // namespace

namespace {

std::string plot_script(const Study& s, Quantity q) {
  std::map<std::string, std::string> rows;
  for (const Instance& i : s.instances) {
    if (i.split != Split::source) continue;
    const auto m = measured(s.set->samples[i.sample], q);
    const double p = value(i.predicted, q);
    if (m && *m > 0 && p > 0) rows[row_of(s, i.sample).source] += fmt::format("{:.6g} {:.6g}\n", *m, p);
  }
  std::string script, plot;
  int n = 0;
  for (const auto& [source, data] : rows) {
    script += gnuplot_datablock(fmt::format("s{}", n), data);
    plot += fmt::format("{}$s{} using 1:2 with points pt 7 ps 0.5 title \"{}\"", plot.empty() ? "" : ", ", n,
                        gnuplot_text(source));
    ++n;
  }
  const char* unit = q == Quantity::energy ? "energy (J)" : "latency (s)";
  return script + fmt::format(
                      "set logscale xy\nset key left top\nset grid\nset xlabel \"measured {}\"\nset ylabel \"predicted "
                      "{}, source held out\"\nset title \"llmco2 validate: predicted against measured {}\"\nplot {}, x "
                      "with lines lc rgb \"black\" title \"y = x\"\n",
                      unit, unit, unit, plot);
}

// "1" or "0" where the instance has a measurement and an interval to judge it by, else "".
std::string covered_cell(const Study& s, size_t k, Quantity q) {
  const bool judged =
      ratio(s, s.instances[k], q) && (q == Quantity::energy ? s.energy_interval[k] : s.latency_interval[k]).has_value();
  if (!judged) return "";
  return (q == Quantity::energy ? s.energy_covered[k] : s.latency_covered[k]) ? "1" : "0";
}

void write_rows_csv(const Study& s, const std::filesystem::path& path) {
  std::string out;
  append_csv_record(out, {"source", "source_ref", "model", "gpu", "engine", "held_out", "label", "regime",
                          "energy_measured_j", "energy_predicted_j", "energy_covered", "latency_measured_s",
                          "latency_predicted_s", "latency_covered", "nearest_sources"});
  auto number = [](std::optional<double> v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
  for (size_t k = 0; k < s.instances.size(); ++k) {
    const Instance& i = s.instances[k];
    const DatasetRow& row = row_of(s, i.sample);
    const CalibrationSample& sample = s.set->samples[i.sample];
    std::string nearest;
    for (const auto& n : i.evidence.nearest) nearest += (nearest.empty() ? "" : "; ") + n.source;
    append_csv_record(out,
                      {row.source, row.source_ref, row.model, row.gpu, row.engine, split_name(i.split),
                       std::string(evidence::label_name(i.evidence.label)), evidence::regime_name(regime_of(s, i)),
                       number(sample.energy_j), fmt::format("{:.6g}", i.predicted.energy_j),
                       covered_cell(s, k, Quantity::energy), number(sample.latency_s),
                       fmt::format("{:.6g}", i.predicted.latency_s), covered_cell(s, k, Quantity::latency), nearest});
  }
  write_file_atomic(path, out);
}

std::string report_markdown(const Study& s, const ValidateOptions& o, double seconds) {
  std::string baselines;
  for (const BaselineEstimates& b : s.baselines) baselines += fmt::format("- `{}`: {}\n", b.name, b.description);
  std::string md = fmt::format(
      "# Accuracy on real measurements\n\nWritten by `llmco2 validate` in {:.0f} s on {} threads; do not edit by hand. "
      "Every figure is on **measured** rows (the public sources imported into data/measured, docs/data.md), never on "
      "simulated ones, and every prediction is **held out**: made with simulator parameters fitted without the row's "
      "source (leave one source out) or without any row of its GPU type (leave one GPU out). The default predictor is "
      "the calibrated simulator (docs/simulator.md); the learned predictors of the paper's protocol are scored in "
      "docs/predictor-accuracy.md (`llmco2 eval`).\n\nRows: {} simulatable of {} ({} sources). MAPE = mean |predicted "
      "- "
      "measured| / measured; EBA(d) = share within +-d; coverage = share of rows inside their 80% interval, the "
      "interval fitted without the row's source (below).\n\nBaselines on the same rows, each fitted without the "
      "held-out source:\n{}\n",
      seconds, o.threads, s.set->samples.size(), s.set->rows.size(), s.set->sources().size(), baselines);
  md += "## Energy, leave one source out\n\n" + accuracy_table(s, Split::source, Quantity::energy) + "\n";
  md += "## Latency, leave one source out\n\n" + accuracy_table(s, Split::source, Quantity::latency) + "\n";
  md += "## Energy, leave one GPU type out\n\n" + accuracy_table(s, Split::gpu, Quantity::energy) + "\n";
  md += "## Latency, leave one GPU type out\n\n" + accuracy_table(s, Split::gpu, Quantity::latency) + "\n";
  md += fmt::format(
      "## Rows held out within their sources\n\nParameters fitted without a fifth of all rows (five folds, a row's "
      "fold fixed by where it comes from), scored on that fifth: how close the simulator comes where measured rows "
      "of the same setup surround a request (the `calibrated` label arises only here).\n\n### Energy\n\n{}\n### "
      "Latency\n\n{}\n",
      accuracy_table(s, Split::rows, Quantity::energy), accuracy_table(s, Split::rows, Quantity::latency));
  md += fmt::format(
      "## Intervals by evidence\n\nEach held-out row is labelled as a request would be (src/llmco2/evidence, "
      "docs/accuracy.md#evidence): against the measured rows left after its source (or its GPU type) is taken out. "
      "`calibrated`: rows of the same GPU, engine, precision path and regime (batch and context bands a factor 4 "
      "wide); `interpolated`: the same GPU generation, engine and precision path within one band; `extrapolated`: "
      "nothing that close. The {0:.0f}% interval of a label is the {1:.0f}th to {2:.0f}th percentile of measured / "
      "predicted among its held-out rows, each source weighted equally (split conformal per label), nested so that a "
      "less evidenced label's interval holds the better one's; a label with fewer than {3} rows or two sources pools "
      "with the next. Coverage is judged honestly: each source's rows against intervals fitted without that source "
      "(cross-conformal by source). These intervals are what `predict`, `compare`, `trace`, `serve-sim`, the server "
      "and Python print (data/evidence/intervals.json), with the median as the bias of the request's kind.\n\n",
      100 * s.intervals.level, 50 * (1 - s.intervals.level), 50 * (1 + s.intervals.level), evidence::kMinResiduals);
  md += interval_table(s) +
        "\nThe same intervals by regime: a request's batch (1-3, 4-15, 16 and more requests at once) and context "
        "(below 1k, 1k-4k, 4k tokens and more). Intervals fitted per label and regime covered new sources worse than "
        "these (each regime rests on two to four sources; docs/carbon.md, \"Intervals\"), so the label's interval "
        "stands, and each answer states the coverage its regime had here (`evidence.regime_coverage`):\n\n" +
        regime_table(s) + "\n### How each source's rows were labelled\n\n" + label_mix_table(s) + "\n";
  md += ranking_markdown(*s.set, s.by_source, s.baselines);
  const std::string plots = std::filesystem::path(o.report).stem().string();
  md += fmt::format(
      "\n## Plots\n\nHeld-out predictions (leave one source out) against the measurements, one colour per "
      "source.\n\n![energy]({0}/energy.png)\n\n![latency]({0}/latency.png)\n\n`llmco2 validate --rows-out F.csv` "
      "writes every held-out prediction with its label and whether its interval covered it.\n",
      plots);
  return md;
}

}  // namespace

ValidateSummary validate(const ValidateOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  // The predictors asked for, loaded first: a bad name or file fails before minutes of fits.
  std::vector<AskedPredictor> asked;
  for (const std::string& name : o.predictors)
    if (name != "sim") asked.push_back(asked_predictor(name));  // the simulator is scored held out anyway
  if (!o.model_file.empty()) asked.push_back(asked_predictor("sim", o.model_file));
  DatasetReadResult read = read_dataset_folder(measured_dir(o.data_dir));
  const CalibrationSet set = prepare_calibration(std::move(read.rows));
  if (set.samples.empty()) fail("{}: no measured row the simulator can label", measured_dir(o.data_dir).string());
  ValidateOptions options = o;
  options.threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  std::cerr << fmt::format("validate: {} rows, {} simulatable, {} sources\n", set.rows.size(), set.samples.size(),
                           set.sources().size());
  Study s;
  s.set = &set;
  FitOptions fit;
  fit.max_evaluations = o.max_evaluations;
  s.by_source.resize(set.samples.size());
  s.by_gpu.resize(set.samples.size());
  leave_one_group_out(
      set, fit, options.threads, [&](size_t k) { return set.rows[set.samples[k].row].source; }, s.by_source,
      "validate");
  leave_one_group_out(
      set, fit, options.threads, [&](size_t k) { return set.rows[set.samples[k].row].gpu; }, s.by_gpu, "validate");
  s.by_rows.resize(set.samples.size());
  leave_one_group_out(
      set, fit, options.threads,
      [&](size_t k) { return fmt::format("fold {}", fold_of(set.rows[set.samples[k].row])); }, s.by_rows, "validate");
  check_interrupt();
  s.keys = sample_keys(set);
  label_instances(s);
  s.baselines = held_out_baselines(set);
  for (const AskedPredictor& p : asked) s.baselines.push_back(predictor_estimates(set, p));
  s.intervals.level = o.level;
  s.intervals.energy = evidence::fit_label_intervals(residuals(s, Quantity::energy), o.level);
  s.intervals.latency = evidence::fit_label_intervals(residuals(s, Quantity::latency), o.level);
  s.intervals.basis = fmt::format(
      "llmco2 validate: {} held-out predictions (leave one source out, leave one GPU type out, five folds of rows) of "
      "{} "
      "measured rows from {} public sources",
      s.instances.size(), set.samples.size(), set.sources().size());
  cross_conformal(s, o.level);
  s.intervals.energy_coverage = regime_coverages(s, Quantity::energy);
  s.intervals.latency_coverage = regime_coverages(s, Quantity::latency);

  ValidateSummary summary;
  const std::filesystem::path md = o.report, dir = md.parent_path() / md.stem();
  std::filesystem::create_directories(dir);
  RunManifest manifest(manifest_in_folder(dir));
  for (Quantity q : {Quantity::energy, Quantity::latency}) {
    const std::string warning =
        plot_to_file(plot_script(s, q), dir / (q == Quantity::energy ? "energy.png" : "latency.png"));
    if (!warning.empty()) summary.warnings.push_back(warning);
  }
  if (!o.rows_out.empty()) write_rows_csv(s, o.rows_out);
  const std::filesystem::path index_path =
      o.index_out.empty() ? evidence::default_evidence_index_path() : std::filesystem::path(o.index_out);
  const std::filesystem::path intervals_path =
      o.intervals_out.empty() ? evidence::default_evidence_intervals_path() : std::filesystem::path(o.intervals_out);
  for (const auto& path : {index_path, intervals_path})
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  evidence::write_evidence_index(index_path, s.index);
  evidence::write_evidence_intervals(intervals_path, s.intervals);
  write_file_atomic(md, report_markdown(s, options, seconds_since(start)));
  manifest.commit();
  summary.report_written = md.string();
  summary.index_written = index_path.string();
  summary.intervals_written = intervals_path.string();
  summary.rows = static_cast<long>(set.samples.size());
  summary.seconds = seconds_since(start);
  return summary;
}

}  // namespace llmco2::research
