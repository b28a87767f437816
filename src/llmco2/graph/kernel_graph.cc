// graph/kernel_graph.cc - assembles the layer graph (nodes, edges, both phases) and the once-per-step kernels.
#include "graph/kernel_graph.h"

#include <array>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <tuple>

#include "core/error.h"
#include "graph/graph_builder.h"
#include "graph/graph_template.h"

namespace llmco2::graph {

int GraphBuilder::link_last(const std::vector<int>& inputs) {
  const int index = static_cast<int>(graph_.nodes.size()) - 1;
  for (const int input : inputs)
    if (input >= 0) graph_.edges.emplace_back(input, index);
  return index;
}

void GraphBuilder::set_experts_loaded(int index, const LoadFn& per_step) {
  graph_.nodes[index].experts_loaded_prefill = per_step(prefill_);
  graph_.nodes[index].experts_loaded_decode = per_step(decode_);
  if (record_) recipe_.loads.emplace_back(index, per_step);
}

void refresh_layer(KernelGraph& layer, const LayerRecipe& recipe, const PhaseShape& prefill, const PhaseShape& decode) {
  // Each cost is constructed in place (guaranteed copy elision: the cost function writes into the node) instead of
  // assigned from a returned temporary, whose copy stalled on store forwarding.
  for (size_t i = 0; i < recipe.costs.size(); ++i) {
    ::new (static_cast<void*>(&layer.nodes[i].prefill)) KernelCost(recipe.costs[i](prefill));
    ::new (static_cast<void*>(&layer.nodes[i].decode)) KernelCost(recipe.costs[i](decode));
  }
  for (const auto& [index, per_step] : recipe.loads) {
    layer.nodes[index].experts_loaded_prefill = per_step(prefill);
    layer.nodes[index].experts_loaded_decode = per_step(decode);
  }
}

int add_norm(GraphBuilder& b, const LayerContext& c, const std::string& name, int input, long width) {
  const long w = width > 0 ? width : c.m.hidden;
  const bool layer_norm = c.layer_norm();
  return b.add(
      name, KernelType::norm, {input}, [=](const PhaseShape& s) { return norm_cost(s, w, layer_norm); }, w, w);
}

int add_residual(GraphBuilder& b, const LayerContext& c, const std::string& name, std::vector<int> inputs, int residual,
                 int summed_inputs) {
  const long h = c.m.hidden;
  if (c.n() > 1) {
    const int reduce = b.add(
        "allreduce", KernelType::allreduce, inputs, [=](const PhaseShape& s) { return allreduce_cost(s, h); }, h, h);
    inputs = {reduce};
  }
  inputs.push_back(residual);
  return b.add(
      name, KernelType::add, inputs, [=](const PhaseShape& s) { return add_cost(s, h, summed_inputs); }, h, h);
}

namespace {

// norm -> q, k, v -> (rope) -> attention -> o_proj. Returns the o_proj node.
int add_attention(GraphBuilder& b, const LayerContext& c, int norm) {
  const long h = c.m.hidden, qw = c.q_width(), kvw = c.kv_width();
  const bool bias = c.m.qkv_bias, o_bias = c.m.o_bias;
  const int q = b.add(
      "q_proj", KernelType::linear, {norm}, [=](const PhaseShape& s) { return linear_cost(s, h, qw, bias, false); }, h,
      qw);
  constexpr GemmInput fused = GemmInput::already_quantised;  // vLLM's QKVParallelLinear: one quantisation for q, k, v
  const int k = b.add(
      "k_proj", KernelType::linear, {norm},
      [=](const PhaseShape& s) { return linear_cost(s, h, kvw, bias, true, fused); }, h, kvw);
  const int v = b.add(
      "v_proj", KernelType::linear, {norm},
      [=](const PhaseShape& s) { return linear_cost(s, h, kvw, bias, true, fused); }, h, kvw);
  std::vector<int> attention_inputs{q, k, v};
  if (c.m.position == PositionKind::rotary && c.attention().rope) {
    const long rot_q = c.q_width() / c.m.head_dim * c.m.rotary_dims();  // partial rotary: only the turned dims
    const long rot_kv = c.kv_width() / c.m.head_dim * c.m.rotary_dims();
    const int rope = b.add(
        "rope", KernelType::rope, {q, k}, [=](const PhaseShape& s) { return rope_cost(s, rot_q, rot_kv); },
        rot_q + rot_kv, rot_q + rot_kv);
    attention_inputs = {rope, v};
  }
  const int heads = c.m.heads / c.n(), kv_heads = kv_heads_per_gpu(c.attention().kv_heads, c.n());
  const int head_dim = c.m.head_dim;
  const LayerAttention attention = c.attention();
  auto shape_for = [=](const PhaseShape& s) {
    return AttentionShape{heads, kv_heads, head_dim,
                          attention_span(s.phase, s.prompt_tokens, s.gen_tokens, s.flash_attention, attention)};
  };
  int attention_out;
  if (c.r.flash_attention) {
    attention_out = b.add(
        "fused_attention", KernelType::fused_attention, attention_inputs,
        [=](const PhaseShape& s) { return fused_attention_cost(s, shape_for(s)); }, qw, qw);
  } else {
    const int qk = b.add(
        "matmul_qk", KernelType::matmul_qk, {attention_inputs[0]},
        [=](const PhaseShape& s) { return matmul_qk_cost(s, shape_for(s)); }, qw, qw);
    const int softmax = b.add(
        "softmax", KernelType::softmax, {qk}, [=](const PhaseShape& s) { return softmax_cost(s, shape_for(s)); }, qw,
        qw);
    attention_out = b.add(
        "matmul_sv", KernelType::matmul_sv, {softmax, v},
        [=](const PhaseShape& s) { return matmul_sv_cost(s, shape_for(s)); }, qw, qw);
  }
  return b.add(
      "o_proj", KernelType::linear, {attention_out},
      [=](const PhaseShape& s) { return linear_cost(s, qw, h, o_bias, false); }, qw, h);
}

// gate/up -> act -> down for one (dense or shared) MLP of per-GPU width `width`. Returns the down_proj node.
int add_mlp(GraphBuilder& b, const LayerContext& c, int input, long width, const std::string& expert) {
  const long h = c.m.hidden;
  const bool gated = c.m.mlp == MlpKind::gated, bias = c.m.mlp_bias;
  auto linear = [&](long din, long dout, GemmInput in = GemmInput::quantised_here) {
    return [=](const PhaseShape& s) { return linear_cost(s, din, dout, bias, false, in); };
  };
  std::vector<int> act_inputs;
  if (gated) act_inputs.push_back(b.add("gate_proj", KernelType::linear, {input}, linear(h, width), h, width, expert));
  const GemmInput up_input = gated ? GemmInput::already_quantised : GemmInput::quantised_here;  // fused gate/up
  act_inputs.push_back(b.add("up_proj", KernelType::linear, {input}, linear(h, width, up_input), h, width, expert));
  const Activation activation = c.m.activation;
  const int act = b.add(
      "act_mlp", KernelType::activation, act_inputs,
      [=](const PhaseShape& s) { return activation_cost(s, width, activation, gated); }, width, width, expert);
  return b.add("down_proj", KernelType::linear, {act}, linear(width, h), width, h, expert);
}

// Experts whose weights a phase loads on one GPU in total, and per step, and that GPU's share of the routed token
// rows. Split experts (tensor parallelism): every GPU loads a slice of each distinct expert hit and takes every row.
// Whole experts on `ep_gpus` GPUs (expert parallelism): the busiest GPU loads its own hit experts and their rows.
struct ExpertLoad {
  double total = 0, per_step = 0, row_share = 1;
};
ExpertLoad experts_loaded(const MoeSpec& moe, const PhaseShape& s, int ep_gpus) {
  if (!(s.steps > 0)) return {};
  const double tokens_per_step = s.tokens / s.steps;
  const double distinct = expected_distinct_experts(moe.experts, moe.experts_per_token, tokens_per_step);
  if (ep_gpus <= 1) return {distinct * s.steps, distinct, 1.0};
  const double busiest = expected_busiest_gpu_experts(moe.experts, moe.experts_per_token, tokens_per_step, ep_gpus);
  return {busiest * s.steps, busiest, distinct > 0 ? busiest / distinct : 0.0};
}

// experts_loaded for the routed nodes of one MoE block, which all ask for the same phase shapes: each phase's value
// kept until that phase's shape changes (its pow computed once per phase, not once per node).
class ExpertsLoaded {
 public:
  ExpertsLoaded(const MoeSpec& moe, int ep_gpus) : moe_(moe), ep_gpus_(ep_gpus) {}
  const ExpertLoad& operator()(const PhaseShape& s) {
    Entry& e = entries_[s.phase == Phase::prefill ? 0 : 1];
    if (!e.valid || e.tokens != s.tokens || e.steps != s.steps)
      e = {true, s.tokens, s.steps, experts_loaded(moe_, s, ep_gpus_)};
    return e.value;
  }

