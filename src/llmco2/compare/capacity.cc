// compare/capacity.cc - the replica search per GPU type and tensor-parallel degree, and its plot.
#include "compare/capacity.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log_histogram.h"
#include "core/plot.h"
#include "core/progress.h"

namespace llmco2::compare {
namespace {

class Planner {
 public:
  Planner(const RequestLog& log, const SimParams& params, const ServingSlo& slo, const CarbonFor& carbon,
          const CapacitySearch& search)
      : log_(log), params_(params), slo_(slo), carbon_(carbon), search_(search) {
    options_.concurrency = search.concurrency;
    options_.prefix_share = search.prefix_share;
    check_replay_options(options_);  // before the search, whose replays' errors mark a setup unavailable
  }

  CapacityCandidate replay_one(const Deployment& d) {
    CapacityCandidate c;
    c.gpu = d.gpu.id, c.tensor_parallel = d.setup.gpus, c.replicas = d.replicas;
    c.pipeline_parallel = d.setup.pipeline_parallel;
    c.decode_replicas = d.decode ? d.decode->replicas : 0;
    LogHistogram ttft_s, tpot_s;
    const ReplayTotals t = replay(log_, d, params_, options_, [&](const ServedRequest& r) {
      if (r.finish_s < 0) return;
      ttft_s.add(r.ttft_s());
      if (r.gen_tokens > 1) tpot_s.add(r.tpot_s());
    });
    c.completed = t.completed, c.rejected = t.rejected;
    c.ttft_q_s = ttft_s.quantile(slo_.quantile);
    c.tpot_q_s = tpot_s.quantile(slo_.quantile);
    c.meets_slo = c.rejected == 0 && c.completed > 0 && (slo_.ttft_s <= 0 || c.ttft_q_s <= slo_.ttft_s) &&
                  (slo_.tpot_s <= 0 || c.tpot_q_s <= slo_.tpot_s);
    c.energy_j = t.busy_energy_j + t.idle_energy_j;
    c.gpu_hours = t.gpus_total * t.window_s / 3600.0;
    c.mean_batch = t.mean_running();
    const CarbonInputs in = carbon_(d.gpu, t.gpus_total);
    c.operational_g = operational_g(c.energy_j, in.pue, in.ci_g_per_kwh);
    c.embodied_known = in.embodied.known();
    if (c.embodied_known) c.embodied_g = embodied_g(*in.embodied.kgco2e, t.window_s, in.lifetime_years, t.gpus_total);
    provision(c, d, t.gpus_total);
    const auto price = search_.usd_per_gpu_hour.find(d.gpu.id);
    c.usd = (price == search_.usd_per_gpu_hour.end() ? 0.0 : price->second * c.gpu_hours) +
            search_.usd_per_kwh * in.pue * c.energy_j / 3.6e6;
    return c;
  }

  // Whole nodes at their design power (the vendor's maximum, else the parts' maxima; provisioned_nodes), or the GPUs'
  // TDP without one. Only a deployment meeting the objectives is marked over the budget.
  void provision(CapacityCandidate& c, const Deployment& d, int gpus) const {
    if (d.scope.node && d.scope.node->gpus > 0) {
      c.nodes = provisioned_nodes(c.tensor_parallel, (c.replicas + c.decode_replicas) * c.pipeline_parallel,
                                  d.scope.node->gpus);  // stage groups of both pools
      c.provisioned_w = c.nodes * d.scope.node->design_power_w;
    } else {
      c.provisioned_w = gpus * d.gpu.tdp_w;
    }
    c.over_power_budget = c.meets_slo && search_.power_budget_w > 0 && c.provisioned_w > search_.power_budget_w;
  }

  // `d` scaled to k units: k replicas, or with a P:D unit k x P prefill and k x D decode replicas (the link between
  // the pools from the node catalog for that many GPUs).
  static Deployment scaled(Deployment d, std::pair<int, int> unit, int k) {
    if (unit.first == 0) {
      d.replicas = k;
      return d;
    }
    d.replicas = unit.first * k;
    d.decode = make_decode_pool(d, d.gpu, d.setup, unit.second * k, d.scope);
    return d;
  }

