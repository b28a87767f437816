// cli/cmd_compare.cc - `llmco2 compare`: one request (or a request log with --trace) on every GPU type and count
// (1, 2, 4, 8 where the model fits): energy, latency, operational and embodied CO2, CO2 per GPU; --slo-ms marks the
// lowest-carbon setup meeting the latency objective; plots of CO2 against GPU count (the paper's figures 12-14).
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/predictor_flags.h"
#include "cli/request_flags.h"
#include "compare/setup_comparison.h"
#include "core/error.h"
#include "core/output_manifest.h"
#include "hardware/gpu_catalog.h"
#include "hardware/node.h"
#include "serving/capacity.h"

namespace llmco2::cli {
namespace {

struct CompareFlags {
  std::vector<std::string> gpu_types;  // empty: every bundled GPU (those the basis cannot price are left out)
  std::vector<int> counts = {1, 2, 4, 8};
  std::optional<double> slo_ms;
  std::string trace, plot = "llmco2-compare", format = "table";
  std::vector<long> sweep_batches = {1, 4, 16}, sweep_prompts = {64, 1024};
  double grid_ratio = 1.1;
  // Capacity planning (--trace with a TTFT or TPOT objective): the serving simulation instead of per-request sums.
  double slo_ttft_ms = 0, slo_tpot_ms = 0;
  std::vector<int> tp_degrees = {1, 2, 4, 8};
  int max_replicas = 64;
  bool quiet = false, keep_time_outliers = false;
};

// The log of --trace without the requests a pause of over 30 days separates from the rest (unless
// --keep-time-outliers), each dropped line named on stderr.
RequestLog read_trace(const CompareFlags& f) {
  RequestLog log = read_request_log(f.trace, !f.quiet);
  if (f.keep_time_outliers) return log;
  const size_t examples_before = log.examples.size();
  const long dropped = drop_time_outliers(log);
  if (dropped == 0) return log;
  std::cerr << fmt::format("compare: {} request(s) of {} dropped as time outliers (--keep-time-outliers keeps them)\n",
                           dropped, log.source);
  for (size_t i = examples_before; i < log.examples.size(); ++i)
    std::cerr << fmt::format("  line {}: {}\n", log.examples[i].line, log.examples[i].reason);
  return log;
}

std::vector<Gpu> gpu_types(const CompareFlags& f, const CarbonFor& carbon, std::string& note) {
  std::vector<Gpu> out;
  if (!f.gpu_types.empty()) {
    for (const auto& name : f.gpu_types) out.push_back(GpuCatalog::bundled().resolve(name));
    return out;
  }
  std::vector<std::string> left_out;
  for (const Gpu& gpu : GpuCatalog::bundled().gpus()) {
    try {
      carbon(gpu, 1);
      out.push_back(gpu);
    } catch (const Error&) {
      left_out.push_back(gpu.id);
    }
  }
  if (!left_out.empty())
    note = fmt::format("left out (no embodied figure on this basis; give --gpu-types and --embodied-kg): {}",
                       fmt::join(left_out, ", "));
  return out;
}

// A line naming the GPUs whose totals are operational only (no embodied figure), or "".
std::string unknown_embodied_note(const Comparison& c) {
  std::vector<std::string> ids;
  for (const SetupRow& r : c.rows)
    if (r.unavailable.empty() && !r.embodied_known && std::find(ids.begin(), ids.end(), r.gpu) == ids.end())
      ids.push_back(r.gpu);
  if (ids.empty()) return "";
  return fmt::format("embodied CO2 unknown for {} (no sourced embodied figure; give --embodied-kg): their co2_total "
                     "is operational only (marked ~)",
                     fmt::join(ids, ", "));
}

std::string short_reason(std::string reason) {
  if (reason.size() > 70) reason = reason.substr(0, 67) + "...";
  return reason;
}

std::string table(const Comparison& c, std::optional<double> slo_ms) {
  std::string out = fmt::format("  {:<16} {:>4} {:<18} {:>11} {:>10} {:>11} {:>11} {:>11} {:>11}{}\n", "gpu",
                                "gpus", "energy scope", "energy_j", "latency_s", "co2_oper_g", "co2_emb_g", "co2_total_g", "co2_per_gpu",
                                slo_ms ? "  slo" : "");
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const SetupRow& r = c.rows[i];
    const char* mark = c.best && *c.best == i ? "*" : " ";
    if (!r.unavailable.empty()) {
      out += fmt::format("{} {:<16} {:>4}  cannot serve: {}\n", mark, r.gpu, r.gpus, short_reason(r.unavailable));
      continue;
    }
    const std::string embodied = r.embodied_known ? fmt::format("{:.4g}", r.embodied_g) : "unknown";
    const std::string total = fmt::format("{}{:.4g}", r.embodied_known ? "" : "~", r.total_g());
    out += fmt::format("{} {:<16} {:>4} {:<18} {:>11.4g} {:>10.4g} {:>11.4g} {:>11} {:>11} {:>11.4g}{}\n", mark, r.gpu,
                       r.gpus, r.scope, r.energy_j, r.latency_s, r.operational_g, embodied, total, r.per_gpu_g(),
                       slo_ms ? (r.meets_slo ? "  yes" : "  no") : "");
  }
  return out;
}

Json rows_json(const Comparison& c) {
  Json rows = Json::array();
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const SetupRow& r = c.rows[i];
    Json j = {{"gpu", r.gpu}, {"gpus", r.gpus}};
    if (!r.unavailable.empty()) {
      j["unavailable"] = r.unavailable;
    } else {
      const Json embodied = r.embodied_known ? Json(r.embodied_g) : Json();
      j.update({{"energy_scope", r.scope == "gpu" ? "gpu" : "node"},
                {"node", r.scope == "gpu" ? Json() : Json(r.scope)},
                {"energy_j", r.energy_j},
                {"latency_s", r.latency_s},
                {"co2_g", {{"operational", r.operational_g}, {"embodied", embodied}, {"total", r.total_g()}}},
                {"co2_per_gpu_g", r.per_gpu_g()},
                {"meets_slo", r.meets_slo},
                {"best", c.best && *c.best == i}});
      if (!r.embodied_known)
        j["co2_note"] = "embodied CO2 unknown (no sourced embodied figure): total is operational only";
    }
    rows.push_back(j);
  }
  return rows;
}

