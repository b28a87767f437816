// api/compare.cc - Session::compare: a request (or a request log) on every GPU type and count: energy, latency,
// operational and embodied CO2, CO2 per GPU, the lowest-carbon setup meeting a latency objective; with a log and a
// TTFT or TPOT objective, capacity planning by the serving simulation; the paper's GPU-count plots (figures 12-14).
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/evidence.h"
#include "api/format.h"
#include "api/resolve.h"
#include "api/session_impl.h"
#include "compare/capacity.h"
#include "compare/price_catalog.h"
#include "compare/setup_comparison.h"
#include "core/error.h"
#include "core/output_manifest.h"
#include "hardware/gpu_catalog.h"
#include "hardware/node.h"

namespace llmco2::api {
namespace {

// The engine as a subject line names it, with the request's speculative decoding.
std::string engine_words(const Request& r) {
  const std::string stages =
      r.pipeline_parallel > 1 ? fmt::format(", {} pipeline stages of `gpus` each", r.pipeline_parallel) : "";
  if (r.spec.empty()) return r.engine + stages;
  return fmt::format("{}, {} speculation{}{}", r.engine, r.spec,
                     r.spec_tokens > 0 ? fmt::format(" k={}", r.spec_tokens) : "", stages);
}

// Each row's evidence from its resolved setup, by GPU type and count (one request; a log's rows have none: their
// requests differ).
using RowEvidence = std::map<std::pair<std::string, int>, RequestEvidence>;
const RequestEvidence* evidence_of(const RowEvidence& evidence, const SetupRow& r) {
  const auto it = evidence.find({r.gpu, r.gpus});
  return r.unavailable.empty() && it != evidence.end() ? &it->second : nullptr;
}

// The log of options.trace without the requests a pause of over 30 days separates from the rest (unless
// keep_time_outliers), each dropped line named in the warnings.
std::string time_outlier_warning(const std::string& source, long dropped, std::span<const SkippedLine> named) {
  std::string warning = fmt::format(
      "compare: {} request(s) of {} dropped as time outliers (--keep-time-outliers keeps "
      "them)",
      dropped, source);
  for (const auto& e : named) warning += fmt::format("\n  line {}: {}", e.line, e.reason);
  return warning;
}

RequestLog read_trace(const CompareOptions& o, std::vector<std::string>& warnings) {
  RequestLog log = read_request_log(o.trace, o.progress);
  if (o.keep_time_outliers) return log;
  const size_t examples_before = log.examples.size();
  const long dropped = drop_time_outliers(log);
  if (dropped == 0) return log;
  warnings.push_back(time_outlier_warning(log.source, dropped, std::span(log.examples).subspan(examples_before)));
  return log;
}

// The log of options.trace reduced to its shapes, read on options.threads workers; time outliers as read_trace.
LogShapes read_trace_shapes(const CompareOptions& o, std::vector<std::string>& warnings) {
  TraceFileOptions file_options;
  file_options.threads = o.threads;
  file_options.keep_time_outliers = o.keep_time_outliers;
  LogShapes log = survey_log_shapes(o.trace, file_options, o.progress);
  if (log.file.time_outliers > 0)
    warnings.push_back(time_outlier_warning(log.file.source, log.file.time_outliers, log.file.outlier_examples));
  return log;
}

std::vector<Gpu> gpu_types(const CompareOptions& o, const CarbonFor& carbon, std::string& note, bool allow_paths) {
  std::vector<Gpu> out;
  if (!o.gpu_types.empty()) {
    for (const auto& name : o.gpu_types) {
      refuse_file(name, "--gpu-types", allow_paths);
      out.push_back(GpuCatalog::bundled().resolve(name, allow_paths));
    }
    return out;
  }
  std::vector<std::string> left_out;
  for (const Gpu& gpu : GpuCatalog::bundled().gpus()) {
    try {
      carbon(gpu, 1);
      out.push_back(gpu);
    } catch (const Error&) {
      left_out.push_back(gpu.id);
    }
  }
  if (!left_out.empty())
    note = fmt::format("left out (no embodied figure on this basis; give --gpu-types and --embodied-kg): {}",
                       fmt::join(left_out, ", "));
  return out;
}

// A line naming the GPUs whose totals are operational only (no embodied figure), or "".
std::string unknown_embodied_note(const Comparison& c) {
  std::vector<std::string> ids;
  for (const SetupRow& r : c.rows)
    if (r.unavailable.empty() && !r.embodied_known && std::find(ids.begin(), ids.end(), r.gpu) == ids.end())
      ids.push_back(r.gpu);
  if (ids.empty()) return "";
  return fmt::format(
      "embodied CO2 unknown for {} (no sourced embodied figure; give --embodied-kg): their co2_total "
      "is operational only (marked ~)",
      fmt::join(ids, ", "));
}

std::string short_reason(std::string reason) {
  if (reason.size() > 70) reason = reason.substr(0, 67) + "...";
  return reason;
}

std::string table(const Comparison& c, std::optional<double> slo_ms, const RowEvidence& evidence) {
  std::string out = fmt::format("  {:<16} {:>4} {:<14} {:<26} {:>11} {:>10} {:>11} {:>11} {:>11} {:>11}{}  {}\n", "gpu",
                                "gpus", "dtype", "energy scope", "energy_j", "latency_s", "co2_oper_g", "co2_emb_g",
                                "co2_total_g", "co2_per_gpu", slo_ms ? "  slo" : "", "evidence");
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const SetupRow& r = c.rows[i];
    const char* mark = c.best && *c.best == i ? "*" : " ";
    if (!r.unavailable.empty()) {
      out += fmt::format("{} {:<16} {:>4}  cannot serve: {}\n", mark, r.gpu, r.gpus, short_reason(r.unavailable));
      continue;
    }
    const std::string embodied = r.embodied_known ? fmt::format("{:.4g}", r.embodied_g) : "unknown";
    const std::string total = fmt::format("{}{:.4g}", r.embodied_known ? "" : "~", r.total_g());
    const RequestEvidence* e = evidence_of(evidence, r);
    out += fmt::format("{} {:<16} {:>4} {:<14} {:<26} {:>11.4g} {:>10.4g} {:>11.4g} {:>11} {:>11} {:>11.4g}{}  {}\n",
                       mark, r.gpu, r.gpus, r.dtype, r.scope, r.energy_j, r.latency_s, r.operational_g, embodied, total,
                       r.per_gpu_g(), slo_ms ? (r.meets_slo ? "  yes" : "  no") : "",
                       e && e->evidence ? evidence::label_name(e->evidence->label) : "-");
  }
  return out;
}

// The scope fields of a row: its node's id, or "gpu".
Json row_scope_json(const std::string& scope) {
  return {{"energy_scope", scope == "gpu" ? "gpu" : "node"}, {"node", scope == "gpu" ? Json() : Json(scope)}};
}

// A row's figures in the schema every result shares (docs/schema.md): one request's per phase, a log's totals
// (latency_s.total: the log's 90th-percentile request latency).
Json figures_json(const SetupRow& r) {
  const double per_1k = r.output_tokens > 0 ? 1000 * r.energy_j / r.output_tokens : 0.0;
  if (r.footprint) {
    const Footprint& f = *r.footprint;
    return {{"energy_j", quantity_json(f.energy_j)},
            {"latency_s", quantity_json(f.latency_s)},
            {"co2_g",
             {{"operational", quantity_json(f.operational_g)},
              {"embodied", f.embodied_unknown ? Json() : quantity_json(f.embodied_g)},
              {"total", quantity_json(f.total_g)}}},
            {"energy_per_1k_output_tokens_j", per_1k}};
  }
  return {{"energy_j", total_json(r.energy_j)},
          {"latency_s", total_json(r.latency_s)},
          {"co2_g",
           {{"operational", total_json(r.operational_g)},
            {"embodied", r.embodied_known ? total_json(r.embodied_g) : Json()},
            {"total", total_json(r.total_g())}}},
          {"energy_per_1k_output_tokens_j", per_1k}};
}

Json rows_json(const Comparison& c, const RowEvidence& evidence) {
  Json rows = Json::array();
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const SetupRow& r = c.rows[i];
    Json j = {
        {"gpu", r.gpu}, {"gpus", r.gpus}, {"dtype", r.dtype.empty() ? Json() : Json(r.dtype)}, {"notes", r.notes}};
    if (!r.unavailable.empty()) {
      j["unavailable"] = r.unavailable;
    } else {
      j["pipeline_parallel"] = r.stages;
      j.update(row_scope_json(r.scope));
      j.update(figures_json(r));
      j.update({{"co2_per_gpu_g", r.per_gpu_g()}, {"meets_slo", r.meets_slo}, {"best", c.best && *c.best == i}});
      if (!r.embodied_known)
        j["co2_note"] = "embodied CO2 unknown (no sourced embodied figure): total is operational only";
      if (const RequestEvidence* e = evidence_of(evidence, r)) {
        j["evidence"] = evidence_json(*e);
        if (Json iv = total_intervals_json(*e, r.energy_j, r.latency_s, r.operational_g, r.embodied_g); !iv.is_null())
          j["intervals"] = std::move(iv);
      }
    }
    rows.push_back(j);
  }
  return rows;
}