 private:
  struct Entry {
    bool valid = false;
    double tokens = 0, steps = 0;
    ExpertLoad value;
  };
  MoeSpec moe_;
  int ep_gpus_;
  Entry entries_[2];
};

// router -> routed experts (gate/up -> act -> down) [+ shared expert]. Returns the nodes whose outputs are summed.
std::vector<int> add_moe(GraphBuilder& b, const LayerContext& c, int input) {
  const MoeSpec moe = *c.m.moe;
  const int ep_gpus = c.r.expert_parallel ? c.n() : 1;  // whole experts over the GPUs, or a slice of each on each
  const long h = c.m.hidden, width = moe.expert_intermediate / (ep_gpus > 1 ? 1 : c.n());
  const bool gated = c.m.mlp == MlpKind::gated, bias = c.m.mlp_bias;
  const int router = b.add(
      "router", KernelType::router, {input},
      [=](const PhaseShape& s) {
        return linear_cost(s, h, moe.experts, moe.router_bias, false, GemmInput::sixteen_bit);
      },
      h, moe.experts);
  const auto loaded = std::make_shared<ExpertsLoaded>(moe, ep_gpus);  // shared by this block's routed nodes
  auto expert = [&](long din, long dout, GemmInput in) {
    return [=](const PhaseShape& s) {
      const ExpertLoad& load = (*loaded)(s);
      return expert_linear_cost(s, din, dout, bias, load.total, s.tokens * moe.experts_per_token * load.row_share, in);
    };
  };
  std::vector<int> act_inputs;
  constexpr GemmInput first = GemmInput::quantised_before_routing;
  if (gated)
    act_inputs.push_back(b.add("gate_proj", KernelType::linear, {router}, expert(h, width, first), h, width, "routed"));
  act_inputs.push_back(b.add("up_proj", KernelType::linear, {router},
                             expert(h, width, gated ? GemmInput::already_quantised : first), h, width, "routed"));
  const Activation activation = c.m.activation;
  const int k = moe.experts_per_token;
  const int act = b.add(
      "act_mlp", KernelType::activation, act_inputs,
      [=](const PhaseShape& s) {
        PhaseShape routed = s;
        routed.tokens = s.tokens * k * (*loaded)(s).row_share;
        return activation_cost(routed, width, activation, gated);
      },
      width, width, "routed");
  const int down =
      b.add("down_proj", KernelType::linear, {act}, expert(width, h, GemmInput::quantised_here), width, h, "routed");
  const LoadFn per_step = [=](const PhaseShape& s) { return (*loaded)(s).per_step; };
  for (const int index : act_inputs) b.set_experts_loaded(index, per_step);
  b.set_experts_loaded(act, per_step);  // no weights, but an engine looping over the experts launches it per expert
  b.set_experts_loaded(down, per_step);
  std::vector<int> outputs{down};
  if (moe.shared_intermediate > 0) outputs.push_back(add_mlp(b, c, input, moe.shared_intermediate / c.n(), "shared"));
  if (moe.shared_intermediate > 0 && moe.shared_gate)
    outputs.push_back(b.add(
        "shared_expert_gate", KernelType::linear, {input},
        [=](const PhaseShape& s) { return linear_cost(s, h, 1, false, false, GemmInput::sixteen_bit); }, h, 1,
        "shared"));
  return outputs;
}

std::vector<int> add_ffn(GraphBuilder& b, const LayerContext& c, int input) {
  if (c.layer.ffn == FfnKind::moe) return add_moe(b, c, input);
  return {add_mlp(b, c, input, c.m.intermediate / c.n(), "")};
}

int add_mixer(GraphBuilder& b, const LayerContext& c, int norm) {
  if (c.layer.mixer == MixerKind::mla) return add_mla_attention(b, c, norm);
  if (c.layer.mixer == MixerKind::mamba) return add_mamba_mixer(b, c, norm);
  return add_attention(b, c, norm);
}

// Sequential blocks: norm -> mixer -> add, then norm -> FFN -> add (Gemma2/3 add post-norms before each add).
// Either block may be absent (Nemotron-H: a layer is one Mamba-2, attention or MLP block).
void add_sequential_layer(GraphBuilder& b, const LayerContext& c) {
  const bool post_norms = c.m.norms_per_layer == 4;
  int residual = -1;
  if (c.layer.mixer != MixerKind::none) {
    const bool mamba = c.layer.mixer == MixerKind::mamba;
    b.begin_block(mamba ? "mamba" : "attn");
    const int norm = add_norm(b, c, mamba ? "norm_mamba" : "norm_attn", -1);
    int out = add_mixer(b, c, norm);
    if (post_norms) out = add_norm(b, c, "post_norm_attn", out);
    residual = add_residual(b, c, mamba ? "add_mamba" : "add_attn", {out}, -1, 2);
  }
  if (c.layer.ffn == FfnKind::none) return;
  b.begin_block("mlp");
  const int norm_mlp = add_norm(b, c, "norm_mlp", residual);
  std::vector<int> ffn_out = add_ffn(b, c, norm_mlp);
  if (post_norms) ffn_out = {add_norm(b, c, "post_norm_mlp", ffn_out[0])};
  add_residual(b, c, "add_mlp", ffn_out, residual, 2);
}

// Parallel block (Falcon, GPT-J, GPT-NeoX's use_parallel_residual): attention and MLP read the layer's input through
// one norm (two in Falcon's new decoder architecture, ln_attn and ln_mlp, and in GPT-NeoX); one all-reduce and one add
// of x + attn + mlp.
void add_parallel_layer(GraphBuilder& b, const LayerContext& c) {
  b.begin_block("parallel");
  const int norm = add_norm(b, c, "norm_attn", -1);
  const int attn_out = add_attention(b, c, norm);
  const int norm_mlp = c.m.norms_per_layer == 2 ? add_norm(b, c, "norm_mlp", -1) : norm;
  std::vector<int> outputs = add_ffn(b, c, norm_mlp);
  outputs.insert(outputs.begin(), attn_out);
  add_residual(b, c, "add", outputs, -1, 3);
}

// The layer of kind `layer`; with `recipe`, the builder also records its cost functions there.
KernelGraph build_layer(const ModelSpec& m, const Request& r, const LayerSpec& layer, LayerRecipe* recipe = nullptr) {
  GraphBuilder b(r, recipe != nullptr);
  const LayerContext c{m, r, layer};
  if (m.parallel_attention) add_parallel_layer(b, c);
  else add_sequential_layer(b, c);
  if (recipe) *recipe = b.take_recipe();
  return b.take();
}

// Adds `from`'s costs x weight to `into` (a node of the mean layer, or KernelGraphTemplate's scratch of one).
template <typename Node>
void accumulate(Node& into, const KernelNode& from, double weight) {
  into.prefill += from.prefill.scaled(weight);
  into.decode += from.decode.scaled(weight);
}

// The union of layer kinds' kernels, each kernel identified by its name, expert and residual block.
class LayerUnion {
 public:
  // Adds `count` layers of kind `layer`: each of its kernels' costs x count / layers. Returns where each of the
  // layer's nodes went in the union (before take's ordering).
  std::vector<int> add(const KernelGraph& layer, int count, int layers) {
    const double weight = static_cast<double>(count) / layers;
    std::vector<int> index(layer.nodes.size());
    for (size_t i = 0; i < layer.nodes.size(); ++i) {
      index[i] = find_or_add(layer.nodes[i]);
      accumulate(graph_.nodes[index[i]], layer.nodes[i], weight);
      layer_counts_[index[i]] += count;
    }
    for (const auto& [from, to] : layer.edges) add_edge(index[from], index[to]);
    return index;
  }
  // The mean layer, its nodes in a topological order that keeps the first layer kind's order; `order` (if given)
  // receives, for each placed node, its index before the ordering.
  KernelGraph take(int layers, std::vector<int>* order = nullptr) {
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
      graph_.nodes[i].layer_share = layer_counts_[i] == layers ? 1.0 : static_cast<double>(layer_counts_[i]) / layers;
    return topological(std::move(graph_), order);
  }

