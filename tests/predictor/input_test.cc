// The predictors' input type: the predictor, trace, compare and API headers reach every predictor without the
// dataset-labelling type (SimConfig, sim/label.h), and two resolutions of one setup are one setup.
#include <gtest/gtest.h>

#include <type_traits>

#include "api/resolve.h"
#include "compare/capacity.h"
#include "compare/setup_comparison.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "predictor/deepen.h"
#include "predictor/encoding.h"
#include "predictor/gnn.h"
#include "predictor/predictor.h"
#include "predictor/registry.h"
#include "predictor/setup_cache.h"
#include "support/all_modules.h"
#include "trace/shape_table.h"
#include "trace/trace_account.h"
#include "trace/trace_stream.h"

namespace llmco2 {
namespace {

template <class T, class = void>
struct IsComplete : std::false_type {};
template <class T>
struct IsComplete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

// This file includes no labelling header; if any header above did, SimConfig would be complete here.
static_assert(!IsComplete<SimConfig>::value, "a predictor-side header includes sim/label.h");

TEST(PredictorInput, AResolvedRequestIsAnIsolatedRunOfItsBatch) {
  const ModelSpec model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const Gpu gpu = GpuCatalog::bundled().resolve("h100-sxm");
  Request r;
  r.batch = 1;
  const PredictorInput one = predictor_input(model, gpu, r);
  EXPECT_EQ(one.scenario.measures, Measures::isolated);
  EXPECT_EQ(one.batch_scale, 1.0);
  r.batch = 8;
  const PredictorInput eight = predictor_input(model, gpu, r);
  EXPECT_EQ(eight.scenario.measures, Measures::fixed_batch);  // a batch of 8 run alone, as a fixed batch
  EXPECT_FALSE(same_setup(one, eight));                       // the scenario differs
  r.prompt_tokens *= 2;
  EXPECT_TRUE(same_setup(eight, predictor_input(model, gpu, r)));  // tokens are not part of a setup
  r.gpus = 2;
  EXPECT_FALSE(same_setup(eight, predictor_input(model, gpu, r)));
}

}  // namespace
}  // namespace llmco2
