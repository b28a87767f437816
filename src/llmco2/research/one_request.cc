// research/one_request.cc - one request through the graph and the reference simulator (`llmco2 graph`, `llmco2
// simulate`): research::kernel_graph and research::simulate.
#include <fmt/format.h>

#include "api/format.h"
#include "api/resolve.h"
#include "core/error.h"
#include "features/graph_writer.h"
#include "llmco2/research.h"
#include "research/module.h"
#include "sim/label.h"

namespace llmco2::research {

api::Result kernel_graph(const api::Request& request, const std::string& format, const std::string& phase) {
  if (format != "json" && format != "dot" && format != "summary")
    fail("graph: format '{}' (expected json, dot or summary)", format);
  if (phase != "prefill" && phase != "decode") fail("graph: phase '{}' (expected prefill or decode)", phase);
  const api::ResolvedRequest r = api::resolve_request(request, true);
  const KernelGraph graph = build_kernel_graph(r.model, r.request);
  const GraphFeatures features = compute_features(graph, r.gpu, r.request);
  const MemoryFit memory = memory_fit(r.model, r.request, r.gpu);
  const PricedGraph priced{r.model, r.gpu, r.request, graph, features, memory};
  api::Result result;
  result.warnings = r.notes;
  if (r.speculation.active())
    result.warnings.push_back(
        "--spec: this is the target model's graph; speculative decoding changes how the decode steps run (see "
        "simulate or predict), not the layer's kernels");
  if (format == "json") {
    result.json = graph_to_json(priced);
    result.text = result.json.dump(2) + "\n";
  } else if (format == "dot") {
    result.text = graph_to_dot(priced, phase == "prefill" ? Phase::prefill : Phase::decode);
  } else {
    result.text = graph_to_summary(priced);
  }
  return result;
}

namespace {

std::string simulation_table(const api::ResolvedRequest& r, const SimResult& s) {
  std::string out = api::request_line(r) + "\n";
  out += fmt::format("  {:<8} {:>12} {:>12}\n", "phase", "energy_j", "latency_s");
  out += fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "prefill", s.energy_j.prefill, s.latency_s.prefill);
  out += fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "decode", s.energy_j.decode, s.latency_s.decode);
  out += fmt::format("  {:<8} {:>12.4g} {:>12.4g}\n", "total", s.energy_j.total(), s.latency_s.total());
  out += fmt::format("  mean power {:.0f} W per GPU (idle {:.0f} W, TDP {:.0f} W)\n", s.mean_power_w, r.gpu.idle_w,
                     r.gpu.tdp_w);
  return out;
}

}  // namespace

api::Result simulate(const api::Request& request, const std::string& params_path) {
  const SimParams params = load_sim_params_or_default(params_path);
  const api::ResolvedRequest r = api::resolve_request(request, true);
  SimScenario scenario;
  scenario.power = r.power;
  scenario.speculation = r.speculation;
  const SimResult s = sim::simulate(r.model, r.gpu, r.request, scenario, params);
  api::Result result;
  result.warnings = r.notes;
  result.json = api::request_json(r);
  result.json.update(api::energy_scope_json(EnergyScope{}));  // the simulator meters the GPU boards, as NVML does
  result.json["energy_j"] = quantity_json(PhaseValues{s.energy_j.prefill, s.energy_j.decode, s.energy_j.total()});
  result.json["latency_s"] = quantity_json(PhaseValues{s.latency_s.prefill, s.latency_s.decode, s.latency_s.total()});
  result.json["mean_power_w_per_gpu"] = s.mean_power_w;
  result.text = simulation_table(r, s);
  return result;
}

}  // namespace llmco2::research
