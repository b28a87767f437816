// The predictor registry (predictor/registry.h) says what ships: every bundled predictor but the simulator has its
// model file in data/predictors, of the kind its family names, trained on its recipe; no other predictor has one;
// and every interface offers exactly the bundled names.
#include <filesystem>

#include <gtest/gtest.h>

#include "api/resolve.h"
#include "core/paths.h"
#include "predictor/model_file.h"
#include "predictor/registry.h"
#include "support/all_modules.h"
#include "support/error_of.h"

namespace llmco2 {
namespace {

const char* file_kind(PredictorFamily family) {
  switch (family) {
    case PredictorFamily::gnn:
      return "gnn";
    case PredictorFamily::forest:
      return "deepen";
    case PredictorFamily::analytic:
      return "llmcarbon";
    case PredictorFamily::simulator:
      return "";
  }
  return "?";
}

TEST(PredictorRegistry, BundledModelFilesAreOfTheRegisteredKindAndRecipe) {
  int files = 0;
  for (const PredictorInfo& p : predictor_registry()) {
    const auto path = data_dir() / "predictors" / (std::string(p.name) + ".model");
    if (p.family == PredictorFamily::simulator || !p.bundled) {
      EXPECT_FALSE(std::filesystem::exists(path)) << p.name << ": a model ships that the registry does not offer";
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(path)) << p.name;
    const ModelFile file = read_model_file(path);
    EXPECT_EQ(file.header.value("kind", ""), file_kind(p.family)) << p.name;
    if (p.family == PredictorFamily::gnn) {
      EXPECT_EQ(file.header.value("features", ""), feature_set_name(p.recipe.features)) << p.name;
      EXPECT_EQ(file.header.value("scaling", ""), target_scaling_name(p.recipe.scaling)) << p.name;
      EXPECT_EQ(file.header.value("phase_outputs", !p.recipe.phase_outputs), p.recipe.phase_outputs) << p.name;
    }
    ++files;
  }
  EXPECT_EQ(files, 4);  // llmcarbon, deepen, nnlqp, llmco2 (data/predictors/README.md)
}

TEST(PredictorRegistry, InterfacesOfferTheBundledNamesAndTheSimulatorFirst) {
  const std::vector<std::string>& offered = api::predictor_names();
  ASSERT_FALSE(offered.empty());
  EXPECT_EQ(offered.front(), "sim");
  for (const PredictorInfo& p : predictor_registry()) {
    const bool listed = std::find(offered.begin(), offered.end(), p.name) != offered.end();
    EXPECT_EQ(listed, p.bundled) << p.name;
  }
  EXPECT_TRUE(predictor_loads_xgboost("deepen"));
  EXPECT_FALSE(predictor_loads_xgboost("llmco2"));
  EXPECT_FALSE(predictor_loads_xgboost("no-such-predictor"));
  EXPECT_NE(testing_support::error_of([] { predictor_info("gnn"); }).find("--predictor: unknown predictor 'gnn'"),
            std::string::npos);
}

}  // namespace
}  // namespace llmco2
