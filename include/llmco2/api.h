// llmco2/api.h - the one public entry to llmco2's core: predict one request or many, compare GPU setups, score a
// request log, and the catalogs. The CLI's predict, compare, trace and catalog commands, the HTTP server and the
// Python bindings all call this and nothing else of the core, so their answers cannot drift apart.
//
// One request type (Request), one result type (Result), one error type (llmco2::Error, llmco2/error.h). A Session
// loads the predictors and catalogs once and answers many calls; its methods are const and safe to call from many
// threads at once.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "llmco2/error.h"

namespace llmco2::api {

using Json = nlohmann::json;

// One inference request on one setup, and how its carbon is counted. The defaults are the CLI's.
struct Request {
  // What runs.
  std::string model = "llama-3.1-8b";  // bundled id or its HF repo id; where paths are allowed, a config.json or folder
  std::optional<Json> model_config;    // a config.json's content, used instead of the catalog (`model` names it)
  std::string gpu = "h100-sxm";        // GPU id, alias or nvidia-smi name; where paths are allowed, a GPU JSON file
  int gpus = 1;                        // tensor parallelism
  int pipeline_parallel = 1;           // pipeline stages, each of `gpus` GPUs (vLLM --pipeline-parallel-size)
  long batch = 1;                      // sequences per batch
  long prompt_tokens = 1024;           // per sequence
  long gen_tokens = 128;               // per sequence
  std::string dtype;                   // bf16, fp8, w8a16kv16, ...; empty: the config's torch_dtype
  bool flash_attention = true;
  std::string engine = "vllm";
  bool expert_parallel = false;  // MoE over several GPUs: whole experts per GPU (vLLM --enable-expert-parallel)
  double power_cap_w = 0;        // GPU power limit; 0: the TDP
  double clock_mhz = 0;          // locked SM clock (nvidia-smi -lgc); 0: not locked
  // Speculative decoding (data/engines/speculation.json): eagle, eagle3, mtp, ngram, or draft:MODEL (a draft model by
  // id); empty: off. spec_tokens: draft tokens per step (0: the method's default); spec_acceptance: the per-token
  // acceptance rate (absent: the method's measured acceptance; required for a draft model).
  std::string spec;
  int spec_tokens = 0;
  std::optional<double> spec_acceptance;
  // How its carbon is counted.
  std::string scope = "node";          // node: the node's wall energy, the GPUs' share; gpu: the GPU boards' energy
  std::string node;                    // node id (a node JSON file where paths are allowed); empty: the GPU's default
  std::string region;                  // country code, cloud region or WORLD; empty: WORLD unless ci_g_per_kwh is set
  std::optional<double> ci_g_per_kwh;  // grid intensity, overrides the region's
  std::string pue;                     // a number or a provider id; empty: the region's provider, else 1.0
  std::optional<double> lifetime_years;
  std::string embodied_basis = "llmcarbon";  // llmcarbon, or vendor where a GPU file has a product carbon footprint
  std::optional<double> embodied_kg;         // per GPU, the user's own figure
  // Which predictor answers. The default is the calibrated simulator: on sources held out of every fit it is closer
  // to the measurements than the GNN (docs/predictor.md, "Which predictor is the default").
  std::string predictor = "sim";  // sim, llmco2, nnlqp, deepen or llmcarbon (others through Settings::model_file)
};

// A request from its JSON form, the one the HTTP API and the Python bindings take: the keys are the CLI's flags
// (model, gpu, gpus, pp, batch, prompt, gen, dtype, flash, engine, expert_parallel, power_cap, clock_mhz, spec,
// spec_tokens, spec_acceptance, scope, node, region, ci, pue, lifetime, embodied_basis, embodied_kg, predictor), plus
// model_config (an object). Missing keys keep
// `defaults`' values. Throws Error naming `where` and the key for an unknown key or a value of the wrong type. A
// caller that took its own keys out of `json` first (a call's options) names them in `call_keys`: an unknown key's
// "did you mean" then draws on both sets.
Request request_from_json(const Json& json, const std::string& where = "request", const Request& defaults = {},
                          const std::vector<std::string>& call_keys = {});
// Throws Error "<where>: unknown key '<key>' (did you mean <the nearest of keys>? the keys are <keys>)", the message
// request_from_json gives, for a caller's own set of keys.
[[noreturn]] void fail_unknown_key(const std::string& where, const std::string& key,
                                   const std::vector<std::string>& keys);
// JSON text as the API reads every file: at most 64 levels deep, numbers within a double's range. Throws Error
// "<source>: malformed JSON at byte N" (or naming the depth or the number) for anything else.
Json parse_json(std::string_view text, const std::string& source);

// The keys request_from_json accepts, in the order above.
const std::vector<std::string>& request_keys();
// The names Request::predictor may take, and the engines Request::engine may name.
const std::vector<std::string>& predictor_names();
const std::vector<std::string>& engine_names();
// Whether answering with the predictor `name` loads libxgboost with dlopen (DeepEn's forests), which a statically
// linked program cannot do.
bool predictor_loads_library(std::string_view name);

// The key figures of a prediction, for code that wants numbers rather than the JSON document.
struct Figures {
  double energy_j = 0, energy_prefill_j = 0, energy_decode_j = 0;  // in the request's energy scope
  double latency_s = 0, ttft_s = 0;
  std::optional<double> tpot_s;  // absent with one generated token
  double co2_operational_g = 0, co2_total_g = 0;
  std::optional<double> co2_embodied_g;  // absent when the GPU has no embodied figure
};

// What every call returns: the CLI's --format json document, the CLI's table text, and warnings (plots that could
// not be drawn, notes on the request) the CLI prints on stderr.
struct Result {
  Json json;
  std::string text;
  std::vector<std::string> warnings;
  Figures figures;  // predict only
};

// Comparing GPU setups (`llmco2 compare`). Plots and their data are written only when plot_dir is set.
struct CompareOptions {
  std::vector<std::string> gpu_types;  // empty: every bundled GPU the embodied basis can price
  std::vector<int> counts = {1, 2, 4, 8};
  std::optional<double> slo_ms;             // latency objective: marks the lowest-carbon setup meeting it
  std::string trace;                        // a request log: compare on the whole log instead of one request
  double slo_ttft_ms = 0, slo_tpot_ms = 0;  // with trace: capacity planning by the serving simulation
  std::vector<int> tp_degrees = {1, 2, 4, 8};
  int max_replicas = 64;
  long concurrency = 0;  // capacity planning: the log as a closed loop of this many clients (serve-sim's)
  // Capacity planning: serve-sim's prefix caching (on; the log's sessions, or a shared prompt share) and router.
  bool prefix_caching = true;
  double prefix_share = 0;
  std::string router = "round-robin";
  // Capacity planning: "P:D" also searches disaggregated deployments, the fewest multiples of P prefill and D decode
  // replicas of each GPU type and degree, beside the co-located ones (serve-sim's --disaggregate); "": co-located only.
  std::string disaggregate;
  // Capacity planning: a provisioned-power budget at the wall (whole nodes at their design power; 0: none), prices
  // (the user's per GPU-hour of each GPU type, and per kWh at the wall), and the figure the plan ranks by: energy,
  // co2, usd or gpu-hours.
  double power_budget_w = 0;
  std::map<std::string, double> usd_per_gpu_hour;
  double usd_per_kwh = 0;
  // A cloud of the bundled price table (data/prices: aws, gcp, azure): its on-demand price of each planned GPU type
  // that usd_per_gpu_hour leaves unpriced; "": none.
  std::string cloud_prices;
  std::string rank_by = "energy";
  double grid_ratio = 1.1;
  std::string plot_dir;
  std::vector<long> sweep_batches = {1, 4, 16}, sweep_prompts = {64, 1024};
  bool progress = false, keep_time_outliers = false;
  int threads = 0;  // workers reading the trace and scoring the setups; 0: every core (results do not depend on it)
};

// The comparison options of a JSON object (the HTTP API's and the Python bindings' form): gpu_types (at most 64
// strings), counts (at most 16, each 1 to 1024), slo_ms (positive); other keys are the caller's. Never a plot or a
// trace. Throws Error naming `where` and the key.
CompareOptions compare_options_from_json(const Json& json, const std::string& where);

// Scoring a request log (`llmco2 trace`). The report folder and the per-request CSV are written only when set.
struct TraceOptions {
  std::string report_dir, by_request_csv;
  double grid_ratio = 1.1;  // token grid ratio of the shape table (1: every distinct shape exactly)
  double bin_s = 0;         // timeline bin; 0: a minute, an hour for logs over 6 h
  bool progress = false, keep_time_outliers = false;
  int threads = 0;  // workers reading a log file; 0: every core (results do not depend on it)
};

// A request log held in memory (a partition of a larger log, a DataFrame's columns): one entry per request.
struct LogColumns {
  std::vector<long> prompt_tokens, gen_tokens;
  std::vector<double> time_s;      // arrival, seconds since 1970 (UTC); empty when the log has no timestamps
  std::string source = "columns";  // names the log in messages and reports
};

// Replaying a request log through a deployment in virtual time (`llmco2 serve-sim`): replicas of a continuous-
// batching engine, each on the request's GPU type and count; the log gives the tokens and arrival times. The
// per-request CSV and the plots are written only when their paths are set.
struct ServeSimOptions {
  std::string log;  // Azure's TIMESTAMP,ContextTokens,GeneratedTokens or a dataset CSV
  // Instead of a log, `vllm bench serve`'s random dataset: num_prompts requests of input_len prompt and output_len
  // generated tokens, all sent at time 0; range_ratio r draws each length uniformly from the integers in
  // [L (1 - r), L (1 + r)] (seeded by `seed`; llmco2's draws, not numpy's).
  long num_prompts = 0, input_len = 1024, output_len = 128;
  double range_ratio = 0;
  unsigned seed = 0;
  // > 0: the generated requests arrive as a Poisson process of this many requests per second (`vllm bench serve
  // --request-rate`: exponential gaps, seeded by `seed`); 0: all at time 0.
  double request_rate = 0;
  // > 0: a closed loop of this many clients (`vllm bench serve --max-concurrency`): each sends its next request when
  // its previous one ends (not before the request's logged time); latencies count from the sending. 0: open loop.
  long concurrency = 0;
  int replicas = 1;
  std::string router = "round-robin";             // or least-loaded, or session (prefix-aware)
  long max_num_seqs = 0, max_batched_tokens = 0;  // per replica; 0: the engine's defaults for the GPU
  long block_size = 16;                           // tokens per KV-cache block
  double gpu_memory_utilization = 0;              // share for weights + KV cache; 0: the engine's
  double rate_scale = 1, duration_s = 0;          // arrivals this many times faster; seconds replayed (0: all)
  double slo_ttft_ms = 0, slo_tpot_ms = 0;        // goodput objectives; 0: none
  std::string ci_profile;                         // CSV of timestamp,g_per_kwh replacing the region's mean
  bool attribute_idle = false, keep_time_outliers = false, progress = false;
  std::string requests_csv;  // one row per request, written atomically at the end
  std::string plot_dir;      // timeline.png, latency-cdf.png, timeline.csv
  double bin_s = 60;         // seconds per point of the timeline
  // Automatic prefix caching (on, as in vLLM v1 and SGLang): a log's SessionId and SharedPrefixTokens columns say
  // what each request shares with its conversation's earlier turns (CachedTokens: what the API reported cached);
  // without them, prefix_share states the share of every prompt that is one prompt all requests share.
  bool prefix_caching = true;
  double prefix_share = 0;
  // Disaggregated prefill and decode: "P:D" prefill and decode replicas (`replicas` stays 1); the request's gpu and
  // gpus prefill, decode_gpu and decode_gpus decode (empty / 0: the same). Each request's KV cache crosses the link
  // between the pools: the node catalog's (one NVLink domain or node, else the nodes' network), or kv_link_gbps
  // (Gb/s per GPU and direction) where given. "": co-located.
  std::string disaggregate;
  std::string decode_gpu;
  int decode_gpus = 0;
  double kv_link_gbps = 0;
};

// Stopping long calls from another thread (the Python bindings on Ctrl-C): while the request is set, the calls in
// progress in this process (predict_many, compare, score_trace, score_requests, serve_sim; research.h's sample,
// label_plan, calibrate and serve_validate) stop at their next step and throw Error "interrupted"; clear it before
// the next call.
void request_interrupt(bool on);

// Where the predictors come from and what a session may read.
struct Settings {
  std::string model_file;   // a model file written by llmco2 train, instead of the bundled predictor
  std::string params;       // simulator parameters; empty: data/sim/params.json
  std::string site;         // a site profile (llmco2 calibrate --site) applied over them; empty: none
  bool allow_paths = true;  // false (the HTTP server): models, GPUs and nodes from the catalogs or posted JSON only
};

class Session {
 public:
  explicit Session(Settings settings = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // One request: prefill, decode and total energy, latency and CO2 with their intervals (`llmco2 predict`).
  Result predict(const Request& request) const;
  // Many requests, each as predict would answer it, on `threads` threads (0: all cores). An error names the index.
  std::vector<Result> predict_many(const std::vector<Request>& requests, int threads = 1) const;
  // The request on every GPU type and count (`llmco2 compare`).
  Result compare(const Request& request, const CompareOptions& options) const;
  // A whole request log on the request's setup (`llmco2 trace`): its tokens come from the log.
  Result score_trace(const std::string& path, const Request& setup, const TraceOptions& options) const;
  // The same for a log held in memory. Requests are scored one by one (on a fixed token grid), so the totals of a
  // log's partitions add up to the whole log's: requests, prompt_tokens, gen_tokens, energy_j, gpu_busy_s and co2_g.
  Result score_requests(const LogColumns& log, const Request& setup, const TraceOptions& options) const;
  // A request log replayed through a deployment of the request's setup (`llmco2 serve-sim`): its batch must be 1
  // (the engine's scheduler batches); the JSON of docs/schema.md and the CLI's table. Reads a file: refused where
  // paths are not allowed.
  Result serve_sim(const Request& request, const ServeSimOptions& options) const;

  // The catalogs, as `llmco2 models|gpus|nodes --format json` list them, and the regions with their intensity.
  Json models() const;
  Json gpus() const;
  Json nodes() const;
  Json regions() const;
  // The versions every answer rests on: llmco2's, the predictor file's and the data's checksums.
  Json versions() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmco2::api