 private:
  int find_or_add(const KernelNode& node) {
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const KernelNode& n = graph_.nodes[i];
      if (n.kernel == node.kernel && n.expert == node.expert && n.block == node.block) return static_cast<int>(i);
    }
    KernelNode empty = node;
    empty.prefill = KernelCost{}, empty.decode = KernelCost{};
    graph_.nodes.push_back(std::move(empty));
    layer_counts_.push_back(0);
    return static_cast<int>(graph_.nodes.size()) - 1;
  }
  void add_edge(int from, int to) {
    for (const auto& edge : graph_.edges)
      if (edge == std::pair{from, to}) return;
    graph_.edges.emplace_back(from, to);
  }
  // Kahn's algorithm, always taking the lowest-numbered ready node: a graph already in order stays as it is.
  static KernelGraph topological(KernelGraph g, std::vector<int>* order) {
    const size_t n = g.nodes.size();
    std::vector<int> inputs_left(n, 0), new_index(n, -1);
    for (const auto& edge : g.edges) ++inputs_left[edge.second];
    KernelGraph out;
    for (size_t placed = 0; placed < n; ++placed) {
      size_t next = 0;
      while (next < n && (new_index[next] >= 0 || inputs_left[next] > 0)) ++next;
      if (next == n) throw std::logic_error("the layer kinds' kernels form a cycle");
      new_index[next] = static_cast<int>(placed);
      if (order) order->push_back(static_cast<int>(next));
      out.nodes.push_back(std::move(g.nodes[next]));
      for (const auto& edge : g.edges)
        if (edge.first == static_cast<int>(next)) --inputs_left[edge.second];
    }
    for (const auto& [from, to] : g.edges) out.edges.emplace_back(new_index[from], new_index[to]);
    return out;
  }

