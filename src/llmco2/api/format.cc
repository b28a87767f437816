// api/format.cc - the JSON documents and tables of requests, carbon inputs and footprints.
#include "api/format.h"

#include <fmt/format.h>

namespace llmco2::api {
namespace {

constexpr double kJoulesPerWh = 3600.0;

Json intervals_json(const PhaseIntervals& v, double scale = 1.0) {
  Json j = Json::object();
  for (const auto& c : kPhaseMembers)
    if (v.*c.interval) j[c.name] = {(v.*c.interval)->low * scale, (v.*c.interval)->high * scale};
  return j;
}

std::string cell(const PhaseValues& v, const PhaseIntervals& iv, const PhaseMember& c, bool intervals, double scale) {
  if (!(v.*c.value)) return "-";
  std::string text = fmt::format("{:.4g}", *(v.*c.value) * scale);
  if (intervals && (iv.*c.interval))
    text += fmt::format(" [{:.3g}, {:.3g}]", (iv.*c.interval)->low * scale, (iv.*c.interval)->high * scale);
  return text;
}

// The note under a footprint whose GPU has no embodied figure: its total CO2 is the operational CO2 alone.
std::string operational_only_note(const Footprint& f) {
  return fmt::format("total CO2 is operational only: embodied CO2 {}; give --embodied-kg to add it",
                     *f.embodied_unknown);
}

}  // namespace

Json request_json(const ResolvedRequest& r) {
  return {{"model", r.model.id},
          {"gpu", r.gpu.id},
          {"gpus", r.request.gpus},
          {"pipeline_parallel", r.request.pipeline_parallel},
          {"batch", r.request.batch},
          {"prompt_tokens", r.request.prompt_tokens},
          {"gen_tokens", r.request.gen_tokens},
          {"dtype", r.request.precision.to_string()},
          {"engine", r.request.engine},
          {"expert_parallel", r.request.expert_parallel},
          {"speculation", speculation_json(r.speculation)},
          {"waves", r.waves},
          {"notes", r.notes}};
}

Json speculation_json(const Speculation& s) {
  if (!s.active()) return nullptr;
  return {{"method", s.method},
          {"draft_tokens", s.draft_tokens},
          {"tokens_per_step", s.tokens_per_step()},
          {"draft", s.draft ? Json(s.draft->id) : Json()},
          {"acceptance_basis", s.acceptance_basis}};
}

std::string stages_words(const graph::Request& r) {
  return r.pipeline_parallel > 1 ? fmt::format(" x {} stages", r.pipeline_parallel) : "";
}

std::string request_line(const ResolvedRequest& r) {
  const std::string spec = r.speculation.active()
                               ? fmt::format(", {} speculation k={} ({:.2f} tokens per step)", r.speculation.method,
                                             r.speculation.draft_tokens, r.speculation.tokens_per_step())
                               : "";
  return fmt::format("{} on {}{} x {} ({}{}{}), batch {}, prompt {}, gen {}, {}", r.model.id, r.request.gpus,
                     stages_words(r.request), r.gpu.id, r.request.engine,
                     r.request.expert_parallel ? ", expert parallel" : "", spec, r.request.batch,
                     r.request.prompt_tokens, r.request.gen_tokens, r.request.precision.to_string());
}

Json energy_scope_json(const EnergyScope& scope) {
  return {{"energy_scope", scope.name()},
          {"node", scope.node ? Json(scope.node->id) : Json()},
          {"energy_scope_label", scope.label()}};
}

Json carbon_inputs_json(const CarbonInputs& in) {
  Json j = energy_scope_json(in.scope);
  j.update(Json{{"region", in.region},
                {"ci_g_per_kwh", in.ci_g_per_kwh},
                {"ci_source", in.ci_source},
                {"pue", in.pue},
                {"pue_source", in.pue_source},
                {"embodied_basis", embodied_basis_name(in.embodied.basis)},
                {"embodied_kg_per_gpu", in.embodied.kgco2e ? Json(*in.embodied.kgco2e) : Json()},
                {"embodied_derivation", in.embodied.derivation},
                {"lifetime_years", in.lifetime_years},
                {"gpus", in.gpus}});
  return j;
}

Json footprint_json(const Footprint& f, double level) {
  Json j = {{"energy_scope", f.energy_scope},
            {"energy_j", quantity_json(f.energy_j)},
            {"energy_wh", quantity_json(f.energy_j, 1.0 / kJoulesPerWh)},
            {"latency_s", quantity_json(f.latency_s)},
            {"co2_g",
             {{"operational", quantity_json(f.operational_g)},
              {"embodied", f.embodied_unknown ? Json() : quantity_json(f.embodied_g)},
              {"total", quantity_json(f.total_g)}}}};
  if (f.embodied_unknown) j["co2_note"] = operational_only_note(f);
  if (f.has_intervals)
    j["intervals"] = {{"level", level},
                      {"energy_j", intervals_json(f.energy_j_interval)},
                      {"energy_wh", intervals_json(f.energy_j_interval, 1.0 / kJoulesPerWh)},
                      {"latency_s", intervals_json(f.latency_s_interval)},
                      {"co2_g",
                       {{"operational", intervals_json(f.operational_g_interval)},
                        {"embodied", f.embodied_unknown ? Json() : intervals_json(f.embodied_g_interval)},
                        {"total", intervals_json(f.total_g_interval)}}}};
  return j;
}

std::string footprint_table(const Footprint& f) {
  struct Row {
    const char* label;
    const PhaseValues& values;
    const PhaseIntervals& intervals;
    double scale;
  };
  const Row rows[] = {{"energy (J)", f.energy_j, f.energy_j_interval, 1.0},
                      {"energy (Wh)", f.energy_j, f.energy_j_interval, 1.0 / kJoulesPerWh},
                      {"latency (s)", f.latency_s, f.latency_s_interval, 1.0},
                      {"operational CO2 (g)", f.operational_g, f.operational_g_interval, 1.0},
                      {"embodied CO2 (g)", f.embodied_g, f.embodied_g_interval, 1.0},
                      {f.embodied_unknown ? "total CO2 (g)*" : "total CO2 (g)", f.total_g, f.total_g_interval, 1.0}};
  std::string out = fmt::format("  {:<20} {:<30} {:<30} {}\n", "", "prefill", "decode", "total");
  for (const auto& r : rows) {
    out += fmt::format("  {:<20}", r.label);
    if (f.embodied_unknown && &r.values == &f.embodied_g) {
      out += " " + *f.embodied_unknown + "\n";
      continue;
    }
    for (const auto& c : kPhaseMembers)
      out += fmt::format(" {:<30}", cell(r.values, r.intervals, c, f.has_intervals, r.scale));
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  if (f.embodied_unknown) out += "  * " + operational_only_note(f) + "\n";
  return out;
}

std::string carbon_inputs_lines(const CarbonInputs& in) {
  return fmt::format(
      "  energy scope: {}\n"
      "  grid {:.4g} gCO2e/kWh ({}); PUE {:.3g} ({})\n"
      "  embodied basis {}: {}; lifetime {:.3g} years; {} GPU(s)\n",
      in.scope.label(), in.ci_g_per_kwh, in.ci_label, in.pue, in.pue_label, embodied_basis_name(in.embodied.basis),
      in.embodied.derivation, in.lifetime_years, in.gpus);
}

}  // namespace llmco2::api
