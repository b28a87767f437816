// graph/mla_layer.cc - multi-head latent attention (DeepSeek-V2/V3): prefill expanded, decode absorbed.
#include "core/error.h"
#include "graph/graph_builder.h"

namespace llmco2 {

int add_mla_attention(GraphBuilder&, const LayerContext& c, int) { fail("{}: MLA not built yet", c.m.id); }

}  // namespace llmco2
