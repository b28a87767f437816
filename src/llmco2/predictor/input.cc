// predictor/input.cc - predictor inputs from resolved requests and from dataset rows' simulations.
#include "predictor/input.h"

#include "sim/label.h"

namespace llmco2::predictor {

bool same_setup(const PredictorInput& a, const PredictorInput& b) {
  const Request &x = a.request, &y = b.request;
  const bool same_model = a.model == b.model || (a.model && b.model && *a.model == *b.model);
  const bool same_gpu = a.gpu == b.gpu || (a.gpu && b.gpu && *a.gpu == *b.gpu);
  return same_model && same_gpu && x.gpus == y.gpus && x.precision == y.precision &&
         x.flash_attention == y.flash_attention && x.engine == y.engine && x.expert_parallel == y.expert_parallel &&
         x.pipeline_parallel == y.pipeline_parallel && a.scenario == b.scenario;
}

PredictorInput predictor_input(const ModelSpec& model, const Gpu& gpu, const Request& request) {
  PredictorInput in;
  in.model = std::make_shared<const ModelSpec>(model);
  in.gpu = std::make_shared<const Gpu>(gpu);
  in.request = request;
  in.scenario.measures = plan_measures(request.batch);
  return in;
}

PredictorInput predictor_input(const SimConfig& config) {
  return {config.model, config.gpu, config.request, config.scenario, config.batch_scale};
}

}  // namespace llmco2::predictor
