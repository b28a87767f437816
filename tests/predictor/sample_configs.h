// tests/predictor/sample_configs.h - requests the prepared predictors are checked on against their plain paths.
#pragma once

#include <tuple>
#include <vector>

#include "sim/label.h"
#include "support/all_modules.h"

namespace llmco2 {

// A dense model on 1 GPU, a MoE on 2, a large dense model on 4 and a small GPU, each with the default request, a
// batch of 32 (batch scale 0.75), one without decode, and a batch of 512 x 8000 tokens (waves on the smaller GPUs).
inline std::vector<PredictorInput> sample_configs(CatalogCache& catalogs) {
  std::vector<PredictorInput> out;
  for (const auto& [model, gpu, gpus] : {std::tuple{"llama-3.1-8b", "h100-sxm", 1},
                                         {"mixtral-8x7b", "a100-80gb-sxm", 2},
                                         {"llama-3.1-70b", "h100-sxm", 4},
                                         {"llama-3.1-8b", "l4", 1}}) {
    PredictorInput c = predictor_input(default_config(model, gpu, catalogs));
    c.request.gpus = gpus;
    out.push_back(c);
    c.request.batch = 32, c.batch_scale = 0.75;
    out.push_back(c);
    c.request.gen_tokens = 1;
    out.push_back(c);
    c.request.batch = 512, c.request.prompt_tokens = 8000, c.request.gen_tokens = 128;
    out.push_back(c);
  }
  return out;
}

}  // namespace llmco2
