// evaluation/report.cc - Markdown tables and gnuplot scatter plots of an evaluation.
#include "evaluation/report.h"

#include <fmt/format.h>

#include "core/accuracy.h"
#include "core/json_io.h"
#include "core/plot.h"

namespace llmco2::evaluation {
namespace {

std::vector<std::string> families_present(const TestResult& t) {
  std::vector<std::string> out;
  if (t.predictors.empty()) return out;
  const auto& by_family = t.predictors.front().score.energy_by_family;
  for (const auto& f : paper_families())
    if (by_family.count(f)) out.push_back(f);
  if (by_family.count("other")) out.push_back("other");
  return out;
}

using Metric = double Accuracy::*;

std::string metric_table(const TestResult& t, Metric metric) {
  const auto families = families_present(t);
  std::string md = "| predictor |";
  std::string rule = "|---|";
  for (const auto& f : families) {
    md += fmt::format(" {} (n={}) |", f, t.predictors.front().score.energy_by_family.at(f).n);
    rule += "---|";
  }
  md += " Mean of families | All rows |\n" + rule + "---|---|\n";
  for (const auto& p : t.predictors) {
    md += fmt::format("| {} |", p.name);
    for (const auto& f : families) md += fmt::format(" {} |", percent(p.score.energy_by_family.at(f).*metric));
    md += fmt::format(" {} | {} |\n", percent(p.score.energy_family_mean.*metric), percent(p.score.energy_all.*metric));
  }
  return md;
}

std::string phase_table(const TestResult& t) {
  std::string md =
      "| predictor | latency MAPE | latency EBA(10%) | prefill energy MAPE | decode energy MAPE | fit time |\n"
      "|---|---|---|---|---|---|\n";
  const auto cell = [](const Accuracy& a, Metric m) { return a.n ? percent(a.*m) : std::string("-"); };
  for (const auto& p : t.predictors)
    md += fmt::format("| {} | {} | {} | {} | {} | {:.0f} s |\n", p.name, cell(p.score.latency_all, &Accuracy::mape),
                      cell(p.score.latency_all, &Accuracy::eba10), cell(p.score.prefill_energy, &Accuracy::mape),
                      cell(p.score.decode_energy, &Accuracy::mape), p.fit_seconds);
  return md;
}

const PredictorResult* find(const TestResult& t, const std::string& name) {
  for (const auto& p : t.predictors)
    if (p.name == name) return &p;
  return nullptr;
}

std::string ablation_table(const EvalReport& r) {
  std::string md = "| scheme | predictor |";
  std::string rule = "|---|---|";
  for (const auto& t : r.tests) {
    md += fmt::format(" ({}) EBA(10%) | ({}) MAPE |", t.id, t.id);
    rule += "---|---|";
  }
  md += "\n" + rule + "\n";
  for (const auto& row : r.ablation) {
    md += fmt::format("| {} | {} |", row.label, row.predictor);
    for (const auto& t : r.tests) {
      const auto* p = find(t, row.predictor);
      md += p ? fmt::format(" {} | {} |", percent(p->score.energy_family_mean.eba10),
                            percent(p->score.energy_family_mean.mape))
              : std::string(" - | - |");
    }
    md += "\n";
  }
  return md;
}

// A scatter of each predictor against the measurements, the points as gnuplot datablocks; written atomically.
std::string plot(const TestResult& t, const std::filesystem::path& png) {
  std::string blocks, series;
  for (size_t k = 0; k < t.predictors.size(); ++k) {
    const PredictorResult& p = t.predictors[k];
    std::string points;
    for (size_t i = 0; i < t.rows.size(); ++i) {
      const auto measured = t.rows[i]->energy_j.total_or_sum();
      if (measured && p.predictions[i].energy_j.total)
        points += fmt::format("{} {}\n", *measured, *p.predictions[i].energy_j.total);
    }
    blocks += gnuplot_datablock(fmt::format("p{}", k), points);
    series += fmt::format(", $p{} using 1:2 title '{}' pt 7 ps 0.3", k, p.name);
  }
  const std::string script = fmt::format(
      "{}set logscale xy\nset grid\nset key left top\nset xlabel 'measured energy (J)'\n"
      "set ylabel 'predicted energy (J)'\nset title \"Test set ({}): {}\"\nplot x title 'y = x' lc rgb 'black'{}",
      blocks, t.id, gnuplot_text(t.title), series);
  return plot_to_file(script, png, 900, 700);
}

}  // namespace

std::string write_eval_report(const EvalReport& r, const std::filesystem::path& markdown,
                              const std::filesystem::path& plot_dir) {
  std::filesystem::create_directories(plot_dir);
  std::string md = "# Accuracy of the predictors\n\n" + r.preamble + "\n";
  md += fmt::format("Reproduce with `{}` ({:.0f} s on the machine that wrote this).\n\n", r.command, r.seconds);
  std::string warning;
  for (const auto& t : r.tests) {
    md += fmt::format("## Test set ({}): {}\n\n{}\n\n", t.id, t.title, t.description);
    md += "### MAPE of the total energy (lower is better)\n\n" + metric_table(t, &Accuracy::mape) + "\n";
    for (const auto& [label, metric] : std::vector<std::pair<std::string, Metric>>{
             {"EBA(30%)", &Accuracy::eba30}, {"EBA(10%)", &Accuracy::eba10}, {"EBA(5%)", &Accuracy::eba5}})
      md += "### " + label + " of the total energy (higher is better)\n\n" + metric_table(t, metric) + "\n";
    md += "### Latency and phases (all rows that measured them)\n\n" + phase_table(t) + "\n";
    // PNG: a scatter of thousands of points per predictor makes a multi-megabyte SVG.
    const auto png = plot_dir / fmt::format("test-{}.png", t.id);
    const std::string w = plot(t, png);
    if (w.empty()) {
      const auto relative =
          std::filesystem::relative(png, markdown.parent_path().empty() ? "." : markdown.parent_path());
      md += fmt::format("![predicted vs measured energy, test set ({})]({})\n\n", t.id, relative.string());
    } else {
      warning = w;
    }
  }
  md += "## Ablation (paper Table 6): mean over the paper's families\n\n" + ablation_table(r) + "\n";
  write_file_atomic(markdown, md);
  return warning;
}

}  // namespace llmco2::evaluation
