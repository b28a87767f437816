// api/serve_sim.cc - a request log replayed through a deployment in virtual time (Session::serve_sim, `llmco2
// serve-sim`): latency percentiles, throughput, goodput, energy with idle, CO2; the per-request CSV and the plots
// when asked.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "api/evidence.h"
#include "api/format.h"
#include "api/session_impl.h"
#include "carbon/ci_profile.h"
#include "carbon/embodied.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log_histogram.h"
#include "core/output_manifest.h"
#include "serving/serve_sim.h"
#include "serving/timeline.h"

namespace llmco2::api {
namespace {

// Latencies of the finished requests (bounded memory: histograms), and what the summary adds up.
struct Latencies : LatencyHistograms {
  long output_tokens = 0, prompt_tokens = 0, good = 0;
  double request_energy_j = 0;
};

Json percentiles_json(const LogHistogram& h) {
  Json j = Json::object();
  if (h.count() == 0) return j;
  j["mean"] = h.mean();
  for (auto [name, q] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}}) j[name] = h.quantile(q);
  return j;
}

// The decode pool of a disaggregated deployment as the summary shows it, and the KV transfers between the pools.
Json disaggregation_json(const Deployment& d, const ReplayTotals& t) {
  if (!d.decode) return nullptr;
  const DecodePool& p = *d.decode;
  const double transfers = static_cast<double>(std::max(1L, t.kv_transfers));
  return {{"prefill_replicas", d.replicas},
          {"decode",
           {{"gpu", p.gpu.id},
            {"tensor_parallel", p.setup.gpus},
            {"replicas", p.replicas},
            {"kv_blocks_per_replica", scheduler_limits(decode_deployment(d)).kv_blocks}}},
          {"kv_link",
           {{"kind", p.link.kind},
            {"gbps_per_gpu", p.link.bytes_per_s_per_gpu * 8 / 1e9},
            {"latency_us", p.link.latency_s * 1e6},
            {"spans_nodes", p.link.spans_nodes}}},
          {"kv_transfers",
           {{"count", t.kv_transfers},
            {"mean_bytes", t.kv_transfer_bytes / transfers},
            {"mean_s", t.kv_transfer_wait_s / transfers}}}};
}

