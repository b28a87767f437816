// hardware/fabric.h - the link that joins a group of GPUs (their NVLink domain, one node's PCIe, or the network
// between nodes from the node catalog), as pipeline stages and disaggregated prefill and decode pools use it.
#pragma once

#include <optional>
#include <string>

#include "hardware/gpu.h"
#include "hardware/module.h"

namespace llmco2::hardware {

// One NCCL send's fixed cost: ~3 us between GPUs of one NVLink domain (nccl-tests, H100 NVLink: NVIDIA/nccl issue
// #1487), ~31-34 us between two nodes (nccl-tests sendrecv_perf, 256 B-8 KB messages: NVIDIA/nccl-tests issue #214).
// Inside one node without NVLink (PCIe) the NVLink figure is kept: no PCIe measurement is at hand.
inline constexpr double kNvlinkSendLatencyS = 3e-6, kNetworkSendLatencyS = 32e-6;

struct FabricLink {
  std::string kind;                // "nvlink4", "pcie-gen5-x16", "infiniband-ndr", "given" ...
  double bytes_per_s_per_gpu = 0;  // per GPU and direction
  double latency_s = 0;            // one send's fixed cost
  bool spans_nodes = false;
};

// The link joining `total_gpus` GPUs of type `gpu`: their NVLink domain where it holds them all (8 GPUs of a DGX, 72
// of an NVL72 rack), else one node's PCIe (the GPU type's default node), else that node's scale-out network; nullopt
// when they span nodes whose node file names no network (or no node file holds the GPU type).
std::optional<FabricLink> fabric_joining(const Gpu& gpu, int total_gpus);

// The network between nodes of two GPU types: the slower of their default nodes' scale-out networks; nullopt when
// either names none.
std::optional<FabricLink> network_between(const Gpu& a, const Gpu& b);

// How many nodes `total_gpus` GPUs of type `gpu` fill (its default node's GPUs each; 1 per node without a node file).
int nodes_spanned(const Gpu& gpu, int total_gpus);

// The GPU type's default node id for messages ("no node file holding X" when none).
std::string node_name_for(const Gpu& gpu);

}  // namespace llmco2::hardware
