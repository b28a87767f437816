// hardware/power_setting.cc - power limits and locked clocks checked against each board's documented range.
#include "hardware/power_setting.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llmco2::hardware {
namespace {

double checked_cap_w(const Gpu& gpu, double cap_w) {
  if (!std::isfinite(cap_w) || cap_w < 0)
    fail("--power-cap: expected a GPU power limit in W (0: the TDP), got {}", cap_w);
  if (cap_w == 0) return cap_w;
  if (gpu.min_power_limit_w && !(cap_w >= *gpu.min_power_limit_w && cap_w <= gpu.tdp_w))
    fail("--power-cap {:g}: {} takes a power limit from {:g} W (its minimum) to {:g} W (its TDP)", cap_w, gpu.id,
         *gpu.min_power_limit_w, gpu.tdp_w);
  if (!(cap_w > gpu.idle_w && cap_w <= gpu.tdp_w))
    fail("--power-cap {:g}: {} takes a power limit above its idle {:g} W and at most its TDP {:g} W", cap_w, gpu.id,
         gpu.idle_w, gpu.tdp_w);
  return cap_w;
}

double checked_clock_share(const Gpu& gpu, double clock_mhz) {
  if (!std::isfinite(clock_mhz) || clock_mhz < 0)
    fail("--clock-mhz: expected a locked SM clock in MHz (0: not locked), got {}", clock_mhz);
  if (clock_mhz == 0) return 1.0;
  if (!gpu.max_sm_clock_mhz)
    fail(
        "--clock-mhz {:g}: {} has no sourced maximum SM clock in its GPU file ({}), so a locked clock cannot be "
        "related to its peaks; leave the clock unlocked or add max_sm_clock_mhz with its source",
        clock_mhz, gpu.id, gpu.source);
  const double max_mhz = *gpu.max_sm_clock_mhz, peak_mhz = *gpu.tensor_peak_clock();
  const double min_mhz = std::ceil(kMinClockShare * peak_mhz);
  if (!(clock_mhz >= min_mhz && clock_mhz <= max_mhz))
    fail(
        "--clock-mhz {:g}: {} takes a locked SM clock from {:g} MHz (the lowest llmco2's power model covers, {:g} "
        "of the {:g} MHz its peaks are quoted at) to {:g} MHz (its maximum)",
        clock_mhz, gpu.id, min_mhz, kMinClockShare, peak_mhz, max_mhz);
  return std::min(1.0, clock_mhz / peak_mhz);
}

}  // namespace

PowerSetting checked_power_setting(const Gpu& gpu, double cap_w, double clock_mhz) {
  return {checked_cap_w(gpu, cap_w), checked_clock_share(gpu, clock_mhz)};
}

double power_limit_w(const PowerSetting& setting, const Gpu& gpu) {
  return setting.cap_w > 0 ? std::min(setting.cap_w, gpu.tdp_w) : gpu.tdp_w;
}

}  // namespace llmco2::hardware