Json summary_json(const ReplayTotals& t, const Latencies& l, const CarbonInputs& carbon, const Deployment& d,
                  const SchedulerLimits& limits, const ServeSimOptions& f, std::optional<double> profile_g,
                  long skipped_lines, const CarbonInputs* decode_carbon) {
  const double total_j = t.busy_energy_j + t.idle_energy_j;
  const double gpu_hours = t.gpus_total * t.window_s / 3600.0;
  const double operational = profile_g.value_or(operational_g(total_j, carbon.pue, carbon.ci_g_per_kwh));
  Json j;
  j.update(energy_scope_json(carbon.scope));
  j["deployment"] = {{"model", d.model.id},
                     {"gpu", d.gpu.id},
                     {"tensor_parallel", d.setup.gpus},
                     {"pipeline_parallel", d.setup.pipeline_parallel},
                     {"replicas", d.replicas},
                     {"engine", d.setup.engine},
                     {"dtype", d.setup.precision.to_string()},
                     {"router", f.router},
                     {"max_num_seqs", limits.max_num_seqs},
                     {"max_batched_tokens", limits.max_batched_tokens},
                     {"block_size", limits.block_size},
                     {"kv_blocks_per_replica", limits.kv_blocks},
                     {"speculation", speculation_json(d.speculation)},
                     {"disaggregation", disaggregation_json(d, t)}};
  const double completed = static_cast<double>(t.completed), output_tokens = static_cast<double>(l.output_tokens);
  const double good = static_cast<double>(l.good);
  j["requests"] = {{"completed", t.completed},
                   {"rejected_too_long", t.rejected},
                   {"preemptions", t.preemptions},
                   {"log_lines_skipped", skipped_lines}};
  j["load"] = {{"source", f.num_prompts > 0 ? "random" : "log"},
               {"concurrency", f.concurrency},
               {"loop", f.concurrency > 0 ? "closed" : "open"}};
  if (f.num_prompts > 0)
    j["load"].update({{"num_prompts", f.num_prompts},
                      {"input_len", f.input_len},
                      {"output_len", f.output_len},
                      {"range_ratio", f.range_ratio},
                      {"request_rate", f.request_rate},
                      {"seed", f.seed}});
  j["window_s"] = t.window_s;
  // What each request saw, as distributions over the completed requests (trace's per_request likewise).
  j["per_request"] = {{"queue_s", percentiles_json(l.queue_s)},
                      {"ttft_s", percentiles_json(l.ttft_s)},
                      {"tpot_s", percentiles_json(l.tpot_s)},
                      {"e2e_s", percentiles_json(l.e2e_s)},
                      {"energy_j", {{"mean", completed > 0 ? l.request_energy_j / completed : 0.0}}}};
  j["throughput"] = {{"output_tokens_per_s", t.window_s > 0 ? output_tokens / t.window_s : 0.0},
                     {"requests_per_s", t.window_s > 0 ? completed / t.window_s : 0.0}};
  if (f.slo_ttft_ms > 0 || f.slo_tpot_ms > 0)
    j["goodput"] = {{"requests_meeting_slo", l.good},
                    {"requests_per_s", t.window_s > 0 ? good / t.window_s : 0.0},
                    {"slo_ttft_ms", f.slo_ttft_ms},
                    {"slo_tpot_ms", f.slo_tpot_ms}};
  j["gpu_hours"] = gpu_hours;
  j["utilisation"] = t.window_s > 0 ? t.busy_gpu_s / (t.gpus_total * t.window_s) : 0.0;
  j["energy_j"] = total_json(total_j);
  j["energy_j"].update(
      {{"busy", t.busy_energy_j}, {"idle", t.idle_energy_j}, {"idle_attributed_to_requests", t.attributed_idle_j}});
  j["energy_per_1k_output_tokens_j"] = output_tokens > 0 ? 1000.0 * total_j / output_tokens : 0.0;
  // Each pool's GPUs at their own type's embodied figure.
  const bool embodied_known = carbon.embodied.known() && (!decode_carbon || decode_carbon->embodied.known());
  const int prefill_gpus = t.gpus_total - t.decode_gpus_total;
  const double embodied = !embodied_known
                              ? 0.0
                              : embodied_g(*carbon.embodied.kgco2e, t.window_s, carbon.lifetime_years, prefill_gpus) +
                                    (decode_carbon ? embodied_g(*decode_carbon->embodied.kgco2e, t.window_s,
                                                                decode_carbon->lifetime_years, t.decode_gpus_total)
                                                   : 0.0);
  j["co2_g"] = {{"operational", total_json(operational)},
                {"embodied", embodied_known ? total_json(embodied) : Json()},
                {"total", total_json(operational + embodied)}};
  if (!embodied_known)
    j["co2_note"] = "embodied CO2 " +
                    (carbon.embodied.known() ? decode_carbon->embodied : carbon.embodied).unknown_label() +
                    ": total is operational only";
  j.update(carbon_inputs_json(carbon));  // as predict writes them (its scope fields are those above)
  if (profile_g) j["ci_profile"] = f.ci_profile;
  j["peaks"] = {{"running", t.peak_running}, {"waiting", t.peak_waiting}, {"kv_share", t.peak_kv_share}};
  j["prefix_cache"] = {{"enabled", f.prefix_caching},
                       {"prefix_share", f.prefix_share},
                       {"queried_tokens", t.prefix_queried_tokens},
                       {"hit_tokens", t.prefix_hit_tokens},
                       {"hit_rate", t.prefix_hit_rate()}};
  j["simulation"] = {
      {"steps", t.steps}, {"step_shapes_simulated", t.distinct_shapes}, {"peak_requests_in_memory", t.peak_in_flight}};
  return j;
}