  // The fewest replicas (or units of P:D; {0, 0}: co-located) meeting the SLOs at one tensor-parallel degree: doubling,
  // then bisection, within max_replicas in all. Every replay is kept in `tried`; returns its index, or nothing when
  // even the most misses.
  std::optional<size_t> fewest_replicas(const Deployment& d, std::pair<int, int> unit, int max_replicas,
                                        std::vector<CapacityCandidate>& tried) {
    max_replicas /= unit.first > 0 ? unit.first + unit.second : 1;
    if (max_replicas < 1)
      fail("a unit of {}:{} replicas is more than --max-replicas {}", unit.first, unit.second, search_.max_replicas);
    auto run = [&](int k) {
      tried.push_back(replay_one(scaled(d, unit, k)));
      return tried.size() - 1;
    };
    int low = 0, high = 1;  // low misses (0: none tried), high is the next to try
    size_t at = run(high);
    while (!tried[at].meets_slo) {
      if (high >= max_replicas) return std::nullopt;
      low = high;
      high = std::min(max_replicas, high * 2);
      at = run(high);
    }
    size_t best = at;
    while (high - low > 1) {
      const int mid = (low + high) / 2;
      const size_t i = run(mid);
      if (tried[i].meets_slo) high = mid, best = i;
      else low = mid;
    }
    return best;
  }

