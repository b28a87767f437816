// carbon/embodied.h - the embodied (manufacturing) carbon of one GPU on a stated basis, and the share of it a
// request is charged for the time it keeps the GPU busy.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "carbon/module.h"
#include "hardware/gpu.h"

namespace llmco2::carbon {

// llmcarbon: die area x carbon per area of the process node + memory x carbon per GB (LLMCarbon's parameters);
// vendor:    the vendor's product carbon footprint of the GPU, where the GPU file carries one;
// user:      a figure the user gives (--embodied-kg), e.g. from a PCF under NDA.
enum class EmbodiedBasis { llmcarbon, vendor, user };
std::string_view embodied_basis_name(EmbodiedBasis basis);
// The bases --embodied-basis offers: llmcarbon, and vendor once a GPU file of the catalog carries a sourced product
// carbon footprint (none of the bundled ones does yet; user is what --embodied-kg sets). Reads every GPU file.
std::vector<std::string> offered_embodied_bases();
EmbodiedBasis parse_embodied_basis(std::string_view name);  // throws Error naming the offered bases

// data/carbon/embodied.json: LLMCarbon's lifetime and memory carbon per GB.
struct EmbodiedParams {
  double lifetime_years = 5;
  double llmcarbon_memory_kgco2e_per_gb = 0.4;
};
EmbodiedParams read_embodied_params(const std::filesystem::path& path);  // throws Error naming file and key
const EmbodiedParams& bundled_embodied_params();

struct GpuEmbodied {
  std::optional<double> kgco2e;  // one GPU; unset: unknown (no sourced figure on this basis)
  EmbodiedBasis basis = EmbodiedBasis::llmcarbon;
  std::string derivation;  // how the figure was obtained, e.g. "8.14 cm2 x 1.8 kg/cm2 + 80 GB x 0.4 kg/GB = 46.65 kg"
  std::string gpu_id;      // the GPU it is for ("" when given by the user)

  bool known() const { return kgco2e.has_value(); }
  // "unknown (no sourced embodied figure for b200)", for the tables.
  std::string unknown_label() const;
};

// The GPU's embodied carbon on `basis`. On the llmcarbon basis a GPU without a published die area or without an
// LLMCarbon carbon per area for its node gets an unknown figure (kgco2e unset, the reason in `derivation`): its
// energy and operational CO2 are still reported. The vendor basis throws Error naming the GPU when its file has no PCF
// (the user asked for a basis no bundled GPU has).
GpuEmbodied gpu_embodied(const Gpu& gpu, EmbodiedBasis basis, const EmbodiedParams& params);

// Seconds in a lifetime of `years`, as LLMCarbon counts it (365-day years).
double lifetime_seconds(double years);

// Embodied carbon charged for keeping `gpus` GPUs busy for `busy_s`: kg x 1000 x busy_s / lifetime_s x gpus (g).
double embodied_g(double kgco2e_per_gpu, double busy_s, double lifetime_years, int gpus);

}  // namespace llmco2::carbon