// The most requests one generated run replays (`--num-prompts`): a bound on its time, not its memory. And the longest
// prompt or output it draws: the bound the log reader holds a fractional token count to, so that L (1 + r) stays a
// long.
constexpr long kMaxPrompts = 100'000'000;
constexpr long kMaxPromptTokens = 1'000'000'000;

// `vllm bench serve`'s random dataset as a request stream: num_prompts requests, all sent at time 0 (no timestamp) or
// at a Poisson request rate (exponential gaps from time 0), lengths fixed or drawn uniformly within range_ratio of
// them.
class RandomPrompts {
 public:
  explicit RandomPrompts(const ServeSimOptions& f)
      : count_(checked_count(f)),
        input_(range(f.input_len, f.range_ratio)),
        output_(range(f.output_len, f.range_ratio)),
        gap_(f.request_rate > 0 ? f.request_rate : 1.0),
        poisson_(f.request_rate > 0),
        rng_(f.seed) {}
  std::optional<LoggedRequest> next() {
    if (sent_ == count_) return std::nullopt;
    std::optional<double> time_s;
    if (poisson_) {
      if (sent_ > 0) clock_s_ += gap_(rng_);
      time_s = clock_s_;
    }
    ++sent_;
    const long input = input_(rng_), output = output_(rng_);
    return LoggedRequest{time_s, input, output, sent_, 1};
  }

 private:
  // num_prompts, once every setting is checked (before the ranges are drawn from them: members initialise in order).
  static long checked_count(const ServeSimOptions& f) {
    if (f.num_prompts < 1 || f.num_prompts > kMaxPrompts)
      fail("--num-prompts must be 1 to {}, got {}", kMaxPrompts, f.num_prompts);
    for (auto [flag, length] : {std::pair{"--random-input-len", f.input_len}, {"--random-output-len", f.output_len}})
      if (length < 1 || length > kMaxPromptTokens) fail("{} must be 1 to {}, got {}", flag, kMaxPromptTokens, length);
    if (!(f.range_ratio >= 0 && f.range_ratio < 1))
      fail("--random-range-ratio must be in [0, 1), got {}", f.range_ratio);
    if (f.request_rate != 0 && !(f.request_rate >= 1e-4 && f.request_rate <= 1e6))
      fail("--request-rate must be 0 (all at once) or 1e-4 to 1e6 requests per second, got {}", f.request_rate);
    return f.num_prompts;
  }
  static std::uniform_int_distribution<long> range(long length, double ratio) {
    const long lo = std::max(1L, static_cast<long>(std::floor(static_cast<double>(length) * (1 - ratio))));
    const long hi = std::max(lo, static_cast<long>(std::floor(static_cast<double>(length) * (1 + ratio))));
    return std::uniform_int_distribution<long>(lo, hi);
  }
  long count_, sent_ = 0;
  std::uniform_int_distribution<long> input_, output_;
  std::exponential_distribution<double> gap_;
  bool poisson_ = false;
  double clock_s_ = 0;
  std::mt19937_64 rng_;
};

// Where the requests come from: the log file, streamed, or the random dataset.
struct Requests {
  explicit Requests(const ServeSimOptions& f) {
    if (f.num_prompts > 0 && !f.log.empty())
      fail("serve-sim: a request log or --num-prompts (a generated load), not both");
    if (f.request_rate > 0 && f.num_prompts == 0)
      fail("--request-rate paces the generated requests of --num-prompts; a log's requests arrive at its timestamps");
    if (f.num_prompts > 0) {
      random.emplace(f);
      name = fmt::format("{} prompts of {}/{} tokens", f.num_prompts, f.input_len, f.output_len);
      expected = f.num_prompts;
      return;
    }
    if (f.log.empty()) fail("serve-sim: a request log file, or --num-prompts for vllm bench serve's random dataset");
    reader.emplace(f.log);  // streamed: memory follows the requests in flight, not the log's length
    first = reader->next();
    if (!first) reader->fail_nothing_read();
    name = std::filesystem::path(f.log).filename().string();
    expected = std::max(0L, reader->lines_in_file() - 1);
  }
  std::optional<LoggedRequest> next() {
    if (random) return random->next();
    return first ? std::exchange(first, std::nullopt) : reader->next();
  }
  std::optional<RequestLogReader> reader;
  std::optional<RandomPrompts> random;
  std::optional<LoggedRequest> first;  // read ahead (a log's first time origin)
  std::string name;                    // for titles
  long expected = 0;
};

