// predictor/input.h - what every predictor takes: one request on one resolved setup (model, GPU type and count,
// precision, engine, how the engine runs it), at the batch a measurement saw. Not the dataset-labelling type:
// `SimConfig` (sim/label.h) also says how a measured row was metered, which no predictor may see.
#pragma once

#include <memory>

#include "graph/request.h"
#include "hardware/gpu.h"
#include "model/model_spec.h"
#include "predictor/module.h"
#include "sim/simulator.h"

namespace llmco2::sim {
struct SimConfig;  // sim/label.h: a dataset or plan row as the simulator runs it
}  // namespace llmco2::sim

namespace llmco2::predictor {

struct PredictorInput {
  std::shared_ptr<const ModelSpec> model;
  std::shared_ptr<const Gpu> gpu;
  Request request;         // tokens and batch per replica, GPUs, precision, attention kernel, engine
  SimScenario scenario;    // isolated, fixed batch or steady state; parallelism, replicas, power setting
  double batch_scale = 1;  // the measured (mean) batch over the integer batch in `request`
};

// Whether two inputs share their setup: the same model and GPU (by value), GPU count, precision, attention kernel,
// engine and scenario. They may differ in batch, prompt, gen and batch scale. The predictors' per-setup state
// (predictor/setup_cache.h) is shared between inputs of one setup.
bool same_setup(const PredictorInput& a, const PredictorInput& b);

// A resolved model, GPU and request: an isolated run of its batch (fixed_batch when batch > 1).
PredictorInput predictor_input(const ModelSpec& model, const Gpu& gpu, const Request& request);

// What a dataset or plan row's simulation asks of a predictor: everything but its meter.
PredictorInput predictor_input(const SimConfig& config);

}  // namespace llmco2::predictor
