// tests/support/catalogs.h - a model or GPU of the bundled catalogs by id, as most tests start from one.
#pragma once

#include <string>

#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "support/all_modules.h"

namespace llmco2::testing_support {

inline ModelSpec model(const std::string& id) { return ModelCatalog::bundled().resolve(id); }
inline Gpu gpu(const std::string& id) { return GpuCatalog::bundled().resolve(id); }

}  // namespace llmco2::testing_support