std::string ms(const Json& p, const char* key) {
  return p.contains(key) ? fmt::format("{:.1f}", p[key].get<double>() * 1000.0) : "-";
}

// "4 x h100-sxm x 2 replicas" (with " x N stages" after the GPUs), or a disaggregated deployment's two pools: "1 x
// h100-sxm x 1 prefill + 1 x h100-sxm x 2 decode replicas", from the summary's deployment.
std::string deployment_words(const Json& deployment) {
  const int stages = deployment["pipeline_parallel"].get<int>();
  const std::string prefill = fmt::format("{}{} x {} x {}", deployment["tensor_parallel"].get<int>(),
                                          stages > 1 ? fmt::format(" x {} stages", stages) : "",
                                          deployment["gpu"].get<std::string>(), deployment["replicas"].get<int>());
  const Json& pools = deployment["disaggregation"];
  if (pools.is_null()) return prefill + " replicas";
  return fmt::format("{} prefill + {} x {} x {} decode replicas", prefill,
                     pools["decode"]["tensor_parallel"].get<int>(), pools["decode"]["gpu"].get<std::string>(),
                     pools["decode"]["replicas"].get<int>());
}

std::string summary_text(const Json& j) {
  const Json& load = j["load"];
  const std::string clients =
      load["concurrency"].get<long>() > 0 ? fmt::format(", {} clients", load["concurrency"].get<long>()) : "";
  const Json& spec = j["deployment"]["speculation"];
  const std::string speculation =
      spec.is_null()
          ? ""
          : fmt::format(", {} speculation k={}", spec["method"].get<std::string>(), spec["draft_tokens"].get<int>());
  const Json& disaggregation = j["deployment"]["disaggregation"];
  std::string out =
      fmt::format("{} on {} ({}{}), {} requests over {:.1f} s{}\n", j["deployment"]["model"].get<std::string>(),
                  deployment_words(j["deployment"]), j["deployment"]["engine"].get<std::string>(), speculation,
                  j["requests"]["completed"].get<long>(), j["window_s"].get<double>(), clients);
  out += "  latency (ms)       mean      p50      p90      p95      p99\n";
  for (const char* name : {"queue", "ttft", "tpot", "e2e"}) {
    const Json& p = j["per_request"][std::string(name) + "_s"];
    out += fmt::format("  {:<12} {:>10} {:>8} {:>8} {:>8} {:>8}\n", name, ms(p, "mean"), ms(p, "p50"), ms(p, "p90"),
                       ms(p, "p95"), ms(p, "p99"));
  }
  out += fmt::format("  throughput  {:.1f} output tokens/s, {:.3f} requests/s\n",
                     j["throughput"]["output_tokens_per_s"].get<double>(),
                     j["throughput"]["requests_per_s"].get<double>());
  if (j.contains("goodput"))
    out += fmt::format("  goodput     {} requests within the SLOs, {:.3f} requests/s\n",
                       j["goodput"]["requests_meeting_slo"].get<long>(), j["goodput"]["requests_per_s"].get<double>());
  out += fmt::format("  GPU-hours   {:.3f}, utilisation {:.1f}%\n", j["gpu_hours"].get<double>(),
                     100.0 * j["utilisation"].get<double>());
  const Json& e = j["energy_j"];
  out += fmt::format("  scope       {}\n", j["energy_scope_label"].get<std::string>());
  out += fmt::format(
      "  energy      {:.1f} Wh ({:.1f} busy + {:.1f} idle), {:.1f} J per request, {:.1f} J per 1k "
      "output tokens\n",
      e["total"].get<double>() / 3600, e["busy"].get<double>() / 3600, e["idle"].get<double>() / 3600,
      j["per_request"]["energy_j"]["mean"].get<double>(), j["energy_per_1k_output_tokens_j"].get<double>());
  const Json& c = j["co2_g"];
  out += fmt::format("  CO2         {:.1f} g operational, embodied {}\n", c["operational"]["total"].get<double>(),
                     c["embodied"].is_object() ? fmt::format("{:.1f} g", c["embodied"]["total"].get<double>())
                                               : j["co2_note"].get<std::string>());
  const Json& cache = j["prefix_cache"];
  out += cache["enabled"].get<bool>()
             ? fmt::format("  prefix      {:.1f}% of prompt tokens found cached ({} of {}), their prefill skipped\n",
                           100 * cache["hit_rate"].get<double>(), cache["hit_tokens"].get<long>(),
                           cache["queried_tokens"].get<long>())
             : std::string("  prefix      caching off\n");
  if (!disaggregation.is_null()) {
    const Json& kv = disaggregation["kv_transfers"];
    out += fmt::format(
        "  KV moves    {} prefill-to-decode transfers over {} ({:.0f} Gb/s per GPU), {:.1f} MB and {:.2f} ms each on "
        "average (waits for the link included)\n",
        kv["count"].get<long>(), disaggregation["kv_link"]["kind"].get<std::string>(),
        disaggregation["kv_link"]["gbps_per_gpu"].get<double>(), kv["mean_bytes"].get<double>() / 1e6,
        kv["mean_s"].get<double>() * 1e3);
  }
  out += fmt::format("  peaks       {} running, {} waiting, {:.0f}% of the KV cache; {} preemptions\n",
                     j["peaks"]["running"].get<long>(), j["peaks"]["waiting"].get<long>(),
                     100.0 * j["peaks"]["kv_share"].get<double>(), j["requests"]["preemptions"].get<long>());
  return out;
}

