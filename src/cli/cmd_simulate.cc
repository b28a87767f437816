// cli/cmd_simulate.cc - `llmco2 simulate`: the reference simulator for one configuration or a whole plan.
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/request_flags.h"
#include "core/error.h"
#include "core/progress.h"
#include "sim/label.h"

namespace llmco2::cli {
namespace {

struct SimulateOptions {
  std::string format = "text";
  std::string plan, out, params;
  int repeats = 1;
  uint64_t seed = 1;
};

Json phase_json(double prefill, double decode) {
  return {{"prefill", prefill}, {"decode", decode}, {"total", prefill + decode}};
}

void print_one(const ResolvedRequest& r, const SimResult& s, const std::string& format) {
  if (format == "json") {
    Json j = {{"model", r.model.id}, {"gpu", r.gpu.id}, {"gpus", r.request.gpus}, {"batch", r.request.batch},
              {"prompt_tokens", r.request.prompt_tokens}, {"gen_tokens", r.request.gen_tokens},
              {"dtype", r.request.precision.to_string()}, {"engine", r.request.engine},
              {"energy_j", phase_json(s.energy_j.prefill, s.energy_j.decode)},
              {"latency_s", phase_json(s.latency_s.prefill, s.latency_s.decode)},
              {"mean_power_w_per_gpu", s.mean_power_w}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("{} on {} x {} ({}), batch {}, prompt {}, gen {}, {}\n", r.model.id, r.request.gpus, r.gpu.id,
                           r.request.engine, r.request.batch, r.request.prompt_tokens, r.request.gen_tokens,
                           r.request.precision.to_string());
  std::cout << fmt::format("  {:<8} {:>12} {:>12}\n", "phase", "energy_j", "latency_s");
  std::cout << fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "prefill", s.energy_j.prefill, s.latency_s.prefill);
  std::cout << fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "decode", s.energy_j.decode, s.latency_s.decode);
  std::cout << fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "total", s.energy_j.total(), s.latency_s.total());
  std::cout << fmt::format("  mean power {:.0f} W per GPU (idle {:.0f} W, TDP {:.0f} W)\n", s.mean_power_w, r.gpu.idle_w,
                           r.gpu.tdp_w);
}

// Mean and relative spread of `repeats` noisy runs.
DatasetRow repeated_row(const SimConfig& config, const SimResult& clean, const SimParams& params, int repeats,
                        uint64_t seed, std::string ref) {
  if (repeats <= 1) return simulated_row(config, clean, std::move(ref));
  std::vector<SimResult> runs;
  SimResult mean;
  for (int i = 0; i < repeats; ++i) {
    runs.push_back(add_noise(clean, params, seed * 1000003u + static_cast<uint64_t>(i)));
    mean.energy_j.prefill += runs.back().energy_j.prefill / repeats;
    mean.energy_j.decode += runs.back().energy_j.decode / repeats;
    mean.latency_s.prefill += runs.back().latency_s.prefill / repeats;
    mean.latency_s.decode += runs.back().latency_s.decode / repeats;
  }
  double energy_var = 0, latency_var = 0;
  for (const auto& run : runs) {
    energy_var += std::pow(run.energy_j.total() - mean.energy_j.total(), 2) / (repeats - 1);
    latency_var += std::pow(run.latency_s.total() - mean.latency_s.total(), 2) / (repeats - 1);
  }
  DatasetRow row = simulated_row(config, mean, std::move(ref));
  row.repeats = repeats;
  row.energy_spread = std::sqrt(energy_var) / mean.energy_j.total();
  row.latency_spread = std::sqrt(latency_var) / mean.latency_s.total();
  return row;
}

void run_plan(const SimulateOptions& o, const SimParams& params) {
  if (o.out.empty()) fail("simulate --plan needs --out FILE for the labelled dataset");
  PlanReadResult plan = read_plan(o.plan);
  CatalogCache catalogs;
  std::vector<DatasetRow> rows;
  std::vector<RowReject> rejects = std::move(plan.rejects);
  Progress progress("simulate", static_cast<long>(plan.rows.size()), plan.rows.size() >= 5000);
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    const PlanRow& p = plan.rows[i];
    try {
      const SimConfig config = config_for_plan(p, catalogs);
      const SimResult clean = simulate(*config.model, *config.gpu, config.request, config.scenario, params);
      rows.push_back(repeated_row(config, clean, params, o.repeats, o.seed + i,
                                  fmt::format("{}:{}", o.plan, p.line)));
    } catch (const Error& e) {
      rejects.push_back({o.plan, p.line, e.what()});
    }
    progress.update(static_cast<long>(i + 1));
  }
  progress.finish();
  write_dataset(o.out, rows);
  for (const auto& r : rejects) std::cerr << "rejected " << r.message() << "\n";
  std::cerr << fmt::format("wrote {} rows to {} ({} rejected)\n", rows.size(), o.out, rejects.size());
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto* command = app.add_subcommand("simulate", "reference simulator: what an NVML measurement would read");
  auto flags = std::make_shared<RequestFlags>();
  auto o = std::make_shared<SimulateOptions>();
  add_request_flags(*command, *flags);
  command->add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command->add_option("--plan", o->plan, "plan CSV (model,gpu,gpus,batch,prompt,gen[,dtype,engine]) to label");
  command->add_option("--out", o->out, "dataset CSV written by --plan");
  command->add_option("--repeats", o->repeats, "noisy repeats per configuration (mean and spread in the row)")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  command->add_option("--seed", o->seed, "seed of the noise model")->capture_default_str();
  command->add_option("--params", o->params, "simulator parameters (default: data/sim/params.json)");
  command->callback([=] {
    const SimParams params = load_sim_params(o->params.empty() ? default_sim_params_path() : std::filesystem::path(o->params));
    if (!o->plan.empty()) {
      run_plan(*o, params);
      return;
    }
    const ResolvedRequest r = resolve_request(*flags);
    print_one(r, simulate(r.model, r.gpu, r.request, SimScenario{}, params), o->format);
  });
}

}  // namespace llmco2::cli