 private:
  const RequestLog& log_;
  const SimParams& params_;
  ServingSlo slo_;
  const CarbonFor& carbon_;
  const CapacitySearch& search_;
  ReplayOptions options_;
};

bool cheaper(const CapacityCandidate& a, const CapacityCandidate& b) {
  if (a.gpus() != b.gpus()) return a.gpus() < b.gpus();
  return a.energy_j < b.energy_j;
}

}  // namespace

CapacityPlan plan_capacity(const RequestLog& log, const std::vector<Gpu>& gpu_types,
                           const DeploymentFor& deployment_for, const SimParams& params, const ServingSlo& slo,
                           const CarbonFor& carbon, const CapacitySearch& search, RankBy rank_by) {
  if (search.max_replicas < 1 || search.max_replicas > kMaxReplicas)
    fail("--max-replicas must be 1 to {}, got {}", kMaxReplicas, search.max_replicas);
  if (!(slo.quantile > 0 && slo.quantile < 1)) fail("the SLO quantile must be in (0, 1), got {}", slo.quantile);
  auto check = [](double value, const std::string& flag) {
    if (!(value >= 0) || !std::isfinite(value)) fail("{} {}: expected a finite value, 0 or more", flag, value);
  };
  check(search.power_budget_w, "--power-budget-w");
  check(search.usd_per_kwh, "--usd-per-kwh");
  for (const auto& [gpu, usd] : search.usd_per_gpu_hour) check(usd, "--usd-per-gpu-hour " + gpu);
  CapacityPlan plan;
  Planner planner(log, params, slo, carbon, search);
  if (search.prefill_unit > 0 || search.decode_unit > 0)
    parse_disaggregation(fmt::format("{}:{}", search.prefill_unit, search.decode_unit));  // the same bounds
  // The searches per GPU type and degree: co-located, and disaggregated in units of P:D when asked.
  std::vector<std::pair<int, int>> units = {{0, 0}};
  if (search.prefill_unit > 0) units.emplace_back(search.prefill_unit, search.decode_unit);
  Progress bar("capacity search", static_cast<long>(gpu_types.size() * search.tensor_parallel.size() * units.size()),
               search.progress);
  long done = 0;
  for (const Gpu& gpu : gpu_types) {
    std::optional<size_t> best;
    for (int tp : search.tensor_parallel)
      for (const std::pair<int, int>& unit : units) {
        try {
          const Deployment d = deployment_for(gpu, tp);
          scheduler_limits(d);  // throws when the weights leave no room for a KV cache
          const auto found = planner.fewest_replicas(d, unit, search.max_replicas, plan.tried);
          if (found && !plan.tried[*found].over_power_budget &&
              (!best || cheaper(plan.tried[*found], plan.tried[*best])))
            best = found;
        } catch (const Error& e) {
          CapacityCandidate c;
          c.gpu = gpu.id, c.tensor_parallel = tp, c.replicas = 0;
          c.unavailable =
              unit.first > 0 ? fmt::format("disaggregated {}:{}: {}", unit.first, unit.second, e.what()) : e.what();
          plan.tried.push_back(c);
        }
        bar.update(++done);
      }
    if (best) plan.chosen.push_back(*best);
  }
  bar.finish();
  std::stable_sort(plan.chosen.begin(), plan.chosen.end(), [&](size_t a, size_t b) {
    return rank_figure(plan.tried[a], rank_by) < rank_figure(plan.tried[b], rank_by);
  });
  return plan;
}

int provisioned_nodes(int tensor_parallel, int replicas, int node_gpus) {
  if (tensor_parallel <= node_gpus) {
    const int per_node = node_gpus / tensor_parallel;
    return (replicas + per_node - 1) / per_node;
  }
  return replicas * ((tensor_parallel + node_gpus - 1) / node_gpus);
}

RankBy parse_rank_by(const std::string& name) {
  if (name == "energy") return RankBy::energy;
  if (name == "co2") return RankBy::co2;
  if (name == "usd") return RankBy::usd;
  if (name == "gpu-hours") return RankBy::gpu_hours;
  fail("--rank-by: expected energy, co2, usd or gpu-hours, got '{}'", name);
}

double rank_figure(const CapacityCandidate& c, RankBy by) {
  switch (by) {
    case RankBy::co2:
      return c.total_g();
    case RankBy::usd:
      return c.usd;
    case RankBy::gpu_hours:
      return c.gpu_hours;
    case RankBy::energy:
      break;
  }
  return c.energy_j;
}

std::string write_capacity_plot(const CapacityPlan& plan, const std::string& title, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::string csv =
      "gpu,tensor_parallel,pipeline_parallel,replicas,decode_replicas,gpus,ttft_q_s,tpot_q_s,energy_kwh,gpu_hours,"
      "co2_kg,embodied_known\n";
  std::string data;
  for (size_t i : plan.chosen) {
    const CapacityCandidate& c = plan.tried[i];
    csv += fmt::format("{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{}\n", c.gpu, c.tensor_parallel,
                       c.pipeline_parallel, c.replicas, c.decode_replicas, c.gpus(), c.ttft_q_s, c.tpot_q_s,
                       c.energy_j / 3.6e6, c.gpu_hours, c.total_g() / 1000, c.embodied_known ? "yes" : "no");
    const std::string stages = c.pipeline_parallel > 1 ? fmt::format("xPP{}", c.pipeline_parallel) : "";
    data += fmt::format("\"{} {}xTP{}{}\" {:.6g} {:.6g} {:.6g}\n", gnuplot_text(c.gpu), c.replicas_words(),
                        c.tensor_parallel, stages, c.energy_j / 3.6e6, c.gpu_hours, c.total_g() / 1000);
  }
  write_file_atomic(dir / "capacity.csv", csv);
  if (plan.chosen.empty()) return "no deployment meets the objectives: no plot";
  std::string script = fmt::format(
      "{}set termoption noenhanced\nset multiplot layout 1,3 title \"{}\"\nset style data histograms\n"
      "set style fill solid 0.8 border -1\nset boxwidth 0.7\nset grid ytics\nset yrange [0:*]\nunset key\n"
      "set xtics rotate by -30\n",
      gnuplot_datablock("d", data), gnuplot_text(title));
  for (auto [column, label] : {std::pair{2, "energy (kWh)"}, {3, "GPU-hours"}, {4, "CO2 (kg)"}})
    script += fmt::format("set title '{}'\nplot $d using {}:xtic(1) lc {}\n", label, column, column - 1);
  script += "unset multiplot\n";
  return plot_to_file(script, dir / "capacity.png", 1200, 500);
}

}  // namespace llmco2::compare
