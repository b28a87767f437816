// cli/cmd_compare.cc - `llmco2 compare`: one request (or a request log with --trace) on every GPU type and count
// (1, 2, 4, 8 where the model fits): energy, latency, operational and embodied CO2, CO2 per GPU; --slo-ms marks the
// lowest-carbon setup meeting the latency objective; plots of CO2 against GPU count (the paper's figures 12-14).
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/predictor_flags.h"
#include "cli/request_flags.h"
#include "llmco2/error.h"

namespace llmco2::cli {
namespace {

// "GPU=USD" of --usd-per-gpu-hour.
std::pair<std::string, double> gpu_price(const std::string& text) {
  const size_t eq = text.find('=');
  double usd = -1;
  if (eq != std::string::npos && eq > 0) {
    try {
      size_t used = 0;
      usd = std::stod(text.substr(eq + 1), &used);
      if (used != text.size() - eq - 1) usd = -1;
    } catch (const std::exception&) {
      usd = -1;
    }
  }
  if (!(usd >= 0) || !std::isfinite(usd))
    throw Error(fmt::format("--usd-per-gpu-hour '{}': expected GPU=USD, e.g. h100-sxm=2.5", text));
  return {text.substr(0, eq), usd};
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "compare",
      "a request (or --trace log) on every GPU type and count: energy, latency, CO2; the best under --slo-ms");
  auto f = std::make_shared<api::CompareOptions>();
  auto request = std::make_shared<api::Request>();
  auto settings = std::make_shared<api::Settings>();
  auto format = std::make_shared<std::string>("table");
  auto quiet = std::make_shared<bool>(false);
  add_request_flags(*command, *request);
  add_predictor_flags(*command, *request, *settings);
  add_carbon_flags(*command, *request);
  command
      ->add_option("--gpu-types", f->gpu_types,
                   "GPU types to compare (default: every bundled GPU); --gpu is the "
                   "type of the GPU-count plots")
      ->delimiter(',');
  command->add_option("--counts", f->counts, "GPU counts")->delimiter(',')->capture_default_str();
  command->add_option("--slo-ms", f->slo_ms, "latency objective in ms: mark the lowest-carbon setup meeting it");
  command->add_option("--trace", f->trace, "compare on a whole request log instead of one request");
  command->add_option("--slo-ttft-ms", f->slo_ttft_ms,
                      "with --trace: plan capacity (serve-sim) for this P95 time to "
                      "first token");
  command->add_option("--slo-tpot-ms", f->slo_tpot_ms,
                      "with --trace: plan capacity for this P95 time per output token");
  command->add_option("--concurrency,--max-concurrency", f->concurrency,
                      "capacity planning: replay the log as a closed loop of this many clients (as serve-sim does); "
                      "0: at its logged times");
  command->add_option("--prefix-share", f->prefix_share,
                      "capacity planning: share of every prompt that is one prompt all requests share (serve-sim's)");
  command->add_flag("!--no-prefix-caching", f->prefix_caching, "capacity planning: prefix caching off");
  command->add_option("--router", f->router,
                      "capacity planning: round-robin, least-loaded or session (serve-sim's; default round-robin)");
  command->add_option("--disaggregate", f->disaggregate,
                      "capacity planning: also search disaggregated deployments, the fewest multiples of P:D prefill "
                      "and decode replicas (serve-sim's), beside the co-located ones");
  command->add_option("--cloud-prices", f->cloud_prices,
                      "capacity planning: price GPU-hours at this cloud's on-demand list prices (aws, gcp or azure; "
                      "data/prices, each with its date and source) where --usd-per-gpu-hour names none");
  command->add_option("--power-budget-w", f->power_budget_w,
                      "capacity planning: provisioned power at the wall a deployment must stay within (whole nodes at "
                      "their design power; with --scope gpu, the GPUs' TDP)");
  auto prices = std::make_shared<std::vector<std::string>>();
  command
      ->add_option("--usd-per-gpu-hour", *prices,
                   "capacity planning: your price of a GPU-hour per GPU type, e.g. h100-sxm=2.5,a100-80gb-sxm=1.4")
      ->delimiter(',');
  command->add_option("--usd-per-kwh", f->usd_per_kwh,
                      "capacity planning: your price of electricity at the wall (the GPUs' energy x PUE)");
  command->add_option("--rank-by", f->rank_by, "capacity planning: energy, co2, usd or gpu-hours")
      ->capture_default_str();
  command->add_option("--tp-degrees", f->tp_degrees, "capacity planning: GPUs per replica to try")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--max-replicas", f->max_replicas, "capacity planning: most replicas to try")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command->add_flag("--keep-time-outliers", f->keep_time_outliers,
                    "keep requests more than 30 days from the rest of the --trace log (dropped by default)");
  command->add_flag("--quiet", *quiet, "no progress lines");
  command
      ->add_option("--threads", f->threads,
                   "with --trace: workers reading the log and scoring the setups (0: every "
                   "core; the figures do not depend on it)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  command->add_option("--grid", f->grid_ratio, "token grid ratio for --trace (see llmco2 trace)")
      ->capture_default_str();
  command->add_option("--plot", f->plot_dir, "folder for the plots and their data (none when not given)");
  command->add_option("--sweep-batches", f->sweep_batches, "batch sizes of the plots")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--sweep-prompts", f->sweep_prompts, "prompt lengths of the plots")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--format", *format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->callback([=] {
    if (request->gpus != 1)
      throw Error(fmt::format("--gpus {}: compare tries every GPU count of --counts (give --counts {})", request->gpus,
                              request->gpus));
    api::CompareOptions options = *f;
    options.progress = !*quiet;
    for (const std::string& price : *prices)
      if (!options.usd_per_gpu_hour.insert(gpu_price(price)).second)
        throw Error(fmt::format("--usd-per-gpu-hour '{}': that GPU is priced twice", price));
    const api::Result result = api::Session(*settings).compare(*request, options);
    print_warnings(result.warnings);
    std::cout << (*format == "json" ? result.json.dump(2) + "\n" : result.text);
  });
}

}  // namespace llmco2::cli