// A disaggregated deployment's decode pool (the request's GPU and GPUs unless decode_gpu / decode_gpus name others,
// resolved as any request is: its precision on that GPU, its node and embodied figure) and the link between the
// pools; the deployment's replicas become the prefill pool's. Nothing when the options do not disaggregate.
std::optional<ResolvedRequest> disaggregate(const ServeSimOptions& f, const Request& rf, bool allow_paths,
                                            Deployment& d) {
  if (f.disaggregate.empty()) {
    if (!f.decode_gpu.empty() || f.decode_gpus != 0 || f.kv_link_gbps != 0)
      fail(
          "--decode-gpu, --decode-gpus and --kv-link-gbps describe a disaggregated deployment: give --disaggregate "
          "P:D");
    return std::nullopt;
  }
  const auto [prefill, decode] = parse_disaggregation(f.disaggregate);
  if (f.replicas != 1) fail("--replicas {} with --disaggregate: P:D gives the prefill and decode replicas", f.replicas);
  if (f.decode_gpus < 0 || f.decode_gpus > 64)
    fail("--decode-gpus must be 0 (as --gpus) or 1 to 64, got {}", f.decode_gpus);
  Request decode_request = rf;
  if (!f.decode_gpu.empty() && f.decode_gpu != rf.gpu) decode_request.gpu = f.decode_gpu, decode_request.node.clear();
  if (f.decode_gpus > 0) decode_request.gpus = f.decode_gpus;
  ResolvedRequest r = resolve_log_setup(decode_request, allow_paths);
  d.replicas = prefill;
  Deployment unlinked = d;  // what the replay refuses, before the link between the pools is looked up
  unlinked.decode = DecodePool{r.gpu, r.request, decode, r.carbon.scope, {}};
  check_deployment(unlinked);
  d.decode = make_decode_pool(d, r.gpu, r.request, decode, r.carbon.scope, f.kv_link_gbps);
  return r;
}

