// predictor/encoding.cc - kernel graph + Roofline features -> GNN inputs.
#include "predictor/encoding.h"

#include <array>
#include <cmath>

#include "core/error.h"
#include "features/features.h"
#include "graph/kernel_graph.h"

namespace llmco2::predictor {
namespace {

bool split_phases(FeatureSet set) { return set != FeatureSet::merged; }
bool hardware_aware(FeatureSet set) { return set == FeatureSet::llmco2; }

// Writes one node's features in place: the node's row of EncodedGraph::x, sized by the caller.
struct RowWriter {
  float* at;
  void put(float value) { *at++ = value; }
};

void write_setup_columns(RowWriter& x, const KernelNode& node, bool step, int layers) {
  for (int t = 0; t < kKernelTypeCount; ++t) x.put(static_cast<int>(node.type) == t ? 1.0f : 0.0f);
  x.put(log_feature(static_cast<double>(node.d_in)));
  x.put(log_feature(static_cast<double>(node.d_out)));
  x.put(step ? 1.0f : 0.0f);
  x.put(log_feature(step ? 1.0 : layers));
  x.put(node.expert == "routed" ? 1.0f : 0.0f);
  x.put(node.expert == "shared" ? 1.0f : 0.0f);
}

void write_cost(RowWriter& x, const KernelCost& cost) {
  x.put(log_feature(cost.ops));
  x.put(log_feature(cost.mem_bytes()));
  x.put(log_feature(cost.net_bytes));
}

// The node's row; its first kSetupNodeColumns left as they are when `setup_columns_kept`.
void write_node(RowWriter x, const KernelNode& node, const NodeFeatures& roof, bool step, int layers, FeatureSet set,
                bool setup_columns_kept) {
  if (setup_columns_kept) x.at += kSetupNodeColumns;
  else write_setup_columns(x, node, step, layers);
  if (!split_phases(set)) {
    KernelCost both = node.prefill;
    both += node.decode;
    write_cost(x, both);
    return;
  }
  write_cost(x, node.prefill);
  if (hardware_aware(set)) x.put(log_feature(roof.prefill.perf_ops_per_s));
  write_cost(x, node.decode);
  if (hardware_aware(set)) x.put(log_feature(roof.decode.perf_ops_per_s));
}

// Step nodes (embedding, final norm, LM head) join the layer graph: embedding -> first layer kernel, last layer
// kernel -> final norm -> LM head, in the order the graph lists them.
void add_step_edges(EncodedGraph& g, int layer_nodes, int step_nodes) {
  if (step_nodes == 0 || layer_nodes == 0) return;
  const int first_step = layer_nodes;
  g.edges.emplace_back(first_step, 0);
  int previous = layer_nodes - 1;
  for (int s = 1; s < step_nodes; ++s) {
    g.edges.emplace_back(previous, first_step + s);
    previous = first_step + s;
  }
}

void append_globals(EncodedGraph& g, const PredictorInput& c, const KernelGraph& graph, FeatureSet set) {
  const ModelSpec& m = *c.model;
  const Request& r = c.request;
  auto& v = g.globals;
  const double intermediate =
      m.moe ? static_cast<double>(m.moe->expert_intermediate * m.moe->experts_per_token + m.moe->shared_intermediate)
            : static_cast<double>(m.intermediate);
  v.push_back(static_cast<float>(8 * dtype_bytes(r.precision.weights)));
  v.push_back(log_feature(static_cast<double>(m.hidden)));
  v.push_back(log_feature(intermediate));
  v.push_back(log_feature(m.heads));
  v.push_back(log_feature(m.layers));
  v.push_back(log_feature(static_cast<double>(r.batch) * c.batch_scale));
  v.push_back(log_feature(static_cast<double>(r.prompt_tokens)));
  v.push_back(log_feature(static_cast<double>(r.gen_tokens)));
  v.push_back(log_feature(r.gpus));
  const PhaseTotals pre = graph.totals(Phase::prefill), dec = graph.totals(Phase::decode);
  if (split_phases(set)) {
    for (const auto& t : {pre, dec}) {
      v.push_back(log_feature(t.ops));
      v.push_back(log_feature(t.mem_bytes));
      v.push_back(log_feature(t.net_bytes));
    }
  } else {
    v.push_back(log_feature(pre.ops + dec.ops));
    v.push_back(log_feature(pre.mem_bytes + dec.mem_bytes));
    v.push_back(log_feature(pre.net_bytes + dec.net_bytes));
  }
  const SimScenario& s = c.scenario;
  v.push_back(s.measures == Measures::steady_state ? 1.0f : 0.0f);
  v.push_back(s.measures == Measures::fixed_batch ? 1.0f : 0.0f);
  v.push_back(log_feature(s.data_parallel - 1));
  v.push_back(log_feature(s.parallelism == Parallelism::layer_split ? s.layer_split_gpus : 0));
  v.push_back(s.kv_cache ? 0.0f : 1.0f);
  if (hardware_aware(set)) {
    const Gpu& gpu = *c.gpu;
    v.push_back(log_feature(gpu.matrix_peak(r.precision.compute_dtype()).ops_per_s));
    v.push_back(log_feature(gpu.memory_bandwidth_bytes_per_s));
    v.push_back(log_feature(r.gpus > 1 ? gpu.network_link(r.gpus).bandwidth_bytes_per_s : 0.0));
    v.push_back(log_feature(gpu.tdp_w));
    v.push_back(log_feature(gpu.idle_w));
  }
}

double safe_log(double value) { return value > 0 ? std::log(value) : 0.0; }

void set_physics(EncodedGraph& g, const PredictorInput& c, const SimResult& sim) {
  g.physics_log[energy_prefill] = safe_log(sim.energy_j.prefill * c.batch_scale);
  g.physics_log[energy_decode] = safe_log(sim.energy_j.decode * c.batch_scale);
  g.physics_log[latency_prefill] = safe_log(sim.latency_s.prefill);
  g.physics_log[latency_decode] = safe_log(sim.latency_s.decode);
}

}  // namespace

std::string_view feature_set_name(FeatureSet set) {
  switch (set) {
    case FeatureSet::merged:
      return "merged";
    case FeatureSet::phases:
      return "phases";
    case FeatureSet::llmco2:
      return "llmco2";
  }
  return "?";
}

FeatureSet parse_feature_set(std::string_view name) {
  for (auto set : {FeatureSet::merged, FeatureSet::phases, FeatureSet::llmco2})
    if (feature_set_name(set) == name) return set;
  fail("unknown feature set '{}' (expected merged, phases or llmco2)", name);
}

std::vector<std::string> node_feature_names(FeatureSet set) {
  std::vector<std::string> names;
  for (int t = 0; t < kKernelTypeCount; ++t)
    names.push_back("type_" + std::string(kernel_type_name(static_cast<KernelType>(t))));
  for (const char* n : {"log_d_in", "log_d_out", "is_step", "log_repeats", "routed_expert", "shared_expert"})
    names.emplace_back(n);
  const std::vector<std::string> cost = {"log_ops", "log_mem_bytes", "log_net_bytes"};
  if (!split_phases(set)) {
    for (const auto& n : cost) names.push_back(n);
    return names;
  }
  for (const std::string phase : {"prefill", "decode"}) {
    for (const auto& n : cost) names.push_back(phase + "_" + n);
    if (hardware_aware(set)) names.push_back(phase + "_log_roofline_ops_per_s");
  }
  return names;
}

std::vector<std::string> global_feature_names(FeatureSet set) {
  std::vector<std::string> names = {"weight_bits", "log_hidden", "log_intermediate", "log_heads", "log_layers",
                                    "log_batch",   "log_prompt", "log_gen",          "log_gpus"};
  const std::vector<std::string> totals = {"log_total_ops", "log_total_mem_bytes", "log_total_net_bytes"};
  if (split_phases(set)) {
    for (const std::string phase : {"prefill", "decode"})
      for (const auto& n : totals) names.push_back(phase + "_" + n);
  } else {
    for (const auto& n : totals) names.push_back(n);
  }
  for (const char* n : {"steady_state", "fixed_batch", "log_extra_replicas", "log_layer_split_gpus", "no_kv_cache"})
    names.emplace_back(n);
  if (hardware_aware(set))
    for (const char* n :
         {"log_matrix_peak_ops_per_s", "log_memory_bytes_per_s", "log_link_bytes_per_s", "log_tdp_w", "log_idle_w"})
      names.emplace_back(n);
  return names;
}

float log_feature(double value) { return static_cast<float>(std::log1p(std::max(value, 0.0))); }

// The widths are the names' counts, counted once (the names are strings built per call).
int node_width(FeatureSet set) {
  static const std::array<int, 3> widths = {static_cast<int>(node_feature_names(FeatureSet::merged).size()),
                                            static_cast<int>(node_feature_names(FeatureSet::phases).size()),
                                            static_cast<int>(node_feature_names(FeatureSet::llmco2).size())};
  return widths[static_cast<int>(set)];
}
int global_width(FeatureSet set) {
  static const std::array<int, 3> widths = {static_cast<int>(global_feature_names(FeatureSet::merged).size()),
                                            static_cast<int>(global_feature_names(FeatureSet::phases).size()),
                                            static_cast<int>(global_feature_names(FeatureSet::llmco2).size())};
  return widths[static_cast<int>(set)];
}

void encode_described(const PredictorInput& c, FeatureSet set, const KernelGraph& graph, const GraphFeatures& roof,
                      const SimResult& physics, EncodedGraph& g, bool setup_columns_kept) {
  const int layer_nodes = static_cast<int>(graph.nodes.size()), step_nodes = static_cast<int>(graph.step_nodes.size());
  const int width = node_width(set);
  setup_columns_kept = setup_columns_kept && g.nodes == layer_nodes + step_nodes;
  g.nodes = layer_nodes + step_nodes;
  g.x.resize(static_cast<size_t>(g.nodes * width));
  auto row = [&](int i) { return RowWriter{g.x.data() + static_cast<ptrdiff_t>(i) * width}; };
  for (int i = 0; i < layer_nodes; ++i)
    write_node(row(i), graph.nodes[i], roof.nodes[i], false, graph.layers, set, setup_columns_kept);
  for (int i = 0; i < step_nodes; ++i)
    write_node(row(layer_nodes + i), graph.step_nodes[i], roof.step_nodes[i], true, graph.layers, set,
               setup_columns_kept);
  g.edges.assign(graph.edges.begin(), graph.edges.end());
  add_step_edges(g, layer_nodes, step_nodes);
  g.globals.clear();
  append_globals(g, c, graph, set);
  set_physics(g, c, physics);
  g.has_decode = c.request.gen_tokens > 1;
}

EncodedGraph encode_graph(const PredictorInput& c, FeatureSet set, const SimParams& params) {
  // One description of the request: the graph, its Roofline features and the simulator's workload.
  const Workload workload = describe_workload(*c.model, *c.gpu, c.request, c.scenario);
  EncodedGraph g;
  encode_described(c, set, workload.graph, workload.features, run_workload(workload.sim, params), g);
  return g;
}

SetupEncoder::SetupEncoder(const PredictorInput& setup, FeatureSet set, const SimParams& params)
    : model_(setup.model),
      gpu_(setup.gpu),
      set_(set),
      simulator_(*model_, *gpu_, setup.request, setup.scenario, params),
      roof_(simulator_.device()) {}

const EncodedGraph* SetupEncoder::encode(const PredictorInput& c) {
  const SimResult physics = simulator_.simulate(c.request);
  const KernelGraph* graph = simulator_.template_graph();
  if (!graph) return nullptr;
  price_nodes(*graph, *gpu_, roof_);
  encode_described(c, set_, *graph, roof_, physics, graph_, encoded_);
  encoded_ = true;
  return &graph_;
}

}  // namespace llmco2::predictor
