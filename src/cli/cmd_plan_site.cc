// cli/cmd_plan_site.cc - `llmco2 plan-site`: binds the flags to research::plan_site (the benchmark runs that pin a
// site profile down best within a time budget) and prints the plan.
#include <iostream>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_plan_site_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "plan-site", "the few benchmark runs of one setup that pin a site profile down best (calibrate --site)");
  auto o = std::make_shared<research::SitePlanOptions>();
  command->add_option("--model", o->model, "model id of the catalog (llmco2 models)")->required();
  command->add_option("--gpu", o->gpu, "GPU id of the catalog (llmco2 gpus)")->required();
  command->add_option("--gpus", o->gpus, "GPUs, tensor parallel")->check(CLI::Range(1, 64))->capture_default_str();
  command->add_option("--engine", o->engine, "serving engine (data/engines/engines.json)")->capture_default_str();
  command->add_option("--dtype", o->dtype, "precision (default: the checkpoint's)");
  command->add_option("--minutes", o->minutes, "GPU time the runs may take")->capture_default_str();
  command->add_option("--tool", o->tool,
                      "vllm (vllm bench serve), trtllm (trtllm-bench) or measure (llmco2 measure); default: the "
                      "engine's own benchmark, measure for hf-transformers");
  command->add_option("--name", o->name, "the site: names the result files")->capture_default_str();
  command->add_option("--plan-out", o->plan_out, "with --tool measure: plan CSV to write (default: NAME-plan.csv)");
  command->add_option("--params", o->params, "global parameters (default: data/sim/params.json)");
  command->callback([o] { std::cout << research::plan_site(*o).text; });
}

}  // namespace llmco2::cli