Result serve_sim_result(const ServeSimOptions& f, const Request& rf, const Settings& settings, const SimParams& params,
                        const LoadedPredictor& simulator) {
  if (rf.batch != 1)
    fail(
        "--batch {}: serve-sim batches the log's requests as the engine's scheduler does; bound the running batch "
        "with --max-num-seqs",
        rf.batch);
  if (!settings.allow_paths) fail("serve-sim reads a log file: not offered where paths are not allowed");
  refuse_output_over_input(f.requests_csv, "--requests-out", f.log, "request log");
  refuse_output_over_input(f.requests_csv, "--requests-out", f.ci_profile, "carbon-intensity profile");
  // The run's outputs listed last, as every command's are (docs/reliability.md): in the plot folder, else beside
  // the per-request CSV.
  std::optional<RunManifest> manifest;
  if (!f.plot_dir.empty()) {
    std::filesystem::create_directories(f.plot_dir);
    manifest.emplace(manifest_in_folder(f.plot_dir));
  } else if (!f.requests_csv.empty()) {
    manifest.emplace(manifest_beside(f.requests_csv));
  }
  const ResolvedRequest r = resolve_log_setup(rf, true);
  Deployment d = deployment(r);
  d.replicas = f.replicas, d.router = parse_router(f.router);
  d.max_num_seqs = f.max_num_seqs, d.max_batched_tokens = f.max_batched_tokens, d.block_size = f.block_size;
  d.gpu_memory_utilization = f.gpu_memory_utilization;
  d.prefix_caching = f.prefix_caching;
  const std::optional<ResolvedRequest> decode = disaggregate(f, rf, settings.allow_paths, d);
  const SchedulerLimits limits = scheduler_limits(d);
  const CarbonInputs& carbon = r.carbon;
  Requests requests(f);
  const RequestSource source = [&] { return requests.next(); };
  ReplayOptions options;
  options.source_name = requests.reader ? requests.reader->source() : "";
  options.expected_requests = requests.expected;
  options.rate_scale = f.rate_scale, options.duration_s = f.duration_s, options.progress = f.progress;
  options.concurrency = f.concurrency;
  options.attribute_idle = f.attribute_idle;
  options.keep_time_outliers = f.keep_time_outliers;
  options.prefix_share = f.prefix_share;
  // A time-varying intensity: virtual time 0 is the log's first arrival (or the profile's first row for a log
  // without timestamps); each meter reading is charged at the intensity of the hours it spans.
  std::optional<CiProfile> profile;
  double origin_s = 0, profile_g = 0;
  if (!f.ci_profile.empty()) {
    profile = CiProfile::read(f.ci_profile);
    origin_s = requests.first && requests.first->time_s ? *requests.first->time_s : profile->first_s();
  }
  std::optional<Timeline> timeline;
  if (!f.plot_dir.empty()) timeline.emplace(f.bin_s, d.replicas + (d.decode ? d.decode->replicas : 0));
  if (profile || timeline)
    options.on_step = [&](const StepRecord& step) {
      if (timeline) timeline->add(step);
      if (profile)
        profile_g += profile->operational_g(step.energy_j, origin_s + step.start_s,
                                            origin_s + step.start_s + step.time_s, carbon.pue);
    };
  std::unique_ptr<AtomicFile> csv;
  if (!f.requests_csv.empty()) {
    csv = std::make_unique<AtomicFile>(f.requests_csv);
    csv->stream() << "line,arrival_s,prompt_tokens,gen_tokens,replica,queue_s,ttft_s,tpot_s,e2e_s,energy_j,co2_g,"
                     "preemptions,status,cached_tokens\n";
  }
  Latencies l;
  const auto g_per_j = [&](double at_s) {  // a request's CO2: its energy at the intensity in force when it finishes
    return operational_g(1.0, carbon.pue, profile ? profile->at(origin_s + at_s) : carbon.ci_g_per_kwh);
  };
  const RequestSink sink = [&](const ServedRequest& q) {
    const bool done = q.finish_s >= 0;
    if (done) {
      l.queue_s.add(q.scheduled_s - q.arrival_s);
      l.ttft_s.add(q.ttft_s());
      if (q.gen_tokens > 1) l.tpot_s.add(q.tpot_s());
      l.e2e_s.add(q.finish_s - q.arrival_s);
      l.output_tokens += q.gen_tokens;
      l.prompt_tokens += q.prompt_tokens;
      l.request_energy_j += q.energy_j;
      const bool ttft_ok = f.slo_ttft_ms <= 0 || q.ttft_s() * 1000 <= f.slo_ttft_ms;
      const bool tpot_ok = f.slo_tpot_ms <= 0 || q.tpot_s() * 1000 <= f.slo_tpot_ms;
      if (ttft_ok && tpot_ok) ++l.good;
    }
    if (!csv) return;
    if (done)
      csv->stream() << fmt::format("{},{:.6f},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f},{:.6f},{},completed,{}\n",
                                   q.id, q.arrival_s, q.prompt_tokens, q.gen_tokens, q.replica,
                                   q.scheduled_s - q.arrival_s, q.ttft_s(), q.tpot_s(), q.finish_s - q.arrival_s,
                                   q.energy_j, q.energy_j * g_per_j(q.finish_s), q.preemptions, q.cached_tokens);
    else
      csv->stream() << fmt::format("{},{:.6f},{},{},,,,,,,,0,rejected_longer_than_kv_cache,0\n", q.id, q.arrival_s,
                                   q.prompt_tokens, q.gen_tokens);
  };
  const ReplayTotals totals = replay(source, d, params, options, sink);
  if (totals.completed == 0 && totals.rejected > 0) {  // nothing served: no figure would mean anything
    const bool decode_pool = totals.rejected_by_decode == totals.rejected;  // the decode pool's cache the limit
    const Deployment refusing = decode_pool ? decode_deployment(d) : d;
    fail(
        "{}: none of its {} requests fits a {}replica's KV cache ({} blocks of {} tokens on {}{} x {}); use more GPUs "
        "per replica ({}), a GPU with more memory or a higher --gpu-memory-utilization",
        requests.name, totals.rejected, decode_pool ? "decode " : "",
        decode_pool ? scheduler_limits(refusing).kv_blocks : limits.kv_blocks, limits.block_size, refusing.setup.gpus,
        stages_words(refusing.setup), refusing.gpu.id, decode_pool ? "--decode-gpus" : "--gpus");
  }
  if (csv) csv->commit();
  Result result;
  result.json = summary_json(totals, l, carbon, d, limits, f, profile ? std::optional<double>(profile_g) : std::nullopt,
                             requests.reader ? requests.reader->skipped() : 0, decode ? &decode->carbon : nullptr);
  // Its evidence: the setup at the batch it ran at and the completed requests' mean context.
  const RequestEvidence evidence = replay_evidence(
      simulator, r, totals.mean_running(),
      static_cast<double>(l.prompt_tokens + l.output_tokens) / static_cast<double>(std::max(1L, totals.completed)),
      d.decode.has_value());
  result.json["evidence"] = evidence_json(evidence);
  result.text = summary_text(result.json) + evidence_lines(evidence);
  if (timeline) {
    const std::string title =
        fmt::format("{}: {} on {}", requests.name, d.model.id, deployment_words(result.json["deployment"]));
    const std::string warning = write_serving_plots(*timeline, l, title, f.plot_dir);
    if (!warning.empty()) result.warnings.push_back(warning);
    else result.text += fmt::format("  plots: {0}/timeline.png, {0}/latency-cdf.png\n", f.plot_dir);
  }
  if (manifest) manifest->commit();
  return result;
}

}  // namespace

Result Session::serve_sim(const Request& request, const ServeSimOptions& options) const {
  return serve_sim_result(options, request, impl_->settings, impl_->params(), impl_->predictor("sim"));
}

}  // namespace llmco2::api