// The evidence of each chosen deployment, in the order of plan.chosen.
using ChosenEvidence = std::vector<RequestEvidence>;

std::string capacity_table(const CapacityPlan& plan, const ChosenEvidence& evidence) {
  std::string out =
      fmt::format("  {:<4} {:<16} {:>3} {:>8} {:>5} {:>12} {:>12} {:>11} {:>10} {:>10} {:>8} {:>10}  {}\n", "rank",
                  "gpu", "tp", "replicas", "gpus", "p95_ttft_ms", "p95_tpot_ms", "energy_kwh", "gpu_hours", "co2_kg",
                  "prov_kw", "usd", "evidence");
  for (size_t k = 0; k < plan.chosen.size(); ++k) {
    const CapacityCandidate& c = plan.tried[plan.chosen[k]];
    const RequestEvidence& e = evidence[k];
    out += fmt::format(
        "  {:<4} {:<16} {:>3} {:>8} {:>5} {:>12.1f} {:>12.2f} {:>11.3f} {:>10.2f} {:>9.3f}{:1} {:>8.1f} {:>10.2f} {}\n",
        k + 1, c.gpu, c.tensor_parallel, c.replicas_words(), c.gpus(), 1000 * c.ttft_q_s, 1000 * c.tpot_q_s,
        c.energy_j / 3.6e6, c.gpu_hours, c.total_g() / 1000, c.embodied_known ? "" : "~", c.provisioned_w / 1000, c.usd,
        e.evidence ? evidence::label_name(e.evidence->label) : "-");
  }
  return out;
}