  KernelGraph graph_;
  std::vector<int> layer_counts_;
};

std::map<LayerSpec, int> layer_kinds(const ModelSpec& m) {
  std::map<LayerSpec, int> counts;
  for (const auto& layer : m.layer_specs) ++counts[layer];
  return counts;
}

// The mean layer over the model's distinct layer kinds (mixer, attention window and KV heads, FFN). One kind (most
// models) is its own mean: built directly, without the union's matching and sorting (the serving simulation builds a
// graph per step shape; build_kernel_graph_by_union is the reference a test holds this to).
KernelGraph mean_layer(const ModelSpec& m, const Request& r, bool always_union) {
  const std::map<LayerSpec, int> counts = layer_kinds(m);
  if (counts.size() == 1 && !always_union) return build_layer(m, r, counts.begin()->first);
  LayerUnion layers;
  for (const auto& [layer, count] : counts) layers.add(build_layer(m, r, layer), count, m.layers);
  return layers.take(m.layers);
}

// The once-per-step kernels' costs in a phase of shape `s`, in build_step_nodes' order.
std::array<KernelCost, 4> step_costs(const ModelSpec& m, const PhaseShape& s) {
  const long h = m.hidden, vocab_per_gpu = m.vocab / s.gpus;
  KernelCost embedding = allreduce_cost(s, h);  // vocab-parallel look-up, then an all-reduce of the rows
  embedding.weight_bytes = s.tokens * static_cast<double>(h) * s.head_weight_bytes / s.gpus;
  embedding.act_store_bytes += s.tokens * static_cast<double>(h) * s.act_bytes;
  embedding.tokens = s.tokens;
  PhaseShape last = s;  // LM head: logits of the last position of each sequence, then all-gathered; quantised
  last.tokens = s.batch * s.steps;  // checkpoints keep it 16-bit: no dequantisation
  last.weight_bytes = s.head_weight_bytes;
  last.dequant_ops_per_weight = 0;
  KernelCost lm_head = linear_cost(last, h, vocab_per_gpu, m.lm_head_bias, false, GemmInput::sixteen_bit);
  if (s.gpus > 1)
    lm_head.net_bytes = (s.gpus - 1.0) / s.gpus * last.tokens * static_cast<double>(m.vocab) * s.act_bytes;
  return {embedding, norm_cost(s, h, m.norm == NormKind::layer_norm), lm_head, sampler_cost(s, m.vocab)};
}

std::vector<KernelNode> build_step_nodes(const ModelSpec& m, const Request& r) {
  const long h = m.hidden, vocab_per_gpu = m.vocab / r.gpus;
  const auto prefill = step_costs(m, phase_shape(Phase::prefill, r)),
             decode = step_costs(m, phase_shape(Phase::decode, r));
  return {
      {"embedding", KernelType::embedding, "", "", m.vocab, h, 0, 0, 1, prefill[0], decode[0]},
      {"final_norm", KernelType::norm, "", "", h, h, 0, 0, 1, prefill[1], decode[1]},
      {"lm_head", KernelType::lm_head, "", "", h, vocab_per_gpu, 0, 0, 1, prefill[2], decode[2]},
      {std::string(kSamplerKernel), KernelType::softmax, "", "", m.vocab, m.vocab, 0, 0, 1, prefill[3], decode[3]},
  };
}

}  // namespace

