// cli/cmd_simulate.cc - `llmco2 simulate`: binds the flags to research::simulate (one request through the reference
// simulator) or, with --plan, research::label_plan (a whole plan labelled as NVML would have read it).
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/request_flags.h"
#include "llmco2/research.h"

namespace llmco2::cli {
namespace {

struct SimulateFlags {
  std::string format = "table";
  research::LabelOptions plan;
};

void run_plan(const research::LabelOptions& o) {
  const research::LabelSummary s = research::label_plan(o);
  for (const auto& line : s.rejects) std::cerr << "rejected " << line << "\n";
  std::cerr << fmt::format("wrote {} rows to {} ({} rejected)\n", s.rows_written, o.out, s.rejects.size());
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto* command = app.add_subcommand("simulate", "reference simulator: what an NVML measurement would read");
  auto request = std::make_shared<api::Request>();
  auto f = std::make_shared<SimulateFlags>();
  add_request_flags(*command, *request);
  command->add_option("--format", f->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->add_option("--plan", f->plan.plan, "plan CSV (model,gpu,gpus,batch,prompt,gen[,dtype,engine]) to label");
  command->add_option("--out", f->plan.out, "dataset CSV written by --plan");
  command->add_option("--repeats", f->plan.repeats, "noisy repeats per configuration (mean and spread in the row)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_option("--seed", f->plan.seed, "seed of the noise model")->capture_default_str();
  command->add_option("--params", f->plan.params, "simulator parameters (default: data/sim/params.json)");
  command->callback([=] {
    if (!f->plan.plan.empty()) return run_plan(f->plan);
    const api::Result result = research::simulate(*request, f->plan.params);
    print_warnings(result.warnings);
    std::cout << (f->format == "json" ? result.json.dump(2) + "\n" : result.text);
  });
}

}  // namespace llmco2::cli
