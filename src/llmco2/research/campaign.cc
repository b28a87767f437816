// research/campaign.cc - our own GPU kernel campaign scored against the simulator as it stands (`llmco2
// score-campaign`): research::score_campaign.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "api/resolve.h"
#include "calibration/kernel_campaign.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_io.h"
#include "llmco2/research.h"
#include "research/module.h"
#include "sim/label.h"

namespace llmco2::research {

namespace {

struct FamilyScore {
  std::string op;
  std::vector<double> ratios;  // measured / predicted, per case
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Mean absolute percentage error of the prediction, from measured / predicted ratios r: |1/r - 1|.
double mape(const std::vector<double>& ratios) {
  double sum = 0;
  for (double r : ratios) sum += std::abs(1.0 / r - 1.0);
  return 100.0 * sum / static_cast<double>(ratios.size());
}

// The case's throughput: TFLOP/s for matrix work and prefill attention, GB/s for decode attention.
std::string throughput(const KernelSample& s) {
  if (s.op.rfind("decode", 0) == 0) return fmt::format("{:.0f} GB/s", s.work.mem_bytes / s.measured_s / 1e9);
  return fmt::format("{:.0f} TFLOP/s", s.work.ops / s.measured_s / 1e12);
}

std::string kernel_section(const std::vector<KernelSample>& samples, const KernelParams& kernels, int skipped,
                           Json& json) {
  std::vector<FamilyScore> families;
  std::string rows;
  for (const auto& s : samples) {
    const double predicted_s = predict_sample_s(s, kernels);
    const double ratio = s.measured_s / predicted_s;
    auto it = std::find_if(families.begin(), families.end(), [&](const FamilyScore& f) { return f.op == s.op; });
    if (it == families.end()) it = families.insert(families.end(), FamilyScore{s.op, {}});
    it->ratios.push_back(ratio);
    rows += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.2f} | {} |\n", s.op, s.group, s.tokens,
                        s.measured_s * 1e6, predicted_s * 1e6, ratio, throughput(s));
  }
  std::string out = "| operator family | cases | MAPE | median measured/predicted | lowest | highest |\n";
  out += "|---|---:|---:|---:|---:|---:|\n";
  json["kernels"] = Json::array();
  for (const auto& f : families) {
    const auto [lo, hi] = std::minmax_element(f.ratios.begin(), f.ratios.end());
    out += fmt::format("| {} | {} | {:.1f}% | {:.2f} | {:.2f} | {:.2f} |\n", f.op, f.ratios.size(), mape(f.ratios),
                       median(f.ratios), *lo, *hi);
    json["kernels"].push_back({{"op", f.op},
                               {"cases", f.ratios.size()},
                               {"mape_pct", mape(f.ratios)},
                               {"median_ratio", median(f.ratios)},
                               {"lowest_ratio", *lo},
                               {"highest_ratio", *hi}});
  }
  if (skipped > 0)
    out += fmt::format("\n{} case(s) failed on the GPU and are left out (their error is in the CSV).\n", skipped);
  out +=
      "\n### Every case\n\n| operator | case | rows | measured µs | predicted µs | measured/predicted | measured |\n";
  out += "|---|---|---:|---:|---:|---:|---:|\n" + rows;
  return out;
}

struct Predicted {
  double prefill_s = 0, itl_s = 0, energy_j = 0;
};

Predicted predict_closed_loop(const CampaignClosedLoop& c, const std::string& model, const std::string& gpu,
                              const std::string& engine, const SimParams& params) {
  api::Request request;
  request.model = model;
  request.gpu = gpu;
  request.batch = c.clients;
  request.prompt_tokens = c.isl;
  request.gen_tokens = c.osl;
  request.engine = engine;
  request.dtype = c.dtype;
  request.scope = "gpu";
  const api::ResolvedRequest r = api::resolve_request(request, false);
  SimScenario scenario;
  scenario.power = r.power;
  const SimResult s = sim::simulate(r.model, r.gpu, r.request, scenario, params);
  return {s.latency_s.prefill, s.latency_s.decode / static_cast<double>(c.osl - 1), s.energy_j.total()};
}

std::string closed_loop_section(const std::vector<CampaignClosedLoop>& loops, const CampaignScoreOptions& o,
                                const Gpu& gpu, const SimParams& params, Json& json) {
  std::string out =
      "| linear layers | clients | engine profile | prefill s (measured / predicted) | ITL ms (measured / predicted) | "
      "GPU energy J per round (measured / predicted) | J per output token (measured) | mean W (measured) |\n"
      "|---|---:|---|---|---|---|---:|---:|\n";
  json["closed_loop"] = Json::array();
  for (const auto& c : loops) {
    for (const auto& engine : o.engines) {
      const Predicted p = predict_closed_loop(c, o.model, gpu.id, engine, params);
      out += fmt::format(
          "| {} | {} | {} | {:.3f} / {:.3f} ({:.2f}) | {:.2f} / {:.2f} ({:.2f}) | {:.0f} / {:.0f} ({:.2f}) | "
          "{:.3f} | {:.0f} |\n",
          c.dtype, c.clients, engine, c.prefill_s, p.prefill_s, c.prefill_s / p.prefill_s, c.itl_s * 1e3, p.itl_s * 1e3,
          c.itl_s / p.itl_s, c.energy_j, p.energy_j, c.energy_j / p.energy_j,
          c.energy_j / static_cast<double>(c.clients * c.osl), c.avg_power_w);
      json["closed_loop"].push_back({{"dtype", c.dtype},
                                     {"clients", c.clients},
                                     {"engine", engine},
                                     {"isl", c.isl},
                                     {"osl", c.osl},
                                     {"rounds", c.rounds},
                                     {"measured_prefill_s", c.prefill_s},
                                     {"predicted_prefill_s", p.prefill_s},
                                     {"measured_itl_s", c.itl_s},
                                     {"predicted_itl_s", p.itl_s},
                                     {"measured_energy_j", c.energy_j},
                                     {"predicted_energy_j", p.energy_j}});
    }
  }
  out +=
      "\nRatios in brackets are measured / predicted. Each measured figure is the mean of the timed rounds (the "
      "first, warm-up round is left out).\n";
  return out;
}

// One run's section: its kernels and its closed loop, with the figures in `json`.
std::string run_section(const std::string& folder, const CampaignScoreOptions& o, const SimParams& params, Json& json) {
  const std::filesystem::path dir = folder;
  const Gpu gpu = campaign_gpu(dir);
  const Json env = read_json_file(dir / "env.json");
  int skipped = 0;
  const std::vector<KernelSample> samples = read_campaign_kernels(dir, gpu, &skipped);
  const std::vector<CampaignClosedLoop> loops = read_campaign_closed_loop(dir);
  json = {{"campaign", folder}, {"gpu", gpu.id}, {"model", o.model}};
  const bool dated = env.contains("date_utc") && env["date_utc"].is_string();
  std::string md = fmt::format("## `{}`: {}, {}\n\n", folder, gpu.name,
                               dated ? env["date_utc"].get<std::string>() : std::string("no date"));
  if (env.contains("idle_power_w") && env["idle_power_w"].is_number())
    md += fmt::format(
        "GPU board power at rest with a CUDA context open, before the run: {:.0f} W (the catalog's idle "
        "figure, for a board with no context: {:.0f} W).\n\n",
        env["idle_power_w"].get<double>(), gpu.idle_w);
  md += "### Kernels\n\n";
  if (samples.empty()) {
    md += "This run measured no kernel (only a closed loop).\n";
  } else {
    md +=
        "Time of one kernel: kernel_time_s on the work the simulator gives it (operations, DRAM bytes, rows; the "
        "GPU's datasheet peaks), against the CUDA-event time of back-to-back launches replayed from a CUDA graph.\n\n";
    md += kernel_section(samples, params.kernels, skipped, json);
  }
  md += fmt::format(
      "\n### Closed loop: {}, each client sending its next request when its last one ends, {} prompt "
      "and {} output tokens\n\n",
      o.model, loops.front().isl, loops.front().osl);
  return md + closed_loop_section(loops, o, gpu, params, json);
}

}  // namespace

api::Result score_campaign(const CampaignScoreOptions& o) {
  if (o.dirs.empty()) fail("score-campaign: no campaign folder given");
  const SimParams params = load_sim_params_or_default(o.params);
  api::Result result;
  result.json = {{"runs", Json::array()}};
  std::string& md = result.text;
  std::string folders;
  for (const auto& dir : o.dirs) folders += " " + dir;
  md = "# Our GPU campaigns scored against the simulator\n\n";
  md += fmt::format(
      "Generated by `llmco2 score-campaign{}`; do not edit. Measured: each folder below (how it was "
      "measured and what each column means: data/measured/gpu_campaign/SOURCE.md). Predicted: the "
      "simulator as it stands, with the kernel parameters fitted on Vidur's A100 and H100 profiles and "
      "NVIDIA's AIConfigurator kernel tables (data/sim/kernels.json) and the request-level parameters of "
      "data/sim/params.json; nothing was fitted on these rows.\n\n",
      folders);
  for (const auto& dir : o.dirs) {
    Json run;
    md += run_section(dir, o, params, run);
    result.json["runs"].push_back(std::move(run));
    md += "\n";
  }
  if (!o.report.empty()) write_file_atomic(o.report, md);
  return result;
}

}  // namespace llmco2::research
