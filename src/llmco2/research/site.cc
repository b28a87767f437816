// research/site.cc - `llmco2 calibrate --site`: a site profile fitted on a deployment's own rows, written as
// site-NAME.json with a table of its corrections and the rows' error before and after.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

#include <fmt/format.h>

#include "calibration/site_fit.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "dataset/dataset_csv.h"
#include "llmco2/research.h"
#include "research/module.h"
#include "research/site.h"
#include "sim/site_profile.h"

namespace llmco2::research {
namespace {

// The rows of the files (a folder: its dataset CSVs); a row the format refuses stops the fit, naming file and line.
std::vector<DatasetRow> read_site_rows(const std::vector<std::string>& data) {
  if (data.empty()) fail("calibrate --site: no data (--data FILES: dataset CSVs of the site's own measurements)");
  std::vector<DatasetRow> rows;
  for (const std::string& entry : data) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(entry)) files = dataset_files(entry);
    else files.push_back(entry);
    for (const auto& file : files) {
      DatasetReadResult read = read_dataset(file);
      if (!read.rejects.empty()) fail("{}", read.rejects.front().message());
      for (auto& row : read.rows) rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string accuracy_cell(const Json& fit, const char* when, const char* quantity) {
  if (!fit.contains(when) || !fit[when].contains(quantity)) return "-";
  const Json& a = fit[when][quantity];
  return fmt::format("{:.1f}% (x{:.2f})", 100 * a["mape"].get<double>(), a["bias"].get<double>());
}

std::string site_table(const SiteProfile& site) {
  std::string out = fmt::format(
      "site {}: {} rows\n\n| target | correction | value | sd | from the rows | rows |\n"
      "|---|---|---:|---:|---:|---:|\n",
      site.name, site.rows);
  for (const SiteCorrection& c : site.corrections)
    out += fmt::format("| {} | {} | x{:.3f} | {:.1f}% | {:.0f}% | {} |\n", c.target, site_knob(c.knob).name, c.value,
                       100 * c.sd, 100 * c.data_share, c.rows);
  out += "\n| error on the site's rows | energy MAPE (bias) | latency MAPE (bias) |\n|---|---:|---:|\n";
  for (const char* when : {"before", "after"})
    out += fmt::format("| {} | {} | {} |\n", when, accuracy_cell(site.fit, when, "energy"),
                       accuracy_cell(site.fit, when, "latency"));
  for (const auto& note : site.global) out += "\n- " + note;
  return out + "\n";
}

// ---- The evidence in docs/calibration.md ----

struct Site {
  std::string source, gpu, engine;
  std::vector<size_t> samples;
};

std::vector<Site> sites_of(const CalibrationSet& set) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<size_t>> groups;
  for (size_t s = 0; s < set.samples.size(); ++s) {
    const CalibrationSample& sample = set.samples[s];
    groups[{set.rows[sample.row].source, sample.workload.gpu_id, sample.workload.engine}].push_back(s);
  }
  std::vector<Site> sites;
  for (auto& [key, samples] : groups)
    if (samples.size() >= kMinSiteRows)
      sites.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::move(samples)});
  return sites;
}

// The site's rows of its most measured model (the first by name among equals): a site benchmarks the model it serves,
// as plan-site --model asks.
std::vector<size_t> rows_of_main_model(const CalibrationSet& set, const Site& site) {
  std::map<std::string, size_t> count;
  for (size_t s : site.samples) ++count[set.rows[set.samples[s].row].model];
  const auto main =
      std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<size_t> out;
  for (size_t s : site.samples)
    if (set.rows[set.samples[s].row].model == main->first) out.push_back(s);
  return out;
}

std::string mape_cell(const CalibrationSet& set, const std::vector<size_t>& rows, const SimParams& params,
                      Quantity quantity) {
  std::vector<SimEstimate> predictions(set.samples.size());
  for (size_t s : rows) predictions[s] = predict(set.samples[s], params);
  const Accuracy a = accuracy(set, rows, predictions, quantity);
  return a.n ? fmt::format("{:.1f}% (x{:.2f})", 100 * a.mape, a.bias) : "-";
}

