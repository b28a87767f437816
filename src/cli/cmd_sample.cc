// cli/cmd_sample.cc - `llmco2 sample`: a plan of configurations drawn by focused sampling from the Azure traces.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "sampling/focused_sampling.h"

namespace llmco2::cli {
namespace {

struct SampleOptions {
  long count = 1000;
  uint64_t seed = 1;
  std::vector<std::string> models = {"paper"};
  std::vector<std::string> gpus = {"l4", "a100-80gb-sxm", "h100-sxm"};
  int max_gpus = 4;
  std::vector<double> batch_weights = {0.4, 0.3, 0.15, 0.15};
  double int8_share = 0.0;
  std::string out;
};

std::vector<std::string> model_list(const std::vector<std::string>& spec) {
  if (spec.size() == 1 && spec[0] == "paper") return paper_models();
  if (spec.size() == 1 && spec[0] == "all") return bundled_model_ids();
  return spec;
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto* command = app.add_subcommand("sample", "draw a plan of configurations from the Azure traces (focused sampling)");
  auto o = std::make_shared<SampleOptions>();
  command->add_option("--count", o->count, "configurations to draw")->check(CLI::Range(1L, 10000000L))
      ->capture_default_str();
  command->add_option("--seed", o->seed, "random seed")->capture_default_str();
  command->add_option("--models", o->models, "'paper' (its 17 LLMs), 'all' (the bundled catalog) or ids a,b,c")
      ->delimiter(',')->capture_default_str();
  command->add_option("--gpus", o->gpus, "GPU ids to draw from")->delimiter(',')->capture_default_str();
  command->add_option("--max-gpus", o->max_gpus, "largest GPU count (counts run from the fewest that fit)")
      ->check(CLI::Range(1, 64))->capture_default_str();
  command->add_option("--batch-weights", o->batch_weights, "P(batch = 1, 2, ...)")->delimiter(',')
      ->capture_default_str();
  command->add_option("--int8-share", o->int8_share, "share of configurations with int8 weights and activations")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  command->add_option("--out", o->out, "plan CSV to write")->required();
  command->callback([o] {
    SamplingSpace space;
    space.models = model_list(o->models);
    space.gpus = o->gpus;
    space.max_gpus = o->max_gpus;
    space.batch_weights = o->batch_weights;
    space.int8_share = o->int8_share;
    space.requests = bundled_azure_requests();
    const auto plan = sample_plan(space, o->count, o->seed);
    write_plan(o->out, plan);
    std::cerr << fmt::format("wrote {} configurations to {}\n", plan.size(), o->out);
  });
}

}  // namespace llmco2::cli