std::string_view kernel_type_name(KernelType type) {
  static constexpr std::string_view names[kKernelTypeCount] = {
      "embedding",       "norm", "linear",     "rope",   "matmul_qk", "softmax", "matmul_sv",
      "fused_attention", "add",  "activation", "router", "allreduce", "lm_head"};
  return names[static_cast<int>(type)];
}

PhaseTotals KernelGraph::totals(Phase phase) const {
  KernelCost sum;
  for (const auto& node : nodes) sum += node.cost(phase).scaled(layers);
  for (const auto& node : step_nodes) sum += node.cost(phase);
  return {sum.ops * gpus, sum.mem_bytes() * gpus, sum.net_bytes * gpus};
}

namespace {

KernelGraph build_graph(const ModelSpec& model, const Request& request, bool always_union) {
  validate_request(request, model);
  KernelGraph graph = mean_layer(model, request, always_union);
  graph.layers = model.layers;
  graph.gpus = request.gpus;
  graph.step_nodes = build_step_nodes(model, request);
  return graph;
}

}  // namespace

KernelGraph build_kernel_graph(const ModelSpec& model, const Request& request) {
  return build_graph(model, request, false);
}

KernelGraph build_kernel_graph_by_union(const ModelSpec& model, const Request& request) {
  return build_graph(model, request, true);
}

