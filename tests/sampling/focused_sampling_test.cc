// Focused sampling: every configuration fits, comes from the traces and is reproducible.
#include <gtest/gtest.h>

#include <set>

#include "features/memory_fit.h"
#include "hardware/gpu_catalog.h"
#include "model/model_catalog.h"
#include "sampling/focused_sampling.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

SamplingSpace space() {
  SamplingSpace s;
  s.models = paper_models();
  s.gpus = {"t4", "l4", "a100-80gb-sxm", "h100-sxm"};
  s.requests = bundled_azure_requests();
  return s;
}

TEST(AzureTrace, HasBothTracesRows) {
  // SOURCE.md of the traces: 8,819 code and 19,366 conversation requests.
  EXPECT_EQ(bundled_azure_requests().size(), 8819u + 19366u);
}

TEST(FocusedSampling, PaperModelsAreTheSeventeenOfSection4) {
  EXPECT_EQ(paper_models().size(), 17u);
  for (const auto& id : paper_models()) EXPECT_NO_THROW(ModelCatalog::bundled().resolve(id)) << id;
}

TEST(FocusedSampling, EveryConfigurationFitsAndComesFromTheTraces) {
  std::set<std::pair<long, long>> traced;
  for (const auto& r : bundled_azure_requests()) traced.insert({r.prompt_tokens, r.gen_tokens});
  const auto plan = sample_plan(space(), 400, 7);
  ASSERT_EQ(plan.size(), 400u);
  for (const auto& row : plan) {
    EXPECT_TRUE(traced.count({row.prompt, row.gen})) << row.prompt << " " << row.gen;
    EXPECT_GE(row.batch, 1);
    EXPECT_LE(row.batch, 4);
    EXPECT_GE(row.gpus, 1);
    EXPECT_LE(row.gpus, 4);
    const ModelSpec model = ModelCatalog::bundled().resolve(row.model);
    Request r;
    r.batch = row.batch;
    r.prompt_tokens = row.prompt;
    r.gen_tokens = row.gen;
    r.gpus = row.gpus;
    r.precision = precision_or_default("", model.default_dtype);
    EXPECT_NO_THROW(validate_request(r, model));
    EXPECT_TRUE(plan_memory(model, r, GpuCatalog::bundled().resolve(row.gpu)).runs()) << row.model << " " << row.gpu;
  }
}

TEST(FocusedSampling, SeventyBillionModelsNeedSeveralGpus) {
  // Llama-3.1-70B in bf16 holds ~141 GB of weights: never on one 80 GB GPU, never on T4s (4 x 16 GB).
  SamplingSpace s = space();
  s.models = {"llama-3.1-70b"};
  s.gpus = {"a100-80gb-sxm", "t4"};
  for (const auto& row : sample_plan(s, 50, 3)) {
    EXPECT_EQ(row.gpu, "a100-80gb-sxm");
    EXPECT_GE(row.gpus, 2);
  }
}

TEST(FocusedSampling, SameSeedSamePlan) {
  const auto a = sample_plan(space(), 50, 11), b = sample_plan(space(), 50, 11), c = sample_plan(space(), 50, 12);
  EXPECT_EQ(plan_to_csv(a), plan_to_csv(b));
  EXPECT_NE(plan_to_csv(a), plan_to_csv(c));
}

TEST(FocusedSampling, FineGrainedSamplesStayWithinThePapersRanges) {
  const auto centres = sample_plan(space(), 5, 5);
  const auto around = sample_around(centres, 20, 9);
  EXPECT_GT(around.size(), 50u);
  for (const auto& row : around) {
    bool near_a_centre = false;
    for (const auto& c : centres)
      near_a_centre |= c.model == row.model && c.gpu == row.gpu && c.gpus == row.gpus && c.batch == row.batch &&
                       std::abs(c.prompt - row.prompt) <= 10 && std::abs(c.gen - row.gen) <= 1;
    EXPECT_TRUE(near_a_centre);
  }
}

}  // namespace
}  // namespace llmco2
