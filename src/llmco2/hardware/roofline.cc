// hardware/roofline.cc - attainable performance under three roofs.
#include "hardware/roofline.h"

#include <algorithm>

namespace llmco2::hardware {

std::string_view bound_name(Bound bound) {
  switch (bound) {
    case Bound::compute:
      return "compute";
    case Bound::memory:
      return "memory";
    case Bound::network:
      return "network";
  }
  return "?";
}

RooflinePoint roofline(double ops, double mem_bytes, double net_bytes, const Roofs& roofs) {
  const double compute_s = ops / roofs.peak_ops_per_s;
  const double memory_s = mem_bytes / roofs.memory_bytes_per_s;
  const double network_s = (net_bytes > 0 && roofs.network_bytes_per_s > 0) ? net_bytes / roofs.network_bytes_per_s : 0;
  RooflinePoint point;
  point.time_s = std::max({compute_s, memory_s, network_s});
  point.bound = Bound::compute;
  if (memory_s > compute_s && memory_s >= network_s) point.bound = Bound::memory;
  if (network_s > compute_s && network_s > memory_s) point.bound = Bound::network;
  point.perf_ops_per_s = point.time_s > 0 ? ops / point.time_s : roofs.peak_ops_per_s;
  return point;
}

}  // namespace llmco2::hardware