std::string capacity_table(const CapacityPlan& plan) {
  std::string out = fmt::format("  {:<4} {:<16} {:>3} {:>8} {:>5} {:>12} {:>12} {:>11} {:>10} {:>10}\n", "rank", "gpu",
                                "tp", "replicas", "gpus", "p95_ttft_ms", "p95_tpot_ms", "energy_kwh", "gpu_hours",
                                "co2_kg");
  for (size_t k = 0; k < plan.chosen.size(); ++k) {
    const CapacityCandidate& c = plan.tried[plan.chosen[k]];
    out += fmt::format("  {:<4} {:<16} {:>3} {:>8} {:>5} {:>12.1f} {:>12.2f} {:>11.3f} {:>10.2f} {:>9.3f}{}\n", k + 1,
                       c.gpu, c.tensor_parallel, c.replicas, c.gpus(), 1000 * c.ttft_q_s, 1000 * c.tpot_q_s,
                       c.energy_j / 3.6e6, c.gpu_hours, c.total_g() / 1000, c.embodied_known ? "" : "~");
  }
  return out;
}

Json capacity_json(const CapacityPlan& plan) {
  auto one = [](const CapacityCandidate& c) {
    Json j = {{"gpu", c.gpu}, {"tensor_parallel", c.tensor_parallel}, {"replicas", c.replicas}};
    if (!c.unavailable.empty()) {
      j["unavailable"] = c.unavailable;
      return j;
    }
    j.update({{"gpus", c.gpus()}, {"meets_slo", c.meets_slo}, {"completed", c.completed}, {"rejected", c.rejected},
              {"p95_ttft_s", c.ttft_q_s}, {"p95_tpot_s", c.tpot_q_s}, {"energy_j", c.energy_j},
              {"gpu_hours", c.gpu_hours},
              {"co2_g", {{"operational", c.operational_g}, {"embodied", c.embodied_known ? Json(c.embodied_g) : Json()},
                         {"total", c.total_g()}}}});
    return j;
  };
  Json chosen = Json::array(), tried = Json::array();
  for (size_t i : plan.chosen) chosen.push_back(one(plan.tried[i]));
  for (const auto& c : plan.tried) tried.push_back(one(c));
  return {{"ranked_by_energy", chosen}, {"tried", tried}};
}