Json capacity_json(const CapacityPlan& plan, const ChosenEvidence& evidence) {
  auto one = [](const CapacityCandidate& c) {
    Json j = {{"gpu", c.gpu},
              {"tensor_parallel", c.tensor_parallel},
              {"pipeline_parallel", c.pipeline_parallel},
              {"replicas", c.replicas},
              {"decode_replicas", c.decode_replicas}};
    if (!c.unavailable.empty()) {
      j["unavailable"] = c.unavailable;
      return j;
    }
    j.update({{"gpus", c.gpus()},
              {"meets_slo", c.meets_slo},
              {"completed", c.completed},
              {"rejected", c.rejected},
              {"p95_ttft_s", c.ttft_q_s},
              {"p95_tpot_s", c.tpot_q_s},
              {"energy_j", total_json(c.energy_j)},
              {"gpu_hours", c.gpu_hours},
              {"mean_batch", c.mean_batch},
              {"nodes", c.nodes},
              {"provisioned_w", c.provisioned_w},
              {"over_power_budget", c.over_power_budget},
              {"usd", c.usd},
              {"co2_g",
               {{"operational", total_json(c.operational_g)},
                {"embodied", c.embodied_known ? total_json(c.embodied_g) : Json()},
                {"total", total_json(c.total_g())}}}});
    return j;
  };
  Json chosen = Json::array(), tried = Json::array();
  for (size_t k = 0; k < plan.chosen.size(); ++k) {
    chosen.push_back(one(plan.tried[plan.chosen[k]]));
    chosen.back()["evidence"] = evidence_json(evidence[k]);
  }
  for (const auto& c : plan.tried) tried.push_back(one(c));
  return {{"ranked", chosen}, {"tried", tried}};
}

std::string gpu_ids(const std::vector<Gpu>& gpus) {
  std::vector<std::string> ids;
  for (const Gpu& g : gpus) ids.push_back(g.id);
  return fmt::format("{}", fmt::join(ids, ", "));
}

// The rank of each chosen deployment by one figure (1: lowest), as "gpu 1, gpu 2, ..." in that order.
std::string ranking(const CapacityPlan& plan, double (*figure)(const CapacityCandidate&)) {
  std::vector<size_t> order = plan.chosen;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return figure(plan.tried[a]) < figure(plan.tried[b]); });
  std::vector<std::string> names;
  for (size_t i : order) names.push_back(plan.tried[i].gpu);
  return fmt::format("{}", fmt::join(names, " < "));
}

