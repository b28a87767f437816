// hardware/power_setting.h - what an operator sets on each GPU, a power limit (nvidia-smi -pl) and a locked SM clock
// (nvidia-smi -lgc), checked against the ranges the board documents.
#pragma once

#include "hardware/gpu.h"
#include "hardware/module.h"

namespace llmco2::hardware {

// The lowest share of its maximum SM clock a GPU runs at in llmco2's power model, throttled or locked (a GPU at its
// power limit under a full GEMM load still runs at ~0.3-0.4 of its boost clock; docs/simulator.md, Power).
inline constexpr double kMinClockShare = 0.3;

struct PowerSetting {
  double cap_w = 0;        // each GPU's power limit; 0: its TDP
  double clock_share = 1;  // the locked SM clock over the clock its tensor peaks are quoted at, at most 1
  bool operator==(const PowerSetting&) const = default;
};

// The setting of `cap_w` (0: the TDP) and `clock_mhz` (0: not locked) on `gpu`. A cap goes from the board's minimum
// power limit (nvidia-smi -q's Min Power Limit; where the catalog has none, above its idle power) to its TDP; a
// locked clock from kMinClockShare of the clock the board's tensor peaks are quoted at to its maximum SM clock, on
// boards whose clocks are sourced. A lock at or above the peaks' clock leaves the peaks as they are (clock_share 1):
// unlocked, the board runs them at that clock, power permitting. Throws Error naming the flag and the board's range.
PowerSetting checked_power_setting(const Gpu& gpu, double cap_w, double clock_mhz);

// The power each GPU may draw under `setting`: its cap, else its TDP.
double power_limit_w(const PowerSetting& setting, const Gpu& gpu);

}  // namespace llmco2::hardware