// The rank of each chosen deployment by one figure (1: lowest), as "gpu 1, gpu 2, ..." in that order.
std::string ranking(const CapacityPlan& plan, double (*figure)(const CapacityCandidate&)) {
  std::vector<size_t> order = plan.chosen;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return figure(plan.tried[a]) < figure(plan.tried[b]); });
  std::vector<std::string> names;
  for (size_t i : order) names.push_back(plan.tried[i].gpu);
  return fmt::format("{}", fmt::join(names, " < "));
}

void run_capacity(const CompareFlags& f, const ResolvedRequest& r, const CarbonFor& carbon,
                  const std::vector<Gpu>& gpus, const std::string& params) {
  if (f.slo_ttft_ms < 0 || f.slo_tpot_ms < 0) fail("--slo-ttft-ms and --slo-tpot-ms must not be negative");
  const RequestLog log = read_trace(f);
  Deployment base;
  base.model = r.model, base.gpu = r.gpu, base.setup = r.request;
  base.setup.batch = 1;
  ServingSlo slo;
  slo.ttft_s = f.slo_ttft_ms / 1000, slo.tpot_s = f.slo_tpot_ms / 1000;
  CapacitySearch search;
  search.tensor_parallel = f.tp_degrees, search.max_replicas = f.max_replicas, search.progress = !f.quiet;
  for (int tp : f.tp_degrees)
    if (tp < 1 || tp > 64) fail("--tp-degrees: expected GPUs per replica between 1 and 64, got {}", tp);
  const CapacityPlan plan = plan_capacity(log, base, gpus, load_sim_params_or_default(params), slo, carbon, search);
  const std::string subject = fmt::format(
      "{} requests of {} on {} ({}, {}); objectives at P95: TTFT {} ms, TPOT {} ms", log.requests.size(), log.source,
      r.model.id, r.request.precision.to_string(), r.request.engine, f.slo_ttft_ms > 0 ? fmt::format("{:g}", f.slo_ttft_ms) : "-",
      f.slo_tpot_ms > 0 ? fmt::format("{:g}", f.slo_tpot_ms) : "-");
  RunManifest manifest(manifest_in_folder(f.plot));
  const std::string warning = write_capacity_plot(
      plan, fmt::format("{} on {}: cheapest deployment per GPU type meeting the P95 objectives",
                        std::filesystem::path(f.trace).filename().string(), r.model.id), f.plot);
  manifest.commit();
  if (f.format == "json") {
    Json j = capacity_json(plan);
    j["subject"] = subject;
    j["plot_dir"] = f.plot;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << subject << "\n" << capacity_table(plan);
    if (plan.chosen.empty()) std::cout << "  no deployment meets the objectives within --max-replicas\n";
    else {
      std::cout << "  by energy:    " << ranking(plan, [](const CapacityCandidate& c) { return c.energy_j; }) << "\n";
      std::cout << "  by CO2:       " << ranking(plan, [](const CapacityCandidate& c) { return c.total_g(); }) << "\n";
      std::cout << "  by GPU-hours: " << ranking(plan, [](const CapacityCandidate& c) { return c.gpu_hours; }) << "\n";
    }
    std::cout << fmt::format("  {} replays; cheapest per GPU type = fewest GPUs, then least energy; ~ = embodied "
                             "unknown; plot: {}/capacity.png\n", plan.tried.size(), f.plot);
  }
  if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
}