// A chosen deployment's evidence, given the log's mean context in tokens.
using CandidateEvidence = std::function<RequestEvidence(const CapacityCandidate& c, double context_tokens)>;

double log_mean_context_tokens(const RequestLog& log) {
  double tokens = 0;
  for (const LoggedRequest& q : log.requests) tokens += static_cast<double>(q.prompt_tokens + q.gen_tokens);
  return log.requests.empty() ? 0.0 : tokens / static_cast<double>(log.requests.size());
}

// The GPU-hour price of each planned GPU type: the user's where given, else the cloud's from the bundled table (added
// to `usd_per_gpu_hour`); as JSON, one object per priced type with where its price came from.
Json catalog_prices(const std::string& cloud, const std::vector<Gpu>& gpus,
                    std::map<std::string, double>& usd_per_gpu_hour) {
  Json out = Json::array();
  if (!cloud.empty()) PriceCatalog::bundled().require_cloud(cloud);
  for (const Gpu& gpu : gpus) {
    if (const auto given = usd_per_gpu_hour.find(gpu.id); given != usd_per_gpu_hour.end()) {
      out.push_back({{"gpu", gpu.id}, {"usd_per_gpu_hour", given->second}, {"given_by", "you"}});
      continue;
    }
    if (cloud.empty()) continue;
    const GpuPrice* p = PriceCatalog::bundled().find(cloud, gpu.id);
    if (!p) continue;
    usd_per_gpu_hour[gpu.id] = p->usd_per_gpu_hour();
    out.push_back({{"gpu", gpu.id},
                   {"usd_per_gpu_hour", p->usd_per_gpu_hour()},
                   {"given_by", "catalog"},
                   {"cloud", p->cloud},
                   {"region", p->region},
                   {"instance", p->instance},
                   {"instance_gpus", p->gpus},
                   {"usd_per_instance_hour", p->usd_per_instance_hour},
                   {"date", p->date},
                   {"source", p->source}});
  }
  return out;
}

// "  prices (aws on demand): h100-sxm 6.88 $/GPU-h (p5.48xlarge, us-east-1, 2026-08-22); ...; none for l40s"
std::string prices_text(const Json& prices, const std::string& cloud) {
  std::vector<std::string> parts;
  for (const Json& p : prices)
    parts.push_back(
        p["given_by"] == "you"
            ? fmt::format("{} {:.3g} $/GPU-h (yours)", p["gpu"].get<std::string>(), p["usd_per_gpu_hour"].get<double>())
            : fmt::format("{} {:.3g} $/GPU-h ({}, {}, {})", p["gpu"].get<std::string>(),
                          p["usd_per_gpu_hour"].get<double>(), p["instance"].get<std::string>(),
                          p["region"].get<std::string>(), p["date"].get<std::string>()));
  return fmt::format(
      "  prices ({} on demand, data/prices): {}\n", cloud,
      parts.empty() ? std::string("none for the GPU types planned") : fmt::format("{}", fmt::join(parts, "; ")));
}

