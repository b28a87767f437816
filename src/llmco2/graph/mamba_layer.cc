// graph/mamba_layer.cc - the Mamba-2 mixer: in_proj, causal conv1d, the SSD scan, gated norm, out_proj.
#include "core/error.h"
#include "graph/graph_builder.h"

namespace llmco2 {

int add_mamba_mixer(GraphBuilder&, const LayerContext& c, int) { fail("{}: Mamba not built yet", c.m.id); }

}  // namespace llmco2
