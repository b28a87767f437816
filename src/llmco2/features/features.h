// features/features.h - a kernel graph priced on a GPU: each node's Roofline performance and bound (paper eq. 9).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "features/module.h"
#include "graph/kernel_graph.h"
#include "hardware/gpu.h"
#include "hardware/roofline.h"

namespace llmco2::features {

struct NodeFeatures {
  RooflinePoint prefill;
  RooflinePoint decode;
  const RooflinePoint& at(Phase phase) const { return phase == Phase::prefill ? prefill : decode; }
};

struct GraphFeatures {
  ComputePeak matrix_peak;     // tensor units at the request's compute type (after fallbacks)
  ComputePeak attention_peak;  // attention math runs at the activation type
  // The layer GEMMs run 1-byte inputs scaled per block on tensor units (Precision::block_scaled, after fallbacks).
  bool block_scaled_gemms = false;
  double vector_peak_ops_per_s = 0;
  std::optional<Link> network;           // absent on one GPU
  std::vector<NodeFeatures> nodes;       // parallel to KernelGraph::nodes
  std::vector<NodeFeatures> step_nodes;  // parallel to KernelGraph::step_nodes
  std::vector<std::string> notes;        // fallbacks and assumptions the user should know
};

// The roofs a kernel of `type` runs under: matrix kernels on tensor units, the rest on vector units.
Roofs kernel_roofs(KernelType type, const GraphFeatures& features, const Gpu& gpu);

GraphFeatures compute_features(const KernelGraph& graph, const Gpu& gpu, const Request& request);
// The features that depend only on the GPU and the request's GPU count and precision (peaks, link, notes), with no
// node features: all the simulator reads (kernel_roofs), the same for every request of a setup.
GraphFeatures device_features(const Gpu& gpu, const Request& request);
// Prices every node of `graph` under the device roofs `features` holds (device_features of the graph's GPU and
// request): its nodes and step_nodes replaced, their storage kept. compute_features = device_features + price_nodes.
void price_nodes(const KernelGraph& graph, const Gpu& gpu, GraphFeatures& features);

}  // namespace llmco2::features