// One layer kind of the template: its layer graph, cost functions and where its nodes go in the mean layer.
struct KernelGraphTemplate::Kind {
  KernelGraph layer;
  LayerRecipe recipe;
  std::vector<int> index;  // node i of the kind -> node of the union before ordering
  double weight = 1;       // count / layers
};

KernelGraphTemplate::KernelGraphTemplate(const ModelSpec& model, const Request& setup)
    : model_(model),
      prefill_(phase_shape(Phase::prefill, setup)),
      decode_(phase_shape(Phase::decode, setup)),
      graph_(build_kernel_graph(model, setup)) {
  const std::map<LayerSpec, int> counts = layer_kinds(model);
  LayerUnion layers;
  for (const auto& [layer, count] : counts) {
    Kind kind;
    kind.layer = build_layer(model, setup, layer, &kind.recipe);
    kind.weight = static_cast<double>(count) / model.layers;
    if (counts.size() > 1) kind.index = layers.add(kind.layer, count, model.layers);
    kinds_.push_back(std::move(kind));
  }
  if (counts.size() > 1) layers.take(model.layers, &order_);
}

KernelGraphTemplate::~KernelGraphTemplate() = default;
KernelGraphTemplate::KernelGraphTemplate(KernelGraphTemplate&&) noexcept = default;

const KernelGraph& KernelGraphTemplate::evaluate(const Request& request) {
  set_phase_counts(prefill_, request);
  set_phase_counts(decode_, request);
  if (order_.empty()) {
    refresh_layer(graph_, kinds_.front().recipe, prefill_, decode_);
  } else {
    refresh_union();
  }
  const auto prefill = step_costs(model_, prefill_), decode = step_costs(model_, decode_);
  for (size_t i = 0; i < graph_.step_nodes.size(); ++i) {
    graph_.step_nodes[i].prefill = prefill[i];
    graph_.step_nodes[i].decode = decode[i];
  }
  return graph_;
}

// The mean layer as LayerUnion builds it: each union node from zero, the kinds' costs added in the kinds' order,
// the experts loaded those of the first kind that has the node; then placed in the union's topological order.
void KernelGraphTemplate::refresh_union() {
  union_.assign(order_.size(), UnionNode{});
  for (Kind& kind : kinds_) {
    refresh_layer(kind.layer, kind.recipe, prefill_, decode_);
    for (size_t i = 0; i < kind.layer.nodes.size(); ++i) {
      const KernelNode& from = kind.layer.nodes[i];
      UnionNode& node = union_[kind.index[i]];
      if (!node.seen) {
        node.seen = true;
        node.experts_loaded_prefill = from.experts_loaded_prefill;
        node.experts_loaded_decode = from.experts_loaded_decode;
      }
      accumulate(node, from, kind.weight);
    }
  }
  for (size_t placed = 0; placed < order_.size(); ++placed) {
    const UnionNode& from = union_[order_[placed]];
    KernelNode& to = graph_.nodes[placed];
    to.prefill = from.prefill, to.decode = from.decode;
    to.experts_loaded_prefill = from.experts_loaded_prefill, to.experts_loaded_decode = from.experts_loaded_decode;
  }
}

}  // namespace llmco2::graph
