// cli/cmd_sample.cc - `llmco2 sample`: binds the flags to research::sample (a plan of configurations drawn by focused
// sampling from the Azure traces).
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_sample_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("sample", "draw a plan of configurations from the Azure traces (focused sampling)");
  auto o = std::make_shared<research::SampleOptions>();
  command->add_option("--count", o->count, "configurations to draw")
      ->check(CLI::Range(1L, 10000000L))
      ->capture_default_str();
  command->add_option("--seed", o->seed, "random seed")->capture_default_str();
  command->add_option("--models", o->models, "'paper' (its 17 LLMs), 'all' (the bundled catalog) or ids a,b,c")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--gpus", o->gpus, "GPU ids to draw from")->delimiter(',')->capture_default_str();
  command->add_option("--max-gpus", o->max_gpus, "largest GPU count (counts run from the fewest that fit)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command->add_option("--batch-weights", o->batch_weights, "P(batch = 1, 2, ...)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--int8-share", o->int8_share, "share of configurations with int8 weights and activations")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  command->add_option("--out", o->out, "plan CSV to write")->required();
  command->callback([o] {
    const long written = research::sample(*o);
    std::cerr << fmt::format("wrote {} configurations to {}\n", written, o->out);
  });
}

}  // namespace llmco2::cli