Result run_capacity(const CompareOptions& o, const ModelSpec& model, const Request& request,
                    const DeploymentFor& deployment_for, const CarbonFor& carbon, const std::vector<Gpu>& gpus,
                    const SimParams& params, const CandidateEvidence& evidence_for) {
  if (o.slo_ttft_ms < 0 || o.slo_tpot_ms < 0) fail("--slo-ttft-ms and --slo-tpot-ms must not be negative");
  Result out;
  const RequestLog log = read_trace(o, out.warnings);
  ServingSlo slo;
  slo.ttft_s = o.slo_ttft_ms / 1000, slo.tpot_s = o.slo_tpot_ms / 1000;
  CapacitySearch search;
  search.tensor_parallel = o.tp_degrees, search.max_replicas = o.max_replicas, search.progress = o.progress;
  search.concurrency = o.concurrency;
  search.prefix_share = o.prefix_share;
  if (!o.disaggregate.empty()) std::tie(search.prefill_unit, search.decode_unit) = parse_disaggregation(o.disaggregate);
  search.power_budget_w = o.power_budget_w;
  search.usd_per_kwh = o.usd_per_kwh;
  for (const auto& [name, usd] : o.usd_per_gpu_hour) {  // a planned type's id, or a bundled alias of one
    auto planned = [&gpus](const std::string& id) {
      return std::any_of(gpus.begin(), gpus.end(), [&id](const Gpu& g) { return g.id == id; });
    };
    std::string id = name;
    if (!planned(id)) {
      try {
        id = GpuCatalog::resolve_bundled(name, false).id;
      } catch (const Error&) {
      }
    }
    if (!planned(id)) fail("--usd-per-gpu-hour {}: not one of the GPU types planned ({})", name, gpu_ids(gpus));
    if (!search.usd_per_gpu_hour.emplace(id, usd).second)
      fail("--usd-per-gpu-hour: {} priced twice (as {} and another name)", id, name);
  }
  const Json prices = catalog_prices(o.cloud_prices, gpus, search.usd_per_gpu_hour);
  const RankBy rank_by = parse_rank_by(o.rank_by);
  if (rank_by == RankBy::usd && search.usd_per_gpu_hour.empty() && o.usd_per_kwh <= 0)
    fail(
        "--rank-by usd needs prices: --usd-per-gpu-hour GPU=USD,..., --cloud-prices CLOUD (for the GPU types it "
        "prices) and/or --usd-per-kwh");
  for (int tp : o.tp_degrees)
    if (tp < 1 || tp > 64) fail("--tp-degrees: expected GPUs per replica between 1 and 64, got {}", tp);
  const CapacityPlan plan = plan_capacity(log, gpus, deployment_for, params, slo, carbon, search, rank_by);
  const std::string subject =
      fmt::format("{} requests of {}{} on {} ({}, {}); objectives at P95: TTFT {} ms, TPOT {} ms", log.requests.size(),
                  log.source, o.concurrency > 0 ? fmt::format(" from {} clients in a closed loop", o.concurrency) : "",
                  model.id, model.precision_for(request.dtype).to_string(), engine_words(request),
                  o.slo_ttft_ms > 0 ? fmt::format("{:g}", o.slo_ttft_ms) : "-",
                  o.slo_tpot_ms > 0 ? fmt::format("{:g}", o.slo_tpot_ms) : "-");
  if (!o.plot_dir.empty()) {
    RunManifest manifest(manifest_in_folder(o.plot_dir));
    const std::string warning =
        write_capacity_plot(plan,
                            fmt::format("{} on {}: cheapest deployment per GPU type meeting the P95 objectives",
                                        std::filesystem::path(o.trace).filename().string(), model.id),
                            o.plot_dir);
    manifest.commit();
    if (!warning.empty()) out.warnings.push_back(warning);
  }
  ChosenEvidence evidence;
  const double context_tokens = log_mean_context_tokens(log);
  for (size_t i : plan.chosen) evidence.push_back(evidence_for(plan.tried[i], context_tokens));
  out.json = capacity_json(plan, evidence);
  out.json["rank_by"] = o.rank_by;
  out.json["prices"] = prices;
  out.json["power_budget_w"] = o.power_budget_w > 0 ? Json(o.power_budget_w) : Json();
  out.json["subject"] = subject;
  out.json["plot_dir"] = o.plot_dir.empty() ? Json() : Json(o.plot_dir);
  out.text = subject + "\n" + capacity_table(plan, evidence);
  if (plan.chosen.empty()) {
    out.text +=
        o.power_budget_w > 0
            ? fmt::format("  no deployment meets the objectives within --max-replicas and {:g} W\n", o.power_budget_w)
            : "  no deployment meets the objectives within --max-replicas\n";
  } else {
    out.text += "  by energy:    " + ranking(plan, [](const CapacityCandidate& c) { return c.energy_j; }) + "\n";
    out.text += "  by CO2:       " + ranking(plan, [](const CapacityCandidate& c) { return c.total_g(); }) + "\n";
    out.text += "  by GPU-hours: " + ranking(plan, [](const CapacityCandidate& c) { return c.gpu_hours; }) + "\n";
    if (!search.usd_per_gpu_hour.empty() || o.usd_per_kwh > 0)
      out.text += "  by dollars:   " + ranking(plan, [](const CapacityCandidate& c) { return c.usd; }) + "\n";
  }
  if (!o.cloud_prices.empty()) out.text += prices_text(prices, o.cloud_prices);
  if (o.power_budget_w > 0) {
    long over = 0;
    for (const CapacityCandidate& c : plan.tried) over += c.over_power_budget ? 1 : 0;
    out.text += fmt::format(
        "  power budget {:g} W at the wall: {} deployment(s) meeting the objectives were provisioned above it "
        "(whole nodes at their design power)\n",
        o.power_budget_w, over);
  }
  out.text += fmt::format(
      "  {} replays; cheapest per GPU type = fewest GPUs, then least energy; ranked by {}; replicas P:D = "
      "prefill:decode "
      "(disaggregated); prov_kw = provisioned "
      "power (nodes x design power); usd = GPU-hours at your or --cloud-prices rates + kWh at --usd-per-kwh; ~ = "
      "embodied unknown; evidence: each "
      "deployment's label at the batch it ran at and the log's mean context of {:.0f} tokens (docs/accuracy.md)",
      plan.tried.size(), o.rank_by, context_tokens);
  out.text += o.plot_dir.empty() ? "\n" : fmt::format("; plot: {}/capacity.png\n", o.plot_dir);
  return out;
}

