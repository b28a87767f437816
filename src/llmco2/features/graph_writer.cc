// features/graph_writer.cc - JSON, DOT and text renderings of a priced kernel graph.
#include "features/graph_writer.h"

#include <fmt/format.h>

#include "graph/layer_kernels.h"

namespace llmco2::features {
namespace {

Json node_json(const KernelNode& node, const NodeFeatures& features, Phase phase, int index) {
  const KernelCost& c = node.cost(phase);
  const RooflinePoint& p = features.at(phase);
  Json j{{"index", index},
         {"kernel", node.kernel},
         {"type", kernel_type_name(node.type)},
         {"d_in", node.d_in},
         {"d_out", node.d_out},
         {"tokens", c.tokens},
         {"ops", c.ops},
         {"mem_bytes", c.mem_bytes()},
         {"weight_bytes", c.weight_bytes},
         {"act_load_bytes", c.act_load_bytes},
         {"act_store_bytes", c.act_store_bytes},
         {"kv_load_bytes", c.kv_load_bytes},
         {"kv_store_bytes", c.kv_store_bytes},
         {"net_bytes", c.net_bytes},
         {"perf_ops_per_s", p.perf_ops_per_s},
         {"bound", bound_name(p.bound)},
         {"roofline_time_s", p.time_s}};
  if (node.layer_share < 1) j["layer_share"] = node.layer_share;
  if (!node.expert.empty()) {
    j["expert"] = node.expert;
    if (node.expert == "routed") j["experts_loaded"] = node.experts_loaded(phase);
  }
  return j;
}

Json phase_json(const PricedGraph& g, Phase phase) {
  Json nodes = Json::array(), steps = Json::array(), edges = Json::array();
  for (size_t i = 0; i < g.graph.nodes.size(); ++i)
    nodes.push_back(node_json(g.graph.nodes[i], g.features.nodes[i], phase, static_cast<int>(i)));
  for (size_t i = 0; i < g.graph.step_nodes.size(); ++i)
    steps.push_back(node_json(g.graph.step_nodes[i], g.features.step_nodes[i], phase, static_cast<int>(i)));
  for (const auto& [from, to] : g.graph.edges) edges.push_back({from, to});
  const PhaseTotals t = g.graph.totals(phase);
  return {{"steps", phase_shape(phase, g.request).steps},
          {"nodes", nodes},
          {"edges", edges},
          {"step_nodes", steps},
          {"totals", {{"ops", t.ops}, {"mem_bytes", t.mem_bytes}, {"net_bytes", t.net_bytes}}}};
}

Json model_json(const ModelSpec& m) {
  Json j{{"id", m.id},       {"family", m.family},           {"layers", m.layers},     {"hidden", m.hidden},
         {"heads", m.heads}, {"kv_heads", m.max_kv_heads()}, {"head_dim", m.head_dim}, {"intermediate", m.intermediate},
         {"vocab", m.vocab}, {"params", m.total_params()}};
  if (m.moe)
    j["moe"] = {{"experts", m.moe->experts},
                {"experts_per_token", m.moe->experts_per_token},
                {"expert_intermediate", m.moe->expert_intermediate},
                {"shared_intermediate", m.moe->shared_intermediate}};
  return j;
}

Json gpu_json(const PricedGraph& g) {
  Json j{{"id", g.gpu.id},
         {"name", g.gpu.name},
         {"count", g.request.gpus},
         {"matrix_dtype", dtype_name(g.features.matrix_peak.dtype)},
         {"matrix_peak_ops_per_s", g.features.matrix_peak.ops_per_s},
         {"vector_peak_ops_per_s", g.features.vector_peak_ops_per_s},
         {"memory_bandwidth_bytes_per_s", g.gpu.memory_bandwidth_bytes_per_s}};
  if (g.features.network)
    j["network"] = {{"kind", g.features.network->kind},
                    {"bytes_per_s_per_direction", g.features.network->bandwidth_bytes_per_s}};
  return j;
}

Json request_json(const Request& r) {
  return {{"batch", r.batch},
          {"prompt_tokens", r.prompt_tokens},
          {"gen_tokens", r.gen_tokens},
          {"gpus", r.gpus},
          {"dtype",
           {{"weights", dtype_name(r.precision.weights)},
            {"activations", dtype_name(r.precision.activations)},
            {"kv_cache", dtype_name(r.precision.kv_cache)}}},
          {"flash_attention", r.flash_attention},
          {"engine", r.engine},
          {"expert_parallel", r.expert_parallel}};
}

std::string si(double value, const char* unit) {
  static constexpr const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (value >= 1000 && i < 6) value /= 1000, ++i;
  return fmt::format("{:.3g} {}{}", value, prefixes[i], unit);
}

}  // namespace

Json graph_to_json(const PricedGraph& g) {
  return {{"schema_version", kGraphJsonSchemaVersion},
          {"model", model_json(g.model)},
          {"gpu", gpu_json(g)},
          {"request", request_json(g.request)},
          {"layers", g.graph.layers},
          {"memory",
           {{"weight_bytes_per_gpu", g.memory.weight_bytes_per_gpu},
            {"kv_cache_bytes_per_gpu", g.memory.kv_cache_bytes_per_gpu},
            {"usable_bytes_per_gpu", g.memory.usable_bytes_per_gpu}}},
          {"notes", g.features.notes},
          {"phases", {{"prefill", phase_json(g, Phase::prefill)}, {"decode", phase_json(g, Phase::decode)}}}};
}

std::string graph_to_dot(const PricedGraph& g, Phase phase) {
  std::string out = fmt::format("digraph \"{} {}\" {{\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n",
                                g.model.id, phase_name(phase));
  for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
    const auto& node = g.graph.nodes[i];
    const auto& c = node.cost(phase);
    const auto bound = g.features.nodes[i].at(phase).bound;
    const char* colour = bound == Bound::compute ? "#f4a582" : bound == Bound::memory ? "#92c5de" : "#b8e186";
    out += fmt::format("  n{} [label=\"{}{}\\n{}  {}\\n{}-bound\", style=filled, fillcolor=\"{}\"];\n", i, node.kernel,
                       node.expert.empty() ? "" : " (" + node.expert + ")", si(c.ops, "op"), si(c.mem_bytes(), "B"),
                       bound_name(bound), colour);
  }
  for (const auto& [from, to] : g.graph.edges) out += fmt::format("  n{} -> n{};\n", from, to);
  return out + "}\n";
}

