// Tests of the bounded-memory latency histogram and the carbon-intensity profile, against values worked by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "carbon/ci_profile.h"
#include "core/error.h"
#include "core/log_histogram.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

TEST(LogHistogram, QuantilesOfOneToAThousandMillisecondsWithinHalfAPercent) {
  LogHistogram h;
  for (int ms = 1; ms <= 1000; ++ms) h.add(ms / 1000.0);
  EXPECT_EQ(h.count(), 1000);
  EXPECT_NEAR(h.mean(), 0.5005, 1e-12);               // (1 + 1000) / 2 ms, exact
  EXPECT_NEAR(h.quantile(0.5) / 0.5005, 1.0, 0.006);  // the order statistic at rank 0.5 x 999
  EXPECT_NEAR(h.quantile(0.99) / 0.99001, 1.0, 0.006);
  EXPECT_DOUBLE_EQ(h.quantile(0), 0.001);  // clamped to the smallest value
  EXPECT_DOUBLE_EQ(h.quantile(1), 1.0);
  const auto cdf = h.cdf();
  EXPECT_DOUBLE_EQ(cdf.back().second, 1.0);
  EXPECT_DOUBLE_EQ(cdf.back().first, 1.0);
}

std::filesystem::path write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path;
}

TEST(CiProfile, ChargesEachHourAtItsOwnIntensity) {
  const CiProfile p = CiProfile::read(write("ci.csv",
                                            "timestamp,g_per_kwh\n2023-11-16 18:00:00,300\n"
                                            "2023-11-16 19:00:00,100\n"));
  const double six_pm = p.first_s();
  EXPECT_DOUBLE_EQ(p.at(six_pm - 10), 300);  // before the first row: the first value
  EXPECT_DOUBLE_EQ(p.at(six_pm + 3600), 100);
  // 1 kWh spread evenly from 18:30 to 19:30: half at 300 g/kWh, half at 100, at PUE 1.2.
  EXPECT_NEAR(p.operational_g(3.6e6, six_pm + 1800, six_pm + 5400, 1.2), 1.2 * (150 + 50), 1e-9);
  EXPECT_THROW(CiProfile::read(write("bad.csv", "timestamp,g_per_kwh\n2023-11-16 18:00:00,abc\n")), Error);
  EXPECT_THROW(CiProfile::read(write("back.csv", "t,g\n2023-11-16 18:00:00,1\n2023-11-16 17:00:00,2\n")), Error);
}

}  // namespace
}  // namespace llmco2
