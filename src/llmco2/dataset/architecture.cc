// dataset/architecture.cc - architecture fields from a ModelSpec.
#include "dataset/architecture.h"

namespace llmco2::dataset {

ArchitectureFields architecture_fields(const ModelSpec& spec) {
  ArchitectureFields arch;
  arch.params_b = spec.total_params() / 1e9;
  arch.active_params_b = spec.active_params() / 1e9;
  if (spec.moe) {
    arch.experts = spec.moe->experts;
    arch.experts_per_token = spec.moe->experts_per_token;
  }
  arch.layers = spec.layers;
  arch.hidden = spec.hidden;
  arch.heads = spec.heads;
  arch.kv_heads = spec.max_kv_heads();
  arch.intermediate = spec.moe ? spec.moe->expert_intermediate : spec.intermediate;
  return arch;
}

}  // namespace llmco2::dataset
