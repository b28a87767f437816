// hardware/host_power.cc - host DC power, fans, power-supply loss and the energy scope.
#include "hardware/host_power.h"

#include <algorithm>

#include <fmt/format.h>

namespace llmco2::hardware {

double fans_w(const Node& node, double heat_w) {
  const double speed = std::clamp(heat_w / node.design_power_w, 0.0, 1.0);
  return std::max(node.fans_idle_w, node.fans_max_w * speed * speed * speed);
}

double host_dc_w(const Node& n, double gpu_w, bool serving) {
  const double core_w = (n.cpu_tdp_w - n.cpu_idle_w) / n.cpu_cores_per_socket;
  const double busy_cores =
      serving ? std::min(kBusyCoresPerGpu * n.gpus, 1.0 * n.cpu_sockets * n.cpu_cores_per_socket) : 0;
  const double cpu_w = n.cpu_sockets * n.cpu_idle_w + busy_cores * core_w;
  const double memory_w = n.dimms * (serving ? n.dimm_active_w : n.dimm_idle_w);
  const double rest_w = cpu_w + memory_w + n.nics_w + n.gpu_fabric_w + n.storage_w + n.baseboard_w;
  return rest_w + fans_w(n, rest_w + n.gpus * gpu_w);
}

double psu_efficiency(const Node& n, double dc_w) {
  const auto& curve = n.psu_efficiency;
  const double load = dc_w / n.psu_capacity_w;
  if (load <= curve.front().first) return curve.front().second;
  for (size_t i = 1; i < curve.size(); ++i) {
    if (load > curve[i].first) continue;
    const auto [x0, y0] = curve[i - 1];
    const auto [x1, y1] = curve[i];
    return y0 + (y1 - y0) * (load - x0) / (x1 - x0);
  }
  return curve.back().second;
}

double node_wall_w(const Node& n, double gpu_w, bool serving) {
  const double dc_w = n.gpus * gpu_w + host_dc_w(n, gpu_w, serving);
  return dc_w / psu_efficiency(n, dc_w);
}

std::string EnergyScope::label() const {
  if (!node) return fallback.empty() ? "gpu (GPU board power, as NVML reads it)" : "gpu (" + fallback + ")";
  return fmt::format("node ({}: {}; wall power of GPUs, host and power supplies, the used GPUs' share of {}{})",
                     node->id, node->name, node->gpus, node->psu_assumed ? "; supplies assumed" : "");
}

double EnergyScope::metered_w(double gpu_w, bool serving) const {
  return node ? node_wall_w(*node, gpu_w, serving) / node->gpus : gpu_w;
}

double EnergyScope::metered_j(double gpu_energy_j, double time_s, int gpus) const {
  if (!node || time_s <= 0 || gpus <= 0) return gpu_energy_j;
  return metered_w(gpu_energy_j / (time_s * gpus), true) * gpus * time_s;
}

}  // namespace llmco2::hardware
