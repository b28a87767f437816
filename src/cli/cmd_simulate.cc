// cli/cmd_simulate.cc - `llmco2 simulate`: the reference simulator for one configuration or a whole plan.
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/request_flags.h"
#include "core/error.h"
#include "core/output_manifest.h"
#include "core/progress.h"
#include "sim/label.h"

namespace llmco2::cli {
namespace {

struct SimulateOptions {
  std::string format = "table";
  std::string plan, out, params;
  int repeats = 1;
  uint64_t seed = 1;
};


void print_one(const ResolvedRequest& r, const SimResult& s, const std::string& format) {
  if (format == "json") {
    Json j = request_json(r);
    j.update(api::energy_scope_json(EnergyScope{}));  // the simulator meters the GPU boards, as NVML does
    j["energy_j"] = quantity_json(PhaseValues{s.energy_j.prefill, s.energy_j.decode, s.energy_j.total()});
    j["latency_s"] = quantity_json(PhaseValues{s.latency_s.prefill, s.latency_s.decode, s.latency_s.total()});
    j["mean_power_w_per_gpu"] = s.mean_power_w;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << request_line(r) << "\n";
  std::cout << fmt::format("  {:<8} {:>12} {:>12}\n", "phase", "energy_j", "latency_s");
  std::cout << fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "prefill", s.energy_j.prefill, s.latency_s.prefill);
  std::cout << fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "decode", s.energy_j.decode, s.latency_s.decode);
  std::cout << fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "total", s.energy_j.total(), s.latency_s.total());
  std::cout << fmt::format("  mean power {:.0f} W per GPU (idle {:.0f} W, TDP {:.0f} W)\n", s.mean_power_w, r.gpu.idle_w,
                           r.gpu.tdp_w);
}

void run_plan(const SimulateOptions& o, const SimParams& params) {
  if (o.out.empty()) fail("simulate --plan needs --out FILE for the labelled dataset");
  PlanReadResult plan = read_plan(o.plan);
  LabelledPlan labelled = label_plan(plan.rows, params, {o.repeats, o.seed, o.plan, plan.rows.size() >= 5000});
  std::vector<RowReject> rejects = std::move(plan.rejects);
  rejects.insert(rejects.end(), labelled.rejects.begin(), labelled.rejects.end());
  RunManifest manifest(manifest_beside(o.out));
  write_dataset(o.out, labelled.rows);
  manifest.commit();
  for (const auto& r : rejects) std::cerr << "rejected " << r.message() << "\n";
  std::cerr << fmt::format("wrote {} rows to {} ({} rejected)\n", labelled.rows.size(), o.out, rejects.size());
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto* command = app.add_subcommand("simulate", "reference simulator: what an NVML measurement would read");
  auto flags = std::make_shared<api::Request>();
  auto o = std::make_shared<SimulateOptions>();
  add_request_flags(*command, *flags);
  command->add_option("--format", o->format, "table or json")->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->add_option("--plan", o->plan, "plan CSV (model,gpu,gpus,batch,prompt,gen[,dtype,engine]) to label");
  command->add_option("--out", o->out, "dataset CSV written by --plan");
  command->add_option("--repeats", o->repeats, "noisy repeats per configuration (mean and spread in the row)")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  command->add_option("--seed", o->seed, "seed of the noise model")->capture_default_str();
  command->add_option("--params", o->params, "simulator parameters (default: data/sim/params.json)");
  command->callback([=] {
    const SimParams params = load_sim_params_or_default(o->params);
    if (!o->plan.empty()) {
      run_plan(*o, params);
      return;
    }
    const ResolvedRequest r = resolve_request(*flags);
    SimScenario scenario;
    scenario.power = r.power;
    print_one(r, simulate(r.model, r.gpu, r.request, scenario, params), o->format);
  });
}

}  // namespace llmco2::cli
