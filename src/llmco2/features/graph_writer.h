// features/graph_writer.h - the kernel graph with its features as JSON (docs/graph-json.md), Graphviz DOT or a text
// table.
#pragma once

#include <string>

#include "core/json_io.h"
#include "features/features.h"
#include "features/memory_fit.h"
#include "features/module.h"
#include "model/model_spec.h"

namespace llmco2::features {

// Everything `llmco2 graph` reports about one request.
struct PricedGraph {
  const ModelSpec& model;
  const Gpu& gpu;
  const Request& request;
  const KernelGraph& graph;
  const GraphFeatures& features;
  const MemoryFit& memory;
};

inline constexpr int kGraphJsonSchemaVersion = 1;

Json graph_to_json(const PricedGraph& priced);
std::string graph_to_dot(const PricedGraph& priced, Phase phase);
std::string graph_to_summary(const PricedGraph& priced);

}  // namespace llmco2::features