// Node scope only when every compared GPU type has a node: a comparison is like for like or it misleads. Otherwise
// GPU scope for all, said in `note`.
Request comparable_scope(Request request, const std::vector<Gpu>& gpus, std::string& note) {
  if (request.scope != "node" || !request.node.empty()) return request;
  std::vector<std::string> without;
  for (const Gpu& gpu : gpus)
    if (!NodeCatalog::bundled().default_for(gpu.id)) without.push_back(gpu.id);
  if (without.empty()) return request;
  note = fmt::format(
      "energy scope gpu for every setup: the node catalog has no node for {} (compared like for "
      "like); `llmco2 nodes` lists those it has",
      fmt::join(without, ", "));
  request.scope = "gpu";
  return request;
}

// The node a row of `gpu` is metered at: the request's --node on its own GPU type; every other type at its default
// node (the row's note says so).
Request row_request(const Request& request, const std::optional<Node>& asked_node, const Gpu& gpu,
                    std::vector<std::string>& notes) {
  if (!asked_node || asked_node->gpu == gpu.id) return request;
  Request r = request;
  r.node.clear();
  notes.push_back(fmt::format("--node {} holds {} GPUs: {} is metered at its own default node", asked_node->id,
                              asked_node->gpu, gpu.id));
  return r;
}

// One row's setup, resolved on its own by the one resolver, then checked: for one request, that request fits; for a
// log, that the setup serves its shortest request.
ResolvedRequest resolve_row(const Request& request, const ModelSpec& model, const std::optional<Node>& asked_node,
                            const Gpu& gpu, int gpus, bool for_log, bool paths) {
  std::vector<std::string> node_notes;
  ResolvedRequest r = resolve_setup(row_request(request, asked_node, gpu, node_notes), model, gpu, gpus, paths);
  if (for_log) check_serves_log(r);
  else check_request(r);
  r.notes.insert(r.notes.end(), node_notes.begin(), node_notes.end());
  return r;
}

SetupFor setup_resolver(const Request& request, const ModelSpec& model, const std::optional<Node>& asked_node,
                        bool for_log, bool paths, const std::function<void(const ResolvedRequest&)>& on_resolved = {}) {
  return [=, &model](const Gpu& gpu, int gpus) {
    const ResolvedRequest r = resolve_row(request, model, asked_node, gpu, gpus, for_log, paths);
    if (on_resolved) on_resolved(r);
    return ComparedSetup{input_for(r), r.carbon, r.notes};
  };
}

// Each GPU type's carbon inputs at a GPU count, metered at the row's node.
CarbonFor carbon_resolver(const Request& request, const std::optional<Node>& asked_node, bool paths) {
  return [=](const Gpu& gpu, int gpus) {
    std::vector<std::string> unused;
    return resolve_carbon(row_request(request, asked_node, gpu, unused), gpu, gpus, paths);
  };
}

// The notes of the rows, each once, for the table.
std::vector<std::string> distinct_notes(const Comparison& c) {
  std::vector<std::string> notes;
  for (const SetupRow& r : c.rows)
    for (const auto& n : r.notes)
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
  return notes;
}

}  // namespace

