// cli/carbon_flags.cc - carbon flags.
#include "cli/carbon_flags.h"

namespace llmco2::cli {

void add_carbon_flags(CLI::App& c, api::Request& r) {
  c.add_option("--scope", r.scope,
               "energy counted: node (the node's wall power incl. CPUs, memory, fans and power supplies, the used "
               "GPUs' share; what a meter and PUE apply to) or gpu (the GPU boards' power, as NVML reads it)")
      ->check(CLI::IsMember({"node", "gpu"}))
      ->capture_default_str();
  c.add_option("--node", r.node,
               "server node for --scope node: an id of `llmco2 nodes` or a node JSON file "
               "(default: the GPU type's node in the catalog)");
  c.add_option("--region", r.region,
               "grid region: a country code (USA, FRA, ...), a cloud region (gcp:us-central1, aws:us-east-1, "
               "azure:westeurope) or WORLD (default)");
  c.add_option("--ci", r.ci_g_per_kwh, "grid carbon intensity in gCO2e/kWh (overrides the region's)");
  c.add_option("--pue", r.pue,
               "data-centre PUE: a number, or gcp, aws, azure, industry-average, public-cloud-average, on-prem-average "
               "(default: the cloud region's provider, else 1.0)");
  c.add_option("--lifetime", r.lifetime_years, "GPU lifetime in years for embodied carbon (default 5, LLMCarbon's)");
  // The help names vendor without asking the catalog whether a GPU file offers it (that reads every GPU file, at the
  // start-up of every command); parse_embodied_basis refuses it, saying why, while none does.
  c.add_option("--embodied-basis", r.embodied_basis,
               "embodied carbon per GPU: llmcarbon (die area x carbon per area + memory); vendor (a GPU file's product "
               "carbon footprint) once a GPU file carries one, which no bundled one does")
      ->capture_default_str();
  c.add_option("--embodied-kg", r.embodied_kg, "embodied carbon of one GPU in kgCO2e (your own figure)");
}

}  // namespace llmco2::cli