std::string graph_to_summary(const PricedGraph& g) {
  std::string out =
      fmt::format("{} on {} x {} ({}), batch {}, prompt {}, gen {}, {}\n", g.model.id, g.request.gpus, g.gpu.id,
                  g.request.precision.to_string(), g.request.batch, g.request.prompt_tokens, g.request.gen_tokens,
                  g.request.flash_attention ? "flash attention" : "eager attention");
  for (const auto& note : g.features.notes) out += "note: " + note + "\n";
  for (const Phase phase : {Phase::prefill, Phase::decode}) {
    const PhaseTotals t = g.graph.totals(phase);
    out += fmt::format("\n{}: {} ops, {} memory traffic, {} network (all {} layers and GPUs)\n", phase_name(phase),
                       si(t.ops, "op"), si(t.mem_bytes, "B"), si(t.net_bytes, "B"), g.graph.layers);
    out += fmt::format("  {:<20} {:>10} {:>10} {:>10} {:>14}  {}\n", "kernel (per layer)", "ops", "memory", "network",
                       "roofline perf", "bound");
    for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
      const auto& node = g.graph.nodes[i];
      const auto& c = node.cost(phase);
      const auto& p = g.features.nodes[i].at(phase);
      out +=
          fmt::format("  {:<20} {:>10} {:>10} {:>10} {:>14}  {}\n",
                      node.kernel + (node.expert.empty() ? "" : "[" + node.expert + "]"), si(c.ops, ""),
                      si(c.mem_bytes(), "B"), si(c.net_bytes, "B"), si(p.perf_ops_per_s, "op/s"), bound_name(p.bound));
    }
  }
  return out;
}

}  // namespace llmco2::features
