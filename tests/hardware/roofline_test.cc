// Roofline (paper eq. 9): P = min(Th, BW x ops/mem, NET x ops/net).
#include <gtest/gtest.h>

#include "hardware/roofline.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

const Roofs kRoofs{100.0, 10.0, 1.0};  // 100 op/s, 10 B/s memory, 1 B/s network; ridges 10 and 100 op/B

TEST(Roofline, RidgePoints) {
  EXPECT_DOUBLE_EQ(kRoofs.memory_ridge_ops_per_byte(), 10.0);
  EXPECT_DOUBLE_EQ(kRoofs.network_ridge_ops_per_byte(), 100.0);
}

TEST(Roofline, AboveTheRidgeIsComputeBound) {
  const auto p = roofline(1000, 50, 0, kRoofs);  // intensity 20 > 10
  EXPECT_EQ(p.bound, Bound::compute);
  EXPECT_DOUBLE_EQ(p.perf_ops_per_s, 100.0);
  EXPECT_DOUBLE_EQ(p.time_s, 10.0);
}

TEST(Roofline, BelowTheRidgeIsMemoryBound) {
  const auto p = roofline(100, 50, 0, kRoofs);  // intensity 2: P = 10 B/s x 2 op/B
  EXPECT_EQ(p.bound, Bound::memory);
  EXPECT_DOUBLE_EQ(p.perf_ops_per_s, 20.0);
  EXPECT_DOUBLE_EQ(p.time_s, 5.0);
}

TEST(Roofline, NetworkRoofForAllReduce) {
  const auto p = roofline(100, 10, 10, kRoofs);  // network intensity 10 op/B: P = 1 B/s x 10
  EXPECT_EQ(p.bound, Bound::network);
  EXPECT_DOUBLE_EQ(p.perf_ops_per_s, 10.0);
}

TEST(Roofline, NoNetworkOnOneGpu) {
  const auto p = roofline(100, 50, 10, Roofs{100.0, 10.0, 0.0});
  EXPECT_EQ(p.bound, Bound::memory);
}

}  // namespace
}  // namespace llmco2
