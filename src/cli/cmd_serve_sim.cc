// cli/cmd_serve_sim.cc - `llmco2 serve-sim LOG` (or `--num-prompts N`): binds the flags to the API's
// ServeSimOptions and prints Session::serve_sim's answer (api/serve_sim.cc does the work).
#include <iostream>

#include "cli/carbon_flags.h"
#include "cli/commands.h"
#include "cli/request_flags.h"
#include "llmco2/api.h"

namespace llmco2::cli {
namespace {

struct ServeFlags {
  api::ServeSimOptions options;
  std::string params, site, format = "table";
  bool quiet = false;
};

void run_serve_sim(const ServeFlags& f, const api::Request& request) {
  api::ServeSimOptions options = f.options;
  options.progress = !f.quiet;
  api::Settings settings;
  settings.params = f.params;
  settings.site = f.site;
  const api::Result result = api::Session(settings).serve_sim(request, options);
  if (f.format == "json") std::cout << result.json.dump(2) << "\n";
  else std::cout << result.text;
  for (const auto& warning : result.warnings) std::cerr << "warning: " << warning << "\n";
}

}  // namespace

void add_serve_sim_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "serve-sim",
      "replay a request log through a deployment (replicas of a continuous-batching engine) in virtual "
      "time: latency percentiles, throughput, energy with idle, CO2");
  auto f = std::make_shared<ServeFlags>();
  auto rf = std::make_shared<api::Request>();
  command->add_option("file", f->options.log,
                      "request log: TIMESTAMP,ContextTokens,GeneratedTokens (Azure) or a dataset CSV; or none with "
                      "--num-prompts");
  command->add_option("--num-prompts", f->options.num_prompts,
                      "instead of a log, vllm bench serve's random dataset: this many requests, all sent at time 0");
  command->add_option("--random-input-len", f->options.input_len, "with --num-prompts: prompt tokens per request")
      ->capture_default_str();
  command->add_option("--random-output-len", f->options.output_len, "with --num-prompts: generated tokens per request")
      ->capture_default_str();
  command
      ->add_option("--random-range-ratio", f->options.range_ratio,
                   "with --num-prompts: lengths drawn uniformly within this ratio of the two above")
      ->capture_default_str();
  command
      ->add_option("--request-rate", f->options.request_rate,
                   "with --num-prompts: requests per second, a Poisson process (vllm bench serve --request-rate); 0: "
                   "all at time 0")
      ->capture_default_str();
  command->add_option("--seed", f->options.seed, "with --random-range-ratio or --request-rate: the draws' seed")
      ->capture_default_str();
  command
      ->add_option("--concurrency,--max-concurrency", f->options.concurrency,
                   "a closed loop of this many clients (vllm bench serve --max-concurrency): each sends its next "
                   "request when its previous one ends; 0: open loop (the log's times)")
      ->capture_default_str();
  add_request_flags(*command, *rf, false);
  add_carbon_flags(*command, *rf);
  command->add_option("--replicas", f->options.replicas, "data-parallel replicas, each on --gpus GPUs")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command
      ->add_option("--router", f->options.router,
                   "round-robin, least-loaded or session (a conversation's turns to the replica holding its prefix)")
      ->capture_default_str();
  command->add_option("--max-num-seqs", f->options.max_num_seqs,
                      "running requests per replica (default: vLLM's for the GPU)");
  command->add_option("--max-batched-tokens", f->options.max_batched_tokens,
                      "tokens per iteration (default: vLLM serve's for the GPU)");
  command->add_option("--block-size", f->options.block_size, "tokens per KV-cache block")->capture_default_str();
  command->add_option("--gpu-memory-utilization", f->options.gpu_memory_utilization,
                      "share of GPU memory for weights + KV cache (default: the engine's, vLLM 0.9)");
  command->add_option("--rate-scale", f->options.rate_scale, "arrivals this many times faster than logged")
      ->capture_default_str();
  command->add_option("--duration", f->options.duration_s,
                      "seconds of the log to replay (from its first arrival; 0: all)");
  command->add_option("--slo-ttft-ms", f->options.slo_ttft_ms, "time-to-first-token objective for goodput");
  command->add_option("--slo-tpot-ms", f->options.slo_tpot_ms, "time-per-output-token objective for goodput");
  command->add_option("--requests-out", f->options.requests_csv,
                      "per-request CSV (written atomically when the run ends)");
  command->add_option("--params", f->params, "simulator parameters (default: data/sim/params.json)");
  command->add_option("--site", f->site, "a site profile (llmco2 calibrate --site) correcting the parameters");
  command->add_option("--plot", f->options.plot_dir,
                      "folder for timeline.png (power, batch, queue, KV use), latency-cdf.png and "
                      "timeline.csv");
  command->add_option("--bin-s", f->options.bin_s, "seconds per point of the timeline")->capture_default_str();
  command->add_option("--ci-profile", f->options.ci_profile,
                      "carbon intensity over time: CSV of timestamp,g_per_kwh (each "
                      "value holds until the next); replaces the region's annual mean");
  command->add_flag("--attribute-idle", f->options.attribute_idle,
                    "give each idle gap's energy to the requests of the "
                    "iteration that ends it (per-request energies then add up to nearly the total)");
  command->add_option("--format", f->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->add_flag("--keep-time-outliers", f->options.keep_time_outliers,
                    "replay arrivals more than 30 days after the previous one (refused by default)");
  command
      ->add_option("--prefix-share", f->options.prefix_share,
                   "share of every prompt that is one prompt all requests share (a system prompt), for a log "
                   "without SessionId/SharedPrefixTokens columns")
      ->check(CLI::Range(0.0, 0.99));
  command->add_flag("!--no-prefix-caching", f->options.prefix_caching,
                    "turn automatic prefix caching off (vLLM --no-enable-prefix-caching)");
  command->add_option("--disaggregate", f->options.disaggregate,
                      "P:D: disaggregated prefill and decode, P prefill replicas (--gpu, --gpus) and D decode replicas "
                      "(--decode-gpu, --decode-gpus), each request's KV cache moved between them");
  command->add_option("--decode-gpu", f->options.decode_gpu,
                      "with --disaggregate: the decode pool's GPU (default --gpu)");
  command->add_option("--decode-gpus", f->options.decode_gpus,
                      "with --disaggregate: GPUs per decode replica, tensor parallel (default --gpus)");
  command->add_option("--kv-link-gbps", f->options.kv_link_gbps,
                      "with --disaggregate: the link between the pools in Gb/s per GPU and direction (default: the "
                      "node catalog's NVLink within one domain, else the nodes' network)");
  command->add_flag("--quiet", f->quiet, "no progress lines");
  command->callback([=] { run_serve_sim(*f, *rf); });
}

}  // namespace llmco2::cli
