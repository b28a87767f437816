// calibration/screening.h - measured rows whose pace a GPU cannot explain: a GPU at least as good on every datasheet
// figure ran the same work clearly slower than a weaker one, so something off the GPU (host, harness) set the pace.
#pragma once

#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/module.h"

namespace llmco2::calibration {

// How much slower, in time per generated token, a GPU at least as good on every figure may run the same work before
// its row is read as not GPU-bound. It covers the rows' repeat spread (a few %) and the interpolation of the weaker
// GPU's time between its batch points (linear in log batch, which overstates a convex step-time curve by up to ~10%
// at a batch doubling); a GPU-bound run on a better GPU is never slower at all (Gpu::at_least_as_good_as).
inline constexpr double kNotGpuBoundMargin = 1.25;

struct NotGpuBound {
  size_t sample = 0;  // index into CalibrationSet::samples
  std::string reason;
};

// The samples whose time per generated token exceeds kNotGpuBoundMargin x that of the same work on a GPU of the same
// vendor they are at least as good as (over the link their GPU count uses): the same source, model, dtype, engine,
// GPU count, parallelism, measures, task and prompt length, and output length (set for isolated batches; for steady
// states, measured means within 1.5x). The weaker GPU's time is interpolated at the sample's batch between its rows
// (in log batch, within its batch range +-10%), repeats at one batch taken at their median.
std::vector<NotGpuBound> not_gpu_bound(const CalibrationSet& set);

}  // namespace llmco2::calibration
