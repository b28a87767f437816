// hardware/roofline.h - the Roofline model (paper eq. 9) with compute, memory and network roofs.
#pragma once

#include <string_view>

#include "hardware/module.h"

namespace llmco2::hardware {

enum class Bound { compute, memory, network };
std::string_view bound_name(Bound bound);

// The roofs a kernel runs under on one GPU.
struct Roofs {
  double peak_ops_per_s = 0;
  double memory_bytes_per_s = 0;
  double network_bytes_per_s = 0;  // 0: no network (single GPU)

  double memory_ridge_ops_per_byte() const { return peak_ops_per_s / memory_bytes_per_s; }    // MRP
  double network_ridge_ops_per_byte() const { return peak_ops_per_s / network_bytes_per_s; }  // NRP
};

// Attainable performance of a kernel with `ops` operations, `mem_bytes` memory traffic and `net_bytes` network traffic:
//   P = min(Th, BW * ops/mem, NET * ops/net), and the roof that binds.
// time_s = max(ops/Th, mem/BW, net/NET) is the ideal (roof-limited) duration.
struct RooflinePoint {
  double perf_ops_per_s = 0;
  Bound bound = Bound::compute;
  double time_s = 0;
};

RooflinePoint roofline(double ops, double mem_bytes, double net_bytes, const Roofs& roofs);

}  // namespace llmco2::hardware
