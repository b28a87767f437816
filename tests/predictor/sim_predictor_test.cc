// The sim predictor, which keeps a SetupSimulator per setup, against simulate() itself: the same figures to the bit,
// from a fresh predictor and from its kept states, and the same error for counts the model rejects.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.h"
#include "predictor/predictor.h"
#include "sample_configs.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(SimPredictor, PredictsAsSimulateToTheBit) {
  const SimParams params = load_sim_params(default_sim_params_path());
  const auto predictor = make_sim_predictor(params);
  CatalogCache catalogs;
  const std::vector<PredictorInput> configs = sample_configs(catalogs);
  for (int round = 0; round < 3; ++round)  // the plain path first, then the prepared states, made and kept
    for (const PredictorInput& c : configs) {
      const SimResult r = simulate(*c.model, *c.gpu, c.request, c.scenario, params);
      const Prediction p = predictor->predict(c);
      const std::string where =
          fmt::format("{} on {} x{} batch {} round {}", c.model->id, c.gpu->id, c.request.gpus, c.request.batch, round);
      EXPECT_EQ(*p.energy_j.prefill, r.energy_j.prefill * c.batch_scale) << where;
      EXPECT_EQ(*p.energy_j.decode, r.energy_j.decode * c.batch_scale) << where;
      EXPECT_EQ(*p.latency_s.prefill, r.latency_s.prefill) << where;
      EXPECT_EQ(*p.latency_s.decode, r.latency_s.decode) << where;
    }
}

// A row's simulation becomes a predictor input with its setup, request and batch scale, without its meter: a row
// metered over an NVML window (TokenPowerBench's) predicts as the same row metered exactly.
TEST(PredictorInput, ARowsSimulationKeepsAllButItsMeter) {
  CatalogCache catalogs;
  SimConfig metered = default_config("llama-3.1-8b", "h100-sxm", catalogs);
  metered.request.batch = 32, metered.batch_scale = 0.75, metered.scenario.data_parallel = 2;
  SimConfig exact = metered;
  metered.meter.run_scale = 4;
  const PredictorInput in = predictor_input(metered);
  EXPECT_EQ(in.model, metered.model);
  EXPECT_EQ(in.gpu, metered.gpu);
  EXPECT_EQ(in.request.batch, 32);
  EXPECT_EQ(in.batch_scale, 0.75);
  EXPECT_EQ(in.scenario.data_parallel, 2);
  const auto predictor = make_sim_predictor(load_sim_params(default_sim_params_path()));
  EXPECT_EQ(*predictor->predict(in).energy_j.total, *predictor->predict(predictor_input(exact)).energy_j.total);
}

TEST(SimPredictor, RejectsCountsWithSimulatesError) {
  const SimParams params = load_sim_params(default_sim_params_path());
  const auto predictor = make_sim_predictor(params);
  CatalogCache catalogs;
  PredictorInput c = predictor_input(default_config("llama-3.1-8b", "h100-sxm", catalogs));
  predictor->predict(c);
  predictor->predict(c);             // the setup's state is made and kept
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
