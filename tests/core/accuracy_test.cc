// MAPE and EBA on values worked out by hand.
#include <gtest/gtest.h>

#include "core/accuracy.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(Accuracy, MapeAndErrorBounds) {
  AccuracyCounter c;
  c.add(110, 100);  // 10%
  c.add(96, 100);   // 4%
  c.add(150, 100);  // 50%
  c.add(100, 100);  // 0%
  const Accuracy a = c.result();
  EXPECT_EQ(a.n, 4u);
  EXPECT_NEAR(a.mape, (0.10 + 0.04 + 0.50 + 0.0) / 4, 1e-12);
  EXPECT_DOUBLE_EQ(a.eba5, 0.5);    // 4% and 0%
  EXPECT_DOUBLE_EQ(a.eba10, 0.75);  // + 10%
  EXPECT_DOUBLE_EQ(a.eba30, 0.75);
}

TEST(Accuracy, EmptyIsZero) { EXPECT_EQ(AccuracyCounter().result().n, 0u); }

}  // namespace
}  // namespace llmco2
