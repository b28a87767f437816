// compare/setup_comparison.cc - scoring GPU setups and choosing the lowest-carbon one under a latency objective.
#include "compare/setup_comparison.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/json_io.h"
#include "core/plot.h"
#include "dataset/log_scanner.h"

namespace llmco2::compare {
namespace {

constexpr const char* kLogLatencyMeaning = "p90 request latency of the log";

void choose_best(Comparison& c, std::optional<double> slo_s) {
  for (size_t i = 0; i < c.rows.size(); ++i) {
    SetupRow& r = c.rows[i];
    if (!r.unavailable.empty()) continue;
    r.meets_slo = !slo_s || r.latency_s <= *slo_s;
    if (r.meets_slo && (!c.best || r.total_g() < c.rows[*c.best].total_g())) c.best = i;
  }
}

// One setup to score: its row and its resolved setup.
struct SetupTask {
  size_t row = 0;
  ComparedSetup setup;
};

// Runs score on each task, `threads` at a time; an Error marks the task's row unavailable with its message.
template <typename Score>
void score_tasks(Comparison& c, const std::vector<SetupTask>& tasks, int threads, Score& score) {
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> failures(tasks.size());  // anything but an Error: rethrown here, after the join
  const auto work = [&] {
    for (size_t i; (i = next++) < tasks.size();) {
      const SetupTask& t = tasks[i];
      SetupRow& row = c.rows[t.row];
      try {
        score(row, t.setup);
      } catch (const Error& e) {
        row.unavailable = e.what();
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> workers;
    for (int k = 1; k < std::min<int>(threads, static_cast<int>(tasks.size())); ++k) workers.emplace_back(work);
    work();
  }
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

// Each setup `setup_for` resolves, scored on `threads` workers; those it refuses marked unavailable with its reason.
template <typename Score>
Comparison for_each_setup(const std::vector<Gpu>& gpu_types, const std::vector<int>& counts, const SetupFor& setup_for,
                          Score score, int threads = 1) {
  Comparison c;
  std::vector<SetupTask> tasks;
  for (const Gpu& gpu : gpu_types)
    for (int gpus : counts) {
      SetupRow row;
      row.gpu = gpu.id;
      row.gpus = gpus;
      try {
        ComparedSetup setup = setup_for(gpu, gpus);
        row.scope = setup.carbon.scope.node ? setup.carbon.scope.node->id : "gpu";
        row.dtype = setup.config.request.precision.to_string();
        row.stages = setup.config.request.pipeline_parallel;
        row.notes = setup.notes;
        tasks.push_back({c.rows.size(), std::move(setup)});
      } catch (const Error& e) {
        row.unavailable = e.what();
      }
      c.rows.push_back(std::move(row));
    }
  score_tasks(c, tasks, threads, score);
  return c;
}

// A row's figures from the account of the log on its setup.
void fill_log_row(SetupRow& row, const TraceAccount& a) {
  if (a.skipped_shapes > 0)
    row.unavailable = fmt::format("{} requests of the log are longer than it serves", a.skipped_shapes);
  row.energy_j = a.energy_j;
  row.output_tokens = static_cast<double>(a.gen_tokens);
  row.latency_s = a.latency_per_request_s.p90;
  row.operational_g = a.operational_g;
  row.embodied_g = a.embodied_g;
  row.embodied_known = !a.embodied_unknown;
}

TraceOptions log_options(const ComparedSetup& s, double grid_ratio) {
  TraceOptions options;
  options.batch = s.config.request.batch;
  options.grid_ratio = grid_ratio;
  return options;
}

}  // namespace

Comparison compare_request(const Predictor& predictor, const std::vector<Gpu>& gpu_types,
                           const std::vector<int>& counts, const SetupFor& setup_for, std::optional<double> slo_s) {
  Comparison c = for_each_setup(gpu_types, counts, setup_for, [&](SetupRow& row, const ComparedSetup& s) {
    const Footprint f = footprint(predictor.predict(s.config), s.carbon, nullptr);
    row.footprint = f;
    row.output_tokens = static_cast<double>(s.config.request.batch * s.config.request.gen_tokens);
    row.energy_j = f.energy_j.total_or_sum().value_or(0);
    row.latency_s = f.latency_s.total_or_sum().value_or(0);
    row.operational_g = f.operational_g.total_or_sum().value_or(0);
    row.embodied_g = f.embodied_g.total_or_sum().value_or(0);
    row.embodied_known = !f.embodied_unknown;
  });
  c.latency_meaning = "request latency";
  choose_best(c, slo_s);
  return c;
}

Comparison compare_log(const Predictor& predictor, const RequestLog& log, const std::vector<Gpu>& gpu_types,
                       const std::vector<int>& counts, const SetupFor& setup_for, std::optional<double> slo_s,
                       double grid_ratio) {
  Comparison c = for_each_setup(gpu_types, counts, setup_for, [&](SetupRow& row, const ComparedSetup& s) {
    fill_log_row(row, account_trace(log, predictor, s.config, s.carbon, log_options(s, grid_ratio)));
  });
  c.latency_meaning = kLogLatencyMeaning;
  choose_best(c, slo_s);
  return c;
}

Comparison compare_log_shapes(const Predictor& predictor, const std::vector<ShapeCount>& shapes,
                              const std::vector<Gpu>& gpu_types, const std::vector<int>& counts,
                              const SetupFor& setup_for, std::optional<double> slo_s, double grid_ratio, int threads) {
  Comparison c = for_each_setup(
      gpu_types, counts, setup_for,
      [&](SetupRow& row, const ComparedSetup& s) {
        fill_log_row(row, account_shapes(shapes, predictor, s.config, s.carbon, log_options(s, grid_ratio)));
      },
      worker_count(threads));
  c.latency_meaning = kLogLatencyMeaning;
  choose_best(c, slo_s);
  return c;
}

std::vector<SweepPoint> sweep_gpu_counts(const Predictor& predictor, const std::vector<long>& batches,
                                         const std::vector<long>& prompts, const std::vector<int>& counts,
                                         const SweepSetupFor& setup_for) {
  std::vector<SweepPoint> points;
  for (long batch : batches)
    for (long prompt : prompts)
      for (int gpus : counts) {
        ComparedSetup s;
        try {
          s = setup_for(gpus, batch, prompt);
        } catch (const Error&) {
          continue;  // a setup that cannot serve is left out of the plots
        }
        const Footprint f = footprint(predictor.predict(s.config), s.carbon, nullptr);
        const double operational = f.operational_g.total_or_sum().value_or(0);
        const double embodied = f.embodied_g.total_or_sum().value_or(0);
        const int all_gpus = gpus * s.config.request.pipeline_parallel;
        points.push_back({batch, prompt, gpus, f.latency_s.total_or_sum().value_or(0), operational / all_gpus,
                          operational + embodied, embodied, !f.embodied_unknown});
      }
  return points;
}

std::string write_setups_plot(const Comparison& c, const std::string& title, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::string csv =
      "gpu,gpus,dtype,energy_scope,energy_j,latency_s,co2_total_g,embodied_known,meets_slo,best,unavailable\n";
  std::string data;
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const SetupRow& r = c.rows[i];
    const bool best = c.best && *c.best == i;
    if (!r.unavailable.empty()) {
      csv += fmt::format("{},{},,,,,,,,,{}\n", r.gpu, r.gpus, csv_escape(r.unavailable));
      continue;
    }
    csv += fmt::format("{},{},{},{},{:.6g},{:.6g},{:.6g},{},{},{},\n", r.gpu, r.gpus, r.dtype, r.scope, r.energy_j,
                       r.latency_s, r.total_g(), r.embodied_known ? "yes" : "no", r.meets_slo ? "yes" : "no",
                       best ? "yes" : "no");
    data += fmt::format("\"{} x{}{}\" {:.6g} {:.6g}\n", gnuplot_text(r.gpu), r.gpus, best ? " *" : "", r.total_g(),
                        r.latency_s);
  }
  write_file_atomic(dir / "setups.csv", csv);
  if (data.empty()) return "no setup can serve the request: no plot";
  std::string script = fmt::format(
      "{}set termoption noenhanced\nset multiplot layout 2,1 title \"{} (* lowest carbon)\"\n"
      "set style data histograms\nset style fill solid 0.8 border -1\nset boxwidth 0.7\nset grid ytics\n"
      "set yrange [0:*]\nunset key\nset xtics rotate by -45 font ',8'\n",
      gnuplot_datablock("d", data), gnuplot_text(title));
  script += "set ylabel 'total CO2 (g)'\nplot $d using 2:xtic(1) lc 1\n";
  script += "set ylabel '" + c.latency_meaning + " (s)'\nplot $d using 3:xtic(1) lc 2\nunset multiplot\n";
  return plot_to_file(script, dir / "setups.png", 1400, 900);
}

std::string write_sweep(const std::vector<SweepPoint>& points, const std::string& title,
                        const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::string csv = "batch,prompt_tokens,gpus,latency_s,co2_operational_per_gpu_g,co2_embodied_g,co2_total_g\n";
  std::map<std::pair<long, long>, std::string> series;
  for (const auto& p : points) {
    csv += fmt::format("{},{},{},{:.6g},{:.6g},{},{:.6g}\n", p.batch, p.prompt_tokens, p.gpus, p.latency_s,
                       p.operational_per_gpu_g, p.embodied_known ? fmt::format("{:.6g}", p.embodied_g) : "", p.total_g);
    series[{p.batch, p.prompt_tokens}] += fmt::format("{} {} {}\n", p.gpus, p.operational_per_gpu_g, p.total_g);
  }
  write_file_atomic(dir / "sweep.csv", csv);
  // The series go into the script as gnuplot datablocks: no scratch files to leave behind.
  std::string blocks, per_gpu = "plot ", total = "plot ";
  int index = 0;
  for (const auto& [key, data] : series) {
    const std::string block = fmt::format("$s{}", index), sep = index++ ? ", " : "";
    blocks += gnuplot_datablock(block.substr(1), data);
    const std::string label = fmt::format("batch {}, prompt {}", key.first, key.second);
    per_gpu += fmt::format("{}{} using 1:2 with linespoints lw 2 title '{}'", sep, block, label);
    total += fmt::format("{}{} using 1:3 with linespoints lw 2 title '{}'", sep, block, label);
  }
  if (series.empty()) return "no setup of the sweep can serve the model: no plot";
  const std::string axes =
      blocks + "set grid\nset logscale x 2\nset logscale y\nset xlabel 'GPUs'\nset key outside right\n";
  std::string warning = plot_to_file(
      axes +
          fmt::format("set ylabel 'operational CO2 per GPU (g)'\nset title \"{}: operational CO2 per GPU\"\n",
                      gnuplot_text(title)) +
          per_gpu,
      dir / "co2-per-gpu.png", 1000, 600);
  const std::string second =
      plot_to_file(axes +
                       fmt::format("set ylabel 'total CO2 (g)'\nset title \"{}: total CO2 (operational + embodied)\"\n",
                                   gnuplot_text(title)) +
                       total,
                   dir / "co2-total.png", 1000, 600);
  return warning.empty() ? second : warning;
}

}  // namespace llmco2::compare
