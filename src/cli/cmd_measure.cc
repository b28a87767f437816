// cli/cmd_measure.cc - `llmco2 measure`: a measurement campaign on this machine's NVIDIA GPUs through NVML and a
// runner process (docs/measure.md), by research::measure. Exit code 0 when every configuration was measured, 1 when
// some failed (listed in <out>.failures.csv; re-running retries them), 2 when the campaign cannot start.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {
namespace {

constexpr int kSomeConfigurationsFailed = 1;

}  // namespace

void add_measure_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "measure", "measure the energy of a plan's configurations on this machine's GPUs (NVML + a runner process)");
  auto o = std::make_shared<research::MeasureOptions>();
  auto quiet = std::make_shared<bool>(false);
  command->add_option("--plan", o->plan, "plan CSV (model,gpu,gpus,batch,prompt,gen[,dtype]), as llmco2 sample writes")
      ->required();
  command->add_option("--runner", o->runner, "the runner's command, e.g. 'python3 tools/runners/hf_transformers.py'")
      ->required();
  command->add_option("--out", o->out, "dataset CSV to append the measured rows to (resumes when it exists)")
      ->required();
  command->add_option("--repeats", o->repeats, "measured runs of each configuration (each a prefill and a full run)")
      ->capture_default_str();
  command->add_option("--warmup", o->warmup, "unmeasured runs before them")->capture_default_str();
  command->add_option("--gpus", o->devices, "NVML indices of the GPUs to use (default: 0 .. gpus-1)")->delimiter(',');
  command->add_option("--idle-s", o->idle_s, "seconds of idle power sampling before the campaign")
      ->capture_default_str();
  command->add_option("--timeout-s", o->timeout_s, "longest wait for one answer of the runner")->capture_default_str();
  command->add_option("--source", o->source, "the rows' source id")->capture_default_str();
  command
      ->add_option("--sample-ms", o->sample_interval_ms, "power sampling interval for GPUs without an energy counter")
      ->capture_default_str();
  command->add_option("--nvml", o->nvml_library, "NVML library to load")->capture_default_str();
  command->add_flag("--quiet", *quiet, "no progress line");
  command->callback([=] {
    research::MeasureOptions options = *o;
    options.progress = !*quiet;
    const research::MeasureSummary r = research::measure(options);
    std::string idle;
    for (double w : r.idle_w) idle += fmt::format("{}{:.1f}", idle.empty() ? "" : ", ", w);
    std::cout << fmt::format(
        "measured {} configurations, {} already in {}, {} failed{}; idle power before the "
        "campaign: {} W (not subtracted)\n",
        r.measured, r.already_done, o->out, r.failed,
        r.failed ? " (see " + r.failures + "; run again to retry them)" : "", idle);
    if (r.failed > 0) throw CLI::RuntimeError(kSomeConfigurationsFailed);
  });
}

}  // namespace llmco2::cli
