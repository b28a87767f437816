// dataset/architecture.h - the architecture fields of a dataset row, taken from a catalog model.
#pragma once

#include "dataset/module.h"
#include "dataset/record.h"
#include "model/model_spec.h"

namespace llmco2::dataset {

// Total and active parameters (billions), layers, widths, heads and, for MoE models, the experts and the width of one
// routed expert.
ArchitectureFields architecture_fields(const ModelSpec& model);

}  // namespace llmco2::dataset