// Node scope only when every compared GPU type has a node: a comparison is like for like or it misleads. Otherwise
// GPU scope for all, said in `note`.
CarbonFlags comparable_scope(CarbonFlags cf, const std::vector<Gpu>& gpus, std::string& note) {
  if (cf.scope != "node" || !cf.node.empty()) return cf;
  std::vector<std::string> without;
  for (const Gpu& gpu : gpus)
    if (!NodeCatalog::bundled().default_for(gpu.id)) without.push_back(gpu.id);
  if (without.empty()) return cf;
  note = fmt::format("energy scope gpu for every setup: the node catalog has no node for {} (compared like for "
                     "like); `llmco2 nodes` lists those it has",
                     fmt::join(without, ", "));
  cf.scope = "gpu";
  return cf;
}

void run_compare(const CompareFlags& f, const RequestFlags& rf, const PredictorFlags& pf, const CarbonFlags& flags) {
  const ResolvedRequest r = resolve_request(rf, false);
  resolve_carbon(flags, r.gpu, 1);  // checks the carbon flags once, up front
  std::string note, scope_note;
  const std::vector<Gpu> gpus = gpu_types(f, [&](const Gpu& gpu, int n) { return resolve_carbon(flags, gpu, n); }, note);
  const CarbonFlags cf = comparable_scope(flags, gpus, scope_note);
  const CarbonInputs example = resolve_carbon(cf, r.gpu, 1);
  const CarbonFor carbon = [&](const Gpu& gpu, int gpus) { return resolve_carbon(cf, gpu, gpus); };
  if (!f.trace.empty() && (f.slo_ttft_ms > 0 || f.slo_tpot_ms > 0)) return run_capacity(f, r, carbon, gpus, pf.params);
  const LoadedPredictor p = load_predictor_from_flags(pf);
  for (int count : f.counts)
    if (count < 1 || count > 64) fail("--counts: expected GPU counts between 1 and 64, got {}", count);
  const std::optional<double> slo_s = f.slo_ms ? std::optional<double>(*f.slo_ms / 1000) : std::nullopt;
  if (f.slo_ms && !(*f.slo_ms > 0)) fail("--slo-ms: expected a positive latency in milliseconds, got {}", *f.slo_ms);
  Comparison c;
  std::string subject;
  if (f.trace.empty()) {
    c = compare_request(*p.predictor, r.model, r.request, gpus, f.counts, carbon, slo_s);
    subject = fmt::format("{}, batch {}, prompt {}, gen {}, {} ({})", r.model.id, r.request.batch,
                          r.request.prompt_tokens, r.request.gen_tokens, r.request.precision.to_string(),
                          r.request.engine);
  } else {
    const RequestLog log = read_trace(f);
    c = compare_log(*p.predictor, r.model, r.request, log, gpus, f.counts, carbon, slo_s, f.grid_ratio);
    subject = fmt::format("{} requests of {} on {}, batch {}, {} ({})", log.requests.size(), log.source, r.model.id,
                          r.request.batch, r.request.precision.to_string(), r.request.engine);
  }
  const std::vector<SweepPoint> sweep = sweep_gpu_counts(*p.predictor, r.model, r.request, r.gpu, f.sweep_batches,
                                                         f.sweep_prompts, f.counts, carbon);
  const std::string unknown_note = unknown_embodied_note(c);
  RunManifest manifest(manifest_in_folder(f.plot));
  const std::string warning =
      write_sweep(sweep, fmt::format("{} on {}, gen {}", r.model.id, r.gpu.id, r.request.gen_tokens), f.plot);
  manifest.commit();
  if (f.format == "json") {
    Json j = {{"subject", subject}, {"predictor", p.predictor->name()}, {"latency", c.latency_meaning},
              {"setups", rows_json(c)}, {"plot_dir", f.plot}};
    if (f.slo_ms) j["slo_ms"] = *f.slo_ms;
    const Json inputs = carbon_inputs_json(example);
    for (const char* key : {"region", "ci_g_per_kwh", "pue", "embodied_basis", "lifetime_years"}) j[key] = inputs[key];
    if (!note.empty()) j["note"] = note;
    if (!unknown_note.empty()) j["embodied_note"] = unknown_note;
    if (!scope_note.empty()) j["scope_note"] = scope_note;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << subject << "; predictor " << p.predictor->name() << "; latency = " << c.latency_meaning << "\n"
              << table(c, f.slo_ms);
    if (c.best)
      std::cout << fmt::format("  * lowest carbon{}: {} x {} ({:.4g} g{})\n",
                               f.slo_ms ? fmt::format(" meeting {} ms", *f.slo_ms) : "", c.rows[*c.best].gpus,
                               c.rows[*c.best].gpu, c.rows[*c.best].total_g(),
                               c.rows[*c.best].embodied_known ? "" : ", operational only");
    else if (f.slo_ms)
      std::cout << fmt::format("  no setup meets {} ms\n", *f.slo_ms);
    std::cout << fmt::format("  grid {:.4g} gCO2e/kWh ({}); PUE {:.3g} ({}); embodied basis {}, lifetime {:.3g} years\n",
                             example.ci_g_per_kwh, example.ci_label, example.pue, example.pue_label,
                             embodied_basis_name(example.embodied.basis), example.lifetime_years);
    if (!note.empty()) std::cout << "  " << note << "\n";
    if (!unknown_note.empty()) std::cout << "  " << unknown_note << "\n";
    std::cout << "  energy scope: " << (cf.scope == "gpu" ? "gpu (GPU board power)" : "node (wall power of the node "
                                        "named in each row, the used GPUs' share)") << "\n";
    if (!scope_note.empty()) std::cout << "  " << scope_note << "\n";
    std::cout << "  plots: " << f.plot << "/co2-per-gpu.png, " << f.plot << "/co2-total.png (GPU counts on "
              << r.gpu.id << ")\n";
  }
  if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "compare", "a request (or --trace log) on every GPU type and count: energy, latency, CO2; the best under --slo-ms");
  auto f = std::make_shared<CompareFlags>();
  auto request_flags = std::make_shared<RequestFlags>();
  auto predictor_flags = std::make_shared<PredictorFlags>();
  auto carbon_flags = std::make_shared<CarbonFlags>();
  add_request_flags(*command, *request_flags);
  add_predictor_flags(*command, *predictor_flags);
  add_carbon_flags(*command, *carbon_flags);
  command->add_option("--gpu-types", f->gpu_types, "GPU types to compare (default: every bundled GPU); --gpu is the "
                                                    "type of the GPU-count plots")
      ->delimiter(',');
  command->add_option("--counts", f->counts, "GPU counts")->delimiter(',')->capture_default_str();
  command->add_option("--slo-ms", f->slo_ms, "latency objective in ms: mark the lowest-carbon setup meeting it");
  command->add_option("--trace", f->trace, "compare on a whole request log instead of one request");
  command->add_option("--slo-ttft-ms", f->slo_ttft_ms, "with --trace: plan capacity (serve-sim) for this P95 time to "
                      "first token");
  command->add_option("--slo-tpot-ms", f->slo_tpot_ms, "with --trace: plan capacity for this P95 time per output token");
  command->add_option("--tp-degrees", f->tp_degrees, "capacity planning: GPUs per replica to try")->delimiter(',')
      ->capture_default_str();
  command->add_option("--max-replicas", f->max_replicas, "capacity planning: most replicas to try")
      ->capture_default_str();
  command->add_flag("--keep-time-outliers", f->keep_time_outliers,
                    "keep requests more than 30 days from the rest of the --trace log (dropped by default)");
  command->add_flag("--quiet", f->quiet, "no progress lines");
  command->add_option("--grid", f->grid_ratio, "token grid ratio for --trace (see llmco2 trace)")->capture_default_str();
  command->add_option("--plot", f->plot, "folder for the plots and their data")->capture_default_str();
  command->add_option("--sweep-batches", f->sweep_batches, "batch sizes of the plots")->delimiter(',')
      ->capture_default_str();
  command->add_option("--sweep-prompts", f->sweep_prompts, "prompt lengths of the plots")->delimiter(',')
      ->capture_default_str();
  command->add_option("--format", f->format, "table or json")->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->callback([=] { run_compare(*f, *request_flags, *predictor_flags, *carbon_flags); });
}

}  // namespace llmco2::cli
