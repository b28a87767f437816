// research/site_plan.cc - `llmco2 plan-site`: the few benchmark configurations of one setup that pin its site
// corrections down best within a time budget, printed as the commands of the tool the site runs.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "calibration/site_fit.h"
#include "core/error.h"
#include "dataset/plan.h"
#include "llmco2/research.h"
#include "model/model_catalog.h"
#include "research/module.h"
#include "sim/label.h"
#include "sim/site_profile.h"

namespace llmco2::research {
namespace {

// The candidates: running batches (a closed loop's concurrency, or one batch's requests) against prompt and
// generation lengths that separate the corrections: long prompts load the compute (GEMM efficiency), long
// generations at large batch the memory bandwidth, short requests at batch 1 the host time per step.
constexpr long kBatches[] = {1, 4, 16, 64, 256};
constexpr std::pair<long, long> kLengths[] = {{128, 128}, {1024, 128}, {4096, 64}, {256, 1024}, {2048, 512}};

// Seconds a run costs beyond its requests: the client's start and warm-up (bench tools), idle sampling and the
// runner's start (llmco2 measure, docs/measure.md).
constexpr double kBenchOverhead_s = 15, kMeasureOverhead_s = 30;
// llmco2 measure runs each configuration 1 + 5 times, twice (prefill only, then whole): at most 12 whole runs.
constexpr double kMeasureRunsPerConfig = 12;

enum class Tool { vllm, trtllm, measure };

// llmco2 measure's reference runner (tools/runners/hf_transformers.py) runs Hugging Face transformers.
constexpr const char* kMeasureEngine = "hf-transformers";

Tool tool_of(const SitePlanOptions& o) {
  Tool tool = Tool::measure;
  if (o.tool == "vllm") tool = Tool::vllm;
  else if (o.tool == "trtllm") tool = Tool::trtllm;
  else if (!o.tool.empty() && o.tool != "measure")
    fail("plan-site --tool: expected vllm, trtllm or measure, got '{}'", o.tool);
  else if (o.tool.empty() && o.engine.rfind("vllm", 0) == 0) tool = Tool::vllm;
  else if (o.tool.empty() && o.engine == "trt-llm") tool = Tool::trtllm;
  if (tool == Tool::measure && o.engine != kMeasureEngine)
    fail("plan-site --tool measure: llmco2 measure's reference runner runs --engine {}, not {}", kMeasureEngine,
         o.engine);
  if (tool == Tool::vllm && o.engine.rfind("vllm", 0) != 0)
    fail("plan-site --tool vllm: vllm bench serve measures a vLLM engine, not --engine {}", o.engine);
  if (tool == Tool::trtllm && o.engine != "trt-llm")
    fail("plan-site --tool trtllm: trtllm-bench measures --engine trt-llm, not {}", o.engine);
  return tool;
}

const char* tool_name(Tool tool) {
  return tool == Tool::vllm ? "vllm bench serve" : tool == Tool::trtllm ? "trtllm-bench" : "llmco2 measure";
}

// A closed-loop benchmark keeps `batch` requests in flight (steady state); llmco2 measure runs the batch alone.
bool closed_loop(Tool tool) { return tool != Tool::measure; }
// vllm bench serve records no energy (docs/history/benchmark-result-schemas.md): its rows measure latency only.
bool measures_energy(Tool tool) { return tool != Tool::vllm; }

// Requests of one closed-loop run: 8 rounds of the concurrency (the ramp and the drain are a quarter of the run at
// most), and at least 32.
long requests_of(long concurrency) { return std::max(32L, 8 * concurrency); }

struct Candidate {
  PlanRow plan;
  DatasetRow row;
};

std::vector<Candidate> candidates_of(const SitePlanOptions& o, Tool tool, CatalogCache& catalogs) {
  std::vector<Candidate> out;
  for (long batch : kBatches)
    for (auto [prompt, gen] : kLengths) {
      PlanRow plan{.model = o.model,
                   .gpu = o.gpu,
                   .gpus = o.gpus,
                   .batch = batch,
                   .prompt = prompt,
                   .gen = gen,
                   .dtype = o.dtype,
                   .engine = o.engine};
      SimConfig config;
      try {
        config = config_for_plan(plan, catalogs);  // a request longer than the model's context is no candidate
      } catch (const Error&) {
        continue;
      }
      DatasetRow row = setup_row(config);
      row.source = "plan-site";
      row.dtype = o.dtype;
      row.batch = static_cast<double>(batch);
      row.prompt_tokens = static_cast<double>(prompt);
      row.gen_tokens = static_cast<double>(gen);
      if (closed_loop(tool)) {
        row.measures = Measures::steady_state;
        row.max_batch = row.batch;
        row.gen_tokens_cv = 0;  // fixed lengths (--ignore-eos)
      } else {
        row.measures = plan_measures(batch);
      }
      // Placeholders, replaced by the predictions once the row is prepared (tiny, so that no screening drops it).
      row.latency_s.total = 1e-9;
      if (measures_energy(tool)) row.energy_j.total = 1e-9;
      out.push_back({plan, std::move(row)});
    }
  return out;
}

// The seconds one candidate's run takes, about: its requests at the predicted time per request.
double run_seconds(Tool tool, const CalibrationSample& sample, const DatasetRow& row) {
  const double request_s = *sample.latency_s;
  if (!closed_loop(tool)) return kMeasureOverhead_s + kMeasureRunsPerConfig * request_s;
  const long batch = static_cast<long>(row.batch);
  return kBenchOverhead_s + static_cast<double>(requests_of(batch) / batch) * request_s;
}

std::string result_name(const std::string& stem, const DatasetRow& r, const char* extension) {
  return fmt::format("{}-c{}-in{}-out{}.{}", stem, r.batch, r.prompt_tokens, r.gen_tokens, extension);
}

std::string command_of(Tool tool, const SitePlanOptions& o, const std::string& hf, const DatasetRow& r) {
  const long requests = requests_of(static_cast<long>(r.batch));
  if (tool == Tool::vllm)
    return fmt::format(
        "vllm bench serve --model {} --dataset-name random --random-input-len {} --random-output-len {} "
        "--ignore-eos --max-concurrency {} --request-rate inf --num-prompts {} --save-result --result-filename {}",
        hf, r.prompt_tokens, r.gen_tokens, r.batch, requests, result_name(o.name, r, "json"));
  if (tool == Tool::trtllm) {
    const std::string dataset = result_name(o.name + "-data", r, "jsonl");
    return fmt::format(
        "trtllm-bench --model {0} prepare-dataset --output {1} token-norm-dist --num-requests {2} --input-mean {3} "
        "--output-mean {4} --input-stdev 0 --output-stdev 0 && trtllm-bench --model {0} throughput --dataset {1} "
        "--concurrency {5} --num_requests {2} --tp {6} --streaming --report_json {7}",
        hf, dataset, requests, r.prompt_tokens, r.gen_tokens, r.batch, o.gpus, result_name(o.name, r, "json"));
  }
  return "";
}

// What the chosen runs would pin down: each correction's posterior sd after them, at the global parameters.
std::string expected_precision(const SiteProfile& expected) {
  std::string out = "| correction | of | prior sd | sd after these runs | from the runs |\n|---|---|---:|---:|---:|\n";
  for (const SiteCorrection& c : expected.corrections) {
    const SiteKnobInfo& info = site_knob(c.knob);
    out += fmt::format("| {} | {} | {:.0f}% | {:.1f}% | {:.0f}% |\n", info.name, c.target, 100 * info.prior_sd,
                       100 * c.sd, 100 * c.data_share);
  }
  for (const std::string& note : expected.global) out += "\n- " + note;
  return out + "\n";
}

std::string next_steps(Tool tool, const SitePlanOptions& o, const std::string& hf) {
  const std::string calibrate = fmt::format(
      "llmco2 calibrate --site {} --data {}.csv\nllmco2 predict --model {} --gpu {} --gpus {} --site "
      "site-{}.json ...",
      o.name, o.name, o.model, o.gpu, o.gpus, o.name);
  if (tool == Tool::measure)
    return fmt::format(
        "llmco2 measure --plan {} --runner 'python3 tools/runners/hf_transformers.py' --out {}.csv\n{}\n", o.plan_out,
        o.name, calibrate);
  const std::string server =
      tool == Tool::vllm ? fmt::format("Before the runs: vllm serve {} --tensor-parallel-size {}\n", hf, o.gpus) : "";
  return fmt::format("{}Then:\nllmco2 import-bench --gpu {} --gpus {} --engine {} --out {}.csv {}-c*.json\n{}\n",
                     server, o.gpu, o.gpus, o.engine, o.name, o.name, calibrate);
}

}  // namespace

SitePlan plan_site(SitePlanOptions o) {
  if (o.plan_out.empty()) o.plan_out = o.name + "-plan.csv";
  if (o.model.empty() || o.gpu.empty()) fail("plan-site: --model and --gpu are required");
  if (!(o.minutes > 0 && o.minutes <= 24 * 60)) fail("plan-site --minutes: expected 0-1440, got {}", o.minutes);
  const Tool tool = tool_of(o);
  CatalogCache catalogs;
  std::vector<Candidate> candidates = candidates_of(o, tool, catalogs);
  std::vector<DatasetRow> rows;
  for (const Candidate& c : candidates) rows.push_back(c.row);
  CalibrationSet set = prepare_calibration(std::move(rows));
  if (set.samples.empty())
    fail("plan-site: no configuration of {} on {} x {} can be simulated (first: {})", o.model, o.gpus, o.gpu,
         set.skipped.empty() ? "no candidate fits the model's context" : set.skipped.front().reason);
  const SimParams global = load_sim_params_or_default(o.params);
  // Each candidate "measures" what the global parameters predict: the information at the global parameters.
  for (CalibrationSample& sample : set.samples) {
    const SimEstimate p = predict(sample, global);
    sample.latency_s = p.latency_s;
    if (sample.energy_j) sample.energy_j = p.energy_j;
  }
  std::vector<size_t> all(set.samples.size());
  for (size_t s = 0; s < all.size(); ++s) all[s] = s;
  const double budget_s = 60 * o.minutes;
  SitePlan plan;
  plan.tool = tool_name(tool);
  std::vector<size_t> chosen;
  // The most informative first (choose_site_rows' greedy order), each taken while the budget holds it.
  for (size_t s : choose_site_rows(set, all, global, all.size())) {
    const double seconds = run_seconds(tool, set.samples[s], set.rows[set.samples[s].row]);
    if (plan.expected_s + seconds > budget_s) continue;
    chosen.push_back(s);
    plan.expected_s += seconds;
  }
  if (chosen.empty()) fail("plan-site: no configuration fits {} minutes: give more --minutes", o.minutes);
  // The Hugging Face name the tools load (a config.json path stays a path).
  const ModelEntry* entry = ModelCatalog::bundled().find(o.model);
  const std::string hf = entry != nullptr && !entry->hf_repo.empty() ? entry->hf_repo : o.model;
  std::vector<PlanRow> plan_rows;
  for (size_t s : chosen) {
    const DatasetRow& r = set.rows[set.samples[s].row];
    const long batch = static_cast<long>(r.batch);
    plan.runs.push_back({batch, static_cast<long>(r.prompt_tokens), static_cast<long>(r.gen_tokens),
                         closed_loop(tool) ? requests_of(batch) : batch, run_seconds(tool, set.samples[s], r),
                         command_of(tool, o, hf, r)});
    plan_rows.push_back(candidates[set.samples[s].row].plan);
  }
  if (tool == Tool::measure) {
    write_plan(o.plan_out, plan_rows);
    plan.plan_written = o.plan_out;
  }
  const SiteProfile expected = fit_site(set, chosen, global, o.name);
  for (const SiteCorrection& c : expected.corrections) {
    const SiteKnobInfo& info = site_knob(c.knob);
    plan.expected.push_back({std::string(info.name), c.target, info.prior_sd, c.sd, c.data_share});
  }
  std::string& t = plan.text;
  t = fmt::format("plan-site: {} on {} x {} ({}), {} runs of {}, about {:.1f} of {} minutes\n\n", o.model, o.gpus,
                  o.gpu, o.engine, plan.runs.size(), plan.tool, plan.expected_s / 60, o.minutes);
  t += fmt::format("| # | {} | prompt | gen | requests | about |\n|---:|---:|---:|---:|---:|---:|\n",
                   closed_loop(tool) ? "concurrency" : "batch");
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const SitePlanRun& r = plan.runs[i];
    t += fmt::format("| {} | {} | {} | {} | {} | {:.0f} s |\n", i + 1, r.batch, r.prompt_tokens, r.gen_tokens,
                     r.requests, r.expected_s);
  }
  t += "\nWhat the runs pin down (expected, at the global parameters):\n\n" + expected_precision(expected);
  if (tool == Tool::measure) t += fmt::format("\nWrote {} ({} configurations). Then:\n", o.plan_out, plan_rows.size());
  else {
    t += "\nRuns:\n";
    for (const SitePlanRun& r : plan.runs) t += r.command + "\n";
    t += "\n";
  }
  t += next_steps(tool, o, hf);
  return plan;
}

}  // namespace llmco2::research
