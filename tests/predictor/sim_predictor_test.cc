// The sim predictor, which keeps a SetupSimulator per setup, against simulate() itself: the same figures to the bit,
// from a fresh predictor and from its kept states, and the same error for counts the model rejects.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.h"
#include "predictor/predictor.h"
#include "sample_configs.h"

namespace llmco2 {
namespace {

TEST(SimPredictor, PredictsAsSimulateToTheBit) {
  const SimParams params = load_sim_params(default_sim_params_path());
  const auto predictor = make_sim_predictor(params);
  CatalogCache catalogs;
  const std::vector<SimConfig> configs = sample_configs(catalogs);
  for (int round = 0; round < 3; ++round)  // the plain path first, then the prepared states, made and kept
    for (const SimConfig& c : configs) {
      const SimResult r = simulate(*c.model, *c.gpu, c.request, c.scenario, params);
      const Prediction p = predictor->predict(c);
      const std::string where = fmt::format("{} on {} x{} batch {} round {}", c.model->id, c.gpu->id, c.request.gpus,
                                            c.request.batch, round);
      EXPECT_EQ(*p.energy_j.prefill, r.energy_j.prefill * c.batch_scale) << where;
      EXPECT_EQ(*p.energy_j.decode, r.energy_j.decode * c.batch_scale) << where;
      EXPECT_EQ(*p.latency_s.prefill, r.latency_s.prefill) << where;
      EXPECT_EQ(*p.latency_s.decode, r.latency_s.decode) << where;
    }
}

TEST(SimPredictor, RejectsCountsWithSimulatesError) {
  const SimParams params = load_sim_params(default_sim_params_path());
  const auto predictor = make_sim_predictor(params);
  CatalogCache catalogs;
  SimConfig c = default_config("llama-3.1-8b", "h100-sxm", catalogs);
  predictor->predict(c);
  predictor->predict(c);  // the setup's state is made and kept
  c.request.prompt_tokens = 200000;  // past the 131,072-token context window
  std::string expected, got;
  try {
    simulate(*c.model, *c.gpu, c.request, c.scenario, params);
  } catch (const Error& e) {
    expected = e.what();
  }
  try {
    predictor->predict(c);
  } catch (const Error& e) {
    got = e.what();
  }
  EXPECT_NE(expected, "");
  EXPECT_EQ(got, expected);
  c.request.prompt_tokens = 777;  // the kept state still answers after the rejection
  const SimResult r = simulate(*c.model, *c.gpu, c.request, c.scenario, params);
  EXPECT_EQ(*predictor->predict(c).energy_j.total, r.energy_j.prefill + r.energy_j.decode);
}

}  // namespace
}  // namespace llmco2
