// carbon/embodied.h - the embodied (manufacturing) carbon of one GPU on a stated basis, and the share of it a
// request is charged for the time it keeps the GPU busy.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "hardware/gpu.h"

namespace llmco2 {

// llmcarbon: die area x carbon per area of the process node + memory x carbon per GB (LLMCarbon's parameters);
// vendor:    the vendor's product carbon footprint of the GPU, where the GPU file carries one;
// user:      a figure the user gives (--embodied-kg), e.g. from a PCF under NDA.
enum class EmbodiedBasis { llmcarbon, vendor, user };
std::string_view embodied_basis_name(EmbodiedBasis basis);
EmbodiedBasis parse_embodied_basis(std::string_view name);  // throws Error

// data/carbon/embodied.json: LLMCarbon's lifetime and memory carbon per GB.
struct EmbodiedParams {
  double lifetime_years = 5;
  double llmcarbon_memory_kgco2e_per_gb = 0.4;
};
EmbodiedParams read_embodied_params(const std::filesystem::path& path);  // throws Error naming file and key
const EmbodiedParams& bundled_embodied_params();

struct GpuEmbodied {
  double kgco2e = 0;       // one GPU
  EmbodiedBasis basis = EmbodiedBasis::llmcarbon;
  std::string derivation;  // how the figure was obtained, e.g. "8.14 cm2 x 1.8 kg/cm2 + 80 GB x 0.4 kg/GB = 46.65 kg"
};

// The GPU's embodied carbon on `basis`. Throws Error naming the GPU when the basis has no figure for it (no die area
// or no LLMCarbon CPA for its node; no vendor PCF).
GpuEmbodied gpu_embodied(const Gpu& gpu, EmbodiedBasis basis, const EmbodiedParams& params);

// Seconds in a lifetime of `years`, as LLMCarbon counts it (365-day years).
double lifetime_seconds(double years);

// Embodied carbon charged for keeping `gpus` GPUs busy for `busy_s`: kg x 1000 x busy_s / lifetime_s x gpus (g).
double embodied_g(double kgco2e_per_gpu, double busy_s, double lifetime_years, int gpus);

}  // namespace llmco2
