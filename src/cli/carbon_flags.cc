// cli/carbon_flags.cc - carbon flags and the footprint's JSON and table forms.
#include "cli/carbon_flags.h"

#include <fmt/format.h>

#include "carbon/region_catalog.h"
#include "core/error.h"
#include "hardware/node.h"

namespace llmco2::cli {
namespace {

constexpr double kJoulesPerWh = 3600.0;

Json phases_json(const PhaseValues& v, double scale = 1.0) {
  Json j = Json::object();
  for (const auto& c : kPhaseMembers)
    if (v.*c.value) j[c.name] = *(v.*c.value) * scale;
  return j;
}

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
    text += fmt::format(" [{:.3g}-{:.3g}]", (iv.*c.interval)->low * scale, (iv.*c.interval)->high * scale);
  return text;
}

// The note under a footprint whose GPU has no embodied figure: its total CO2 is the operational CO2 alone.
std::string operational_only_note(const Footprint& f) {
  return fmt::format("total CO2 is operational only: embodied CO2 {}; give --embodied-kg to add it",
                     *f.embodied_unknown);
}

double check_range(double value, double low, double high, const char* flag, const char* what) {
  if (!(value >= low && value <= high)) fail("{}: expected {} between {} and {}, got {}", flag, what, low, high, value);
  return value;
}

}  // namespace

void add_carbon_flags(CLI::App& c, CarbonFlags& f) {
  c.add_option("--scope", f.scope,
               "energy counted: node (the node's wall power incl. CPUs, memory, fans and power supplies, the used "
               "GPUs' share; what a meter and PUE apply to) or gpu (the GPU boards' power, as NVML reads it)")
      ->check(CLI::IsMember({"node", "gpu"}))
      ->capture_default_str();
  c.add_option("--node", f.node, "server node for --scope node: an id of `llmco2 nodes` or a node JSON file "
                                 "(default: the GPU type's node in the catalog)");
  c.add_option("--region", f.region,
               "grid region: a country code (USA, FRA, ...), a cloud region (gcp:us-central1, aws:us-east-1, "
               "azure:westeurope) or WORLD (default)");
  c.add_option("--ci", f.ci, "grid carbon intensity in gCO2e/kWh (overrides the region's)");
  c.add_option("--pue", f.pue,
               "data-centre PUE: a number, or gcp, aws, azure, industry-average, public-cloud-average, on-prem-average "
               "(default: the cloud region's provider, else 1.0)");
  c.add_option("--lifetime", f.lifetime_years, "GPU lifetime in years for embodied carbon (default 5, LLMCarbon's)");
  c.add_option("--embodied-basis", f.embodied_basis, "llmcarbon (die area x carbon per area + memory) or vendor (PCF)")
      ->capture_default_str();
  c.add_option("--embodied-kg", f.embodied_kg, "embodied carbon of one GPU in kgCO2e (your own figure)");
}

EnergyScope resolve_scope(const CarbonFlags& f, const Gpu& gpu) {
  EnergyScope scope;
  if (f.scope == "gpu") {
    if (!f.node.empty()) fail("--node {}: only used with --scope node", f.node);
    return scope;
  }
  if (!f.node.empty()) {
    scope.node = NodeCatalog::bundled().resolve(f.node);
    if (scope.node->gpu != gpu.id)
      fail("--node {}: that node holds {} GPUs, not {}", f.node, scope.node->gpu, gpu.id);
  } else if (const Node* node = NodeCatalog::bundled().default_for(gpu.id)) {
    scope.node = *node;
  } else {
    scope.fallback = fmt::format("no node in the catalog holds {}: GPU energy only; give --node FILE.json", gpu.id);
  }
  return scope;
}

CarbonInputs resolve_carbon(const CarbonFlags& f, const Gpu& gpu, int gpus) {
  const RegionCatalog& catalog = RegionCatalog::bundled();
  CarbonInputs in;
  in.gpus = gpus;
  in.scope = resolve_scope(f, gpu);
  const Region& region = catalog.resolve(f.region.empty() ? "WORLD" : f.region);
  in.region = region.id;
  if (f.ci) {
    in.ci_g_per_kwh = check_range(*f.ci, 0, 2000, "--ci", "a carbon intensity in g/kWh");
    in.ci_label = in.ci_source = "given with --ci";
    if (f.region.empty()) in.region = "--ci";
  } else {
    in.ci_g_per_kwh = region.ci_g_per_kwh;
    in.ci_label = fmt::format("{} ({}), {}", region.name, region.id, region.year);
    if (f.region.empty()) in.ci_label = "default region, pass --region or --ci: " + in.ci_label;
    in.ci_source = in.ci_label + ": " + region.source;
  }
  if (!f.pue.empty()) {
    const PueEntry pue = catalog.resolve_pue(f.pue);
    in.pue = pue.pue;
    in.pue_label = pue.year ? fmt::format("{}, {}", pue.id, pue.year) : pue.source;
    in.pue_source = pue.year ? in.pue_label + ": " + pue.source : pue.source;
  } else if (const PueEntry* provider = catalog.find_pue(region.provider); provider && region.kind == "cloud") {
    in.pue = provider->pue;
    in.pue_label = fmt::format("{} fleet average, {}", provider->id, provider->year);
    in.pue_source = in.pue_label + ": " + provider->source;
  } else {
    in.pue = 1.0;
    in.pue_label = "unknown for this region: 1.0 assumed, IT energy only; pass --pue";
    in.pue_source = "unknown for this region: 1.0 assumed (IT energy only); pass --pue, e.g. --pue industry-average";
  }
  const EmbodiedParams& params = bundled_embodied_params();
  in.lifetime_years = f.lifetime_years ? check_range(*f.lifetime_years, 0.1, 30, "--lifetime", "years")
                                       : params.lifetime_years;
  if (f.embodied_kg) {
    const double kg = check_range(*f.embodied_kg, 0, 100000, "--embodied-kg", "kgCO2e per GPU");
    in.embodied = {kg, EmbodiedBasis::user, fmt::format("given with --embodied-kg: {:.4g} kg per GPU", kg), gpu.id};
  } else {
    in.embodied = gpu_embodied(gpu, parse_embodied_basis(f.embodied_basis), params);
  }
  return in;
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
            {"energy_j", phases_json(f.energy_j)},
            {"energy_wh", phases_json(f.energy_j, 1.0 / kJoulesPerWh)},
            {"latency_s", phases_json(f.latency_s)},
            {"co2_g",
             {{"operational", phases_json(f.operational_g)},
              {"embodied", f.embodied_unknown ? Json() : phases_json(f.embodied_g)},
              {"total", phases_json(f.total_g)}}}};
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

}  // namespace llmco2::cli
