// hardware/fabric.cc - NVLink domain, node PCIe or scale-out network for a group of GPUs.
#include "hardware/fabric.h"

#include <algorithm>

#include <fmt/format.h>

#include "hardware/node.h"

namespace llmco2::hardware {

std::optional<FabricLink> fabric_joining(const Gpu& gpu, int total_gpus) {
  if (gpu.gpu_link && total_gpus <= gpu.gpu_link->max_gpus)
    return FabricLink{gpu.gpu_link->kind, gpu.gpu_link->bandwidth_bytes_per_s, kNvlinkSendLatencyS, false};
  const std::optional<Node> node = NodeCatalog::bundled_default_for(gpu.id);
  if (total_gpus <= (node ? node->gpus : 1))
    return FabricLink{gpu.host_link.kind, gpu.host_link.bandwidth_bytes_per_s, kNvlinkSendLatencyS, false};
  if (!node || node->scale_out_bytes_per_s_per_gpu <= 0) return std::nullopt;
  return FabricLink{node->scale_out_kind, node->scale_out_bytes_per_s_per_gpu, kNetworkSendLatencyS, true};
}

std::optional<FabricLink> network_between(const Gpu& a, const Gpu& b) {
  const std::optional<Node> na = NodeCatalog::bundled_default_for(a.id), nb = NodeCatalog::bundled_default_for(b.id);
  if (!na || !nb || na->scale_out_bytes_per_s_per_gpu <= 0 || nb->scale_out_bytes_per_s_per_gpu <= 0)
    return std::nullopt;
  const Node& slower = na->scale_out_bytes_per_s_per_gpu <= nb->scale_out_bytes_per_s_per_gpu ? *na : *nb;
  return FabricLink{slower.scale_out_kind, slower.scale_out_bytes_per_s_per_gpu, kNetworkSendLatencyS, true};
}

int nodes_spanned(const Gpu& gpu, int total_gpus) {
  const std::optional<Node> node = NodeCatalog::bundled_default_for(gpu.id);
  const int per_node = node ? std::max(1, node->gpus) : 1;
  return (total_gpus + per_node - 1) / per_node;
}

std::string node_name_for(const Gpu& gpu) {
  const std::optional<Node> node = NodeCatalog::bundled_default_for(gpu.id);
  return node ? node->id : fmt::format("no node file holding {}", gpu.id);
}

}  // namespace llmco2::hardware
