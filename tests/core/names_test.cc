// Suggestions for unknown names.
#include <gtest/gtest.h>

#include "core/names.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(Names, NormalizeLowersAndDashes) { EXPECT_EQ(normalize_name("NVIDIA_H100 SXM"), "nvidia-h100-sxm"); }

TEST(Names, NearestPrefersSubstringsThenEditDistance) {
  const std::vector<std::string> ids{"h100-sxm", "h100-pcie", "a100-80gb-sxm", "l4", "t4"};
  const auto near = nearest_names("h100", ids, 2);
  ASSERT_EQ(near.size(), 2u);
  EXPECT_EQ(near[0], "h100-sxm");
  EXPECT_EQ(near[1], "h100-pcie");
  EXPECT_EQ(nearest_names("l5", ids, 1)[0], "l4");
}

TEST(Names, NoSuggestionForANameLongerThanAnyCatalogName) {
  const std::vector<std::string> ids{"h100-sxm", "l4"};
  // 128 characters holding "l4" still get a suggestion; 129 get none (bounded work for junk input).
  EXPECT_EQ(nearest_names("l4" + std::string(126, 'x'), ids, 1), std::vector<std::string>{"l4"});
  EXPECT_TRUE(nearest_names("l4" + std::string(127, 'x'), ids, 1).empty());
}

TEST(Names, JoinOr) { EXPECT_EQ(join_or({"a", "b", "c"}), "a, b or c"); }

}  // namespace
}  // namespace llmco2