std::string corrections_cell(const SiteProfile& site) {
  std::string out;
  for (const SiteCorrection& c : site.corrections)
    if (c.data_share >= kIdentifiedDataShare)
      out += fmt::format("{}{} {:.2f}", out.empty() ? "" : ", ", site_knob(c.knob).name, c.value);
  return out.empty() ? "none identified" : out;
}

// A standard normal draw from two 64-bit words (Box-Muller): the same numbers on every platform.
double normal_draw(std::mt19937_64& random) {
  const double u1 = (static_cast<double>(random() >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = (static_cast<double>(random() >> 11) + 0.5) / 9007199254740992.0;
  return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// The largest site's rows relabelled by the simulator under known corrections with 3% log-normal noise, fitted back
// from the global parameters on the same recipe-sized subset the study uses, and on all the rows. The truths keep
// every corrected value inside its range (a cost already at the end of its range would not move).
std::string synthetic_recovery(const CalibrationSet& set, const Site& site, const SimParams& global) {
  SiteProfile truth;
  truth.name = "truth";
  truth.corrections = {{site.gpu, SiteKnob::compute, 0.90},
                       {site.gpu, SiteKnob::memory, 1.06},
                       {site.gpu, SiteKnob::power, 1.12},
                       {site.engine, SiteKnob::host, 1.15}};
  const SimParams perturbed = apply_site(global, truth);
  constexpr double kNoise = 0.03;
  CalibrationSet synthetic;
  synthetic.rows = set.rows;
  std::mt19937_64 random(42);
  for (size_t s : site.samples) {
    CalibrationSample sample = set.samples[s];
    const SimEstimate e = predict(sample, perturbed);
    if (sample.energy_j) sample.energy_j = e.energy_j * std::exp(kNoise * normal_draw(random));
    if (sample.latency_s) sample.latency_s = e.latency_s * std::exp(kNoise * normal_draw(random));
    synthetic.samples.push_back(std::move(sample));
  }
  std::vector<size_t> all(synthetic.samples.size());
  for (size_t s = 0; s < all.size(); ++s) all[s] = s;
  const std::vector<size_t> recipe = choose_site_rows(synthetic, all, global, kSiteRecipeRows);
  std::string out = fmt::format(
      "### Synthetic recovery\n\nThe {} rows of {} ({}, {}) relabelled by the simulator under known corrections, "
      "with {:.0f}% log-normal noise on every measured value (seed 42), and fitted back from the global parameters: "
      "on the {} rows the recipe picks, and on all of them. A correction is recovered when the fit lands within its "
      "stated sd of the truth; the rows' noise bounds how close any fit can come.\n\n| correction | truth | fitted on "
      "{} rows (sd, from the rows) | fitted on {} rows (sd, from the rows) |\n|---|---:|---:|---:|\n",
      site.samples.size(), site.source, site.gpu, site.engine, 100 * kNoise, recipe.size(), recipe.size(), all.size());
  const SiteProfile small = fit_site(synthetic, recipe, global, "synthetic");
  const SiteProfile large = fit_site(synthetic, all, global, "synthetic");
  for (size_t k = 0; k < truth.corrections.size(); ++k) {
    const SiteCorrection& t = truth.corrections[k];
    auto fitted = [&](const SiteProfile& p) {
      for (const SiteCorrection& c : p.corrections)
        if (c.knob == t.knob && c.target == t.target)
          return fmt::format("x{:.3f} ({:.1f}%, {:.0f}%)", c.value, 100 * c.sd, 100 * c.data_share);
      return std::string("-");
    };
    out += fmt::format("| {} of {} | x{:.2f} | {} | {} |\n", site_knob(t.knob).name, t.target, t.value, fitted(small),
                       fitted(large));
  }
  return out;
}

}  // namespace

std::string site_study_markdown(const CalibrationSet& set, const std::map<std::string, SimParams>& without_source,
                                const SimParams& global) {
  const std::vector<Site> sites = sites_of(set);
  std::string out = fmt::format(
      "## Site profiles: each public setup as a site\n\n`llmco2 calibrate --site` fits small bounded corrections "
      "(compute, memory bandwidth and dynamic power of each GPU type, host costs of each engine) with a prior toward "
      "the global parameters (docs/site-profiles.md). Here every source's setup with {} or more rows "
      "(one GPU type under one engine) is treated as a site: the global parameters are the fit without its source "
      "(they have never seen it), the site profile is fitted on the {} configurations `choose_site_rows` picks among "
      "the rows of the site's most measured model (a site benchmarks the model it serves, each configuration once: "
      "what a 15-minute benchmark would run) and scored on the rest of the site's rows. Latency error is the error of "
      "time per output token: rows' "
      "tokens are given. MAPE and bias (geometric mean of predicted / measured).\n\n| site | rows | energy before | "
      "energy after | latency before | latency after | corrections the recipe identifies |\n"
      "|---|---:|---:|---:|---:|---:|---|\n",
      kMinSiteRows, kSiteRecipeRows);
  for (const Site& site : sites) {
    check_interrupt();
    const auto held_out = without_source.find(site.source);
    if (held_out == without_source.end()) continue;
    const SimParams& before = held_out->second;
    const std::vector<size_t> recipe = choose_site_rows(set, rows_of_main_model(set, site), before, kSiteRecipeRows);
    std::vector<size_t> rest;
    for (size_t s : site.samples)
      if (std::find(recipe.begin(), recipe.end(), s) == recipe.end()) rest.push_back(s);
    const SiteProfile fitted = fit_site(set, recipe, before, site.source);
    const SimParams after = apply_site(before, fitted);
    out += fmt::format("| {} {} {} | {} + {} | {} | {} | {} | {} | {} |\n", site.source, site.gpu, site.engine,
                       recipe.size(), rest.size(), mape_cell(set, rest, before, Quantity::energy),
                       mape_cell(set, rest, after, Quantity::energy), mape_cell(set, rest, before, Quantity::latency),
                       mape_cell(set, rest, after, Quantity::latency), corrections_cell(fitted));
  }
  if (sites.empty()) return out + "\nNo source has a setup with enough rows.\n";
  const auto largest = std::max_element(
      sites.begin(), sites.end(), [](const Site& a, const Site& b) { return a.samples.size() < b.samples.size(); });
  return out + "\n" + synthetic_recovery(set, *largest, global);
}

SiteCalibrateSummary calibrate_site(const SiteCalibrateOptions& o) {
  if (o.name.empty()) fail("calibrate --site: the site needs a name");
  for (char c : o.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      fail("calibrate --site: name '{}' may hold letters, digits, '-', '_' and '.' only", o.name);
  SiteCalibrateSummary summary;
  const CalibrationSet set = prepare_calibration(read_site_rows(o.data));
  summary.rows = static_cast<long>(set.rows.size());
  summary.simulatable = static_cast<long>(set.samples.size());
  for (const SkippedRow& s : set.skipped)
    summary.skipped.push_back(fmt::format("{}: {}", set.rows[s.row].source_ref, s.reason));
  if (set.samples.empty())
    fail("calibrate --site: none of the {} rows can be simulated (first: {})", set.rows.size(),
         summary.skipped.empty() ? "no rows" : summary.skipped.front());
  SiteProfile site = fit_site(set, {}, load_sim_params_or_default(o.params), o.name);
  site.data = o.data;
  const std::string out = o.out.empty() ? "site-" + o.name + ".json" : o.out;
  write_site_profile(out, site);
  summary.written = out;
  summary.report = site_table(site);
  return summary;
}

}  // namespace llmco2::research