Result Session::compare(const Request& request, const CompareOptions& o) const {
  const bool paths = impl_->settings.allow_paths;
  std::string model_note;
  const ModelSpec model = resolve_model(request, paths, &model_note);
  refuse_file(request.gpu, "--gpu", paths);
  const Gpu plotted = GpuCatalog::resolve_bundled(request.gpu, paths);  // the GPU type of the GPU-count plots
  resolve_carbon(request, plotted, 1, paths);                           // checks the carbon fields once, up front
  std::optional<Node> asked_node;
  if (request.scope == "node" && !request.node.empty()) {
    refuse_file(request.node, "--node", paths);
    asked_node = NodeCatalog::resolve_bundled(request.node);
  }
  std::string note, scope_note;
  const std::vector<Gpu> gpus = gpu_types(o, carbon_resolver(request, asked_node, paths), note, paths);
  const Request cf = comparable_scope(request, gpus, scope_note);
  const CarbonInputs example = resolve_carbon(cf, plotted, 1, paths);
  const bool planning = !o.trace.empty() && (o.slo_ttft_ms > 0 || o.slo_tpot_ms > 0);
  if (o.concurrency < 0 || (o.concurrency > 0 && !planning))
    fail(
        "--concurrency {}: a closed loop of clients applies to capacity planning (--trace with --slo-ttft-ms or "
        "--slo-tpot-ms); expected 0 otherwise",
        o.concurrency);
  if (!planning && (o.prefix_share != 0 || !o.prefix_caching || o.router != "round-robin" || !o.disaggregate.empty()))
    fail(
        "--prefix-share, --no-prefix-caching, --router and --disaggregate apply to capacity planning (--trace with "
        "--slo-ttft-ms or --slo-tpot-ms), whose serving replay schedules the requests; a comparison prices each "
        "request alone");
  if (!planning && (o.power_budget_w != 0 || !o.usd_per_gpu_hour.empty() || o.usd_per_kwh != 0 ||
                    o.rank_by != "energy" || !o.cloud_prices.empty()))
    fail(
        "--power-budget-w, --usd-per-gpu-hour, --cloud-prices, --usd-per-kwh and --rank-by apply to capacity planning "
        "(--trace with --slo-ttft-ms or --slo-tpot-ms)");
  if (planning) {
    const Router router = parse_router(o.router);  // a bad name fails here, before the search
    const DeploymentFor deployment_for = [&](const Gpu& gpu, int tp) {
      Deployment d = deployment(resolve_row(cf, model, asked_node, gpu, tp, true, paths));
      d.setup.batch = 1;  // the scheduler forms the batches
      d.prefix_caching = o.prefix_caching, d.router = router;
      return d;
    };
    const CandidateEvidence evidence_for = [&](const CapacityCandidate& c, double context_tokens) {
      const auto gpu = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.id == c.gpu; });
      if (gpu == gpus.end()) return RequestEvidence{};
      return replay_evidence(impl_->predictor("sim"),
                             resolve_row(cf, model, asked_node, *gpu, c.tensor_parallel, true, paths), c.mean_batch,
                             context_tokens, c.disaggregated());
    };
    return run_capacity(o, model, cf, deployment_for, carbon_resolver(cf, asked_node, paths), gpus, impl_->params(),
                        evidence_for);
  }
  const LoadedPredictor& p = impl_->predictor(request.predictor);
  Result out;
  std::optional<LogShapes> log;
  if (!o.trace.empty()) log = read_trace_shapes(o, out.warnings);
  // Each row's evidence, filled as its setup is resolved: a log's rows at the log's mean context, as `trace` does.
  const std::optional<double> log_context =
      log ? std::optional<double>(mean_context_tokens(log->shapes)) : std::nullopt;
  RowEvidence evidence;
  const SetupFor setup_for =
      setup_resolver(cf, model, asked_node, !o.trace.empty(), paths, [&](const ResolvedRequest& r) {
        evidence.insert_or_assign({r.gpu.id, r.request.gpus}, request_evidence(p, r, log_context));
      });
  for (int count : o.counts)
    if (count < 1 || count > 64) fail("--counts: expected GPU counts between 1 and 64, got {}", count);
  if (o.counts.empty()) fail("--counts: expected at least one GPU count");
  const std::optional<double> slo_s = o.slo_ms ? std::optional<double>(*o.slo_ms / 1000) : std::nullopt;
  if (o.slo_ms && !(*o.slo_ms > 0)) fail("--slo-ms: expected a positive latency in milliseconds, got {}", *o.slo_ms);
  if (!model_note.empty()) out.warnings.insert(out.warnings.begin(), model_note);
  Comparison c;
  std::string subject;
  const std::string asked_dtype = model.precision_for(request.dtype).to_string();
  if (o.trace.empty()) {
    c = compare_request(*p.predictor, gpus, o.counts, setup_for, slo_s);
    subject = fmt::format("{}, batch {}, prompt {}, gen {}, {} ({})", model.id, request.batch, request.prompt_tokens,
                          request.gen_tokens, asked_dtype, engine_words(request));
  } else {
    c = compare_log_shapes(*p.predictor, log->shapes, gpus, o.counts, setup_for, slo_s, o.grid_ratio, o.threads);
    subject = fmt::format("{} requests of {} on {}, batch {}, {} ({})", log->requests, log->file.source, model.id,
                          request.batch, asked_dtype, engine_words(request));
  }
  if (!o.plot_dir.empty()) {
    const SweepSetupFor sweep_setup = [&](int n, long batch, long prompt) {
      Request swept = cf;
      swept.batch = batch, swept.prompt_tokens = prompt;
      return setup_resolver(swept, model, asked_node, false, paths)(plotted, n);
    };
    const std::vector<SweepPoint> sweep =
        sweep_gpu_counts(*p.predictor, o.sweep_batches, o.sweep_prompts, o.counts, sweep_setup);
    RunManifest manifest(manifest_in_folder(o.plot_dir));
    const std::string warning =
        write_sweep(sweep, fmt::format("{} on {}, gen {}", model.id, plotted.id, request.gen_tokens), o.plot_dir);
    const std::string setups_warning = write_setups_plot(c, subject, o.plot_dir);
    manifest.commit();
    for (const std::string& w : {warning, setups_warning})
      if (!w.empty()) out.warnings.push_back(w);
  }
  const std::string unknown_note = unknown_embodied_note(c);
  out.json = {{"subject", subject},
              {"predictor", p.predictor->name()},
              {"latency", c.latency_meaning},
              {"setups", rows_json(c, evidence)},
              {"plot_dir", o.plot_dir.empty() ? Json() : Json(o.plot_dir)}};
  if (o.slo_ms) out.json["slo_ms"] = *o.slo_ms;
  const Json inputs = carbon_inputs_json(example);
  for (const char* key : {"region", "ci_g_per_kwh", "pue", "embodied_basis", "lifetime_years"})
    out.json[key] = inputs[key];
  out.json["energy_scope"] = cf.scope;
  if (!note.empty()) out.json["note"] = note;
  if (!unknown_note.empty()) out.json["embodied_note"] = unknown_note;
  if (!scope_note.empty()) out.json["scope_note"] = scope_note;
  std::string& t = out.text;
  t = subject + "; predictor " + p.predictor->name() + "; latency = " + c.latency_meaning + "\n" +
      table(c, o.slo_ms, evidence);
  if (c.best)
    t += fmt::format(
        "  * lowest carbon{}: {}{} x {} ({:.4g} g{})\n", o.slo_ms ? fmt::format(" meeting {} ms", *o.slo_ms) : "",
        c.rows[*c.best].gpus, c.rows[*c.best].stages > 1 ? fmt::format(" x {} stages", c.rows[*c.best].stages) : "",
        c.rows[*c.best].gpu, c.rows[*c.best].total_g(), c.rows[*c.best].embodied_known ? "" : ", operational only");
  else if (o.slo_ms) t += fmt::format("  no setup meets {} ms\n", *o.slo_ms);
  t += fmt::format("  grid {:.4g} gCO2e/kWh ({}); PUE {:.3g} ({}); embodied basis {}, lifetime {:.3g} years\n",
                   example.ci_g_per_kwh, example.ci_label, example.pue, example.pue_label,
                   embodied_basis_name(example.embodied.basis), example.lifetime_years);
  if (!note.empty()) t += "  " + note + "\n";
  if (!unknown_note.empty()) t += "  " + unknown_note + "\n";
  t += std::string("  energy scope: ") +
       (cf.scope == "gpu" ? "gpu (GPU board power)"
                          : "node (wall power of the node named in each row, the used GPUs' share)") +
       "\n";
  if (!scope_note.empty()) t += "  " + scope_note + "\n";
  t += fmt::format(
      "  evidence: each setup's label against the measured setups{} (docs/accuracy.md); its interval and bias in "
      "--format json\n",
      log_context ? fmt::format(" at the log's mean context of {:.0f} tokens", *log_context) : "");
  for (const auto& n : distinct_notes(c)) t += "  note: " + n + "\n";
  if (!o.plot_dir.empty())
    t += "  plots: " + o.plot_dir + "/setups.png (every setup above), " + o.plot_dir + "/co2-per-gpu.png, " +
         o.plot_dir + "/co2-total.png (GPU counts on " + plotted.id + ")\n";
  return out;
}

}  // namespace llmco2::api
