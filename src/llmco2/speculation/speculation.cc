// speculation/speculation.cc - the methods' catalog, the tokens a verification yields and the draft's shape.
#include "speculation/speculation.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "core/ranges.h"

namespace llmco2::speculation {

namespace {

// The most draft tokens a step may verify: engines run k of 1 to ~8 (EAGLE-3's trees verify up to 64 positions, not
// modelled), and acceptance past ~16 positions is below a percent.
constexpr int kMaxDraftTokens = 32;

DraftKind draft_kind(const std::string& value, const std::string& where) {
  if (value == "head") return DraftKind::head;
  if (value == "model") return DraftKind::model;
  if (value == "none") return DraftKind::none;
  fail("{}.draft: expected head, model or none, got '{}'", where, value);
}

SpecMethod method_from_json(const std::string& id, const Json& j, const std::string& source) {
  const std::string where = source + ": methods." + id;
  JsonReader r(j, where);
  SpecMethod m;
  m.id = id;
  m.draft = draft_kind(r.string("draft"), where);
  if (auto v = r.optional_number("head_vocab"))
    m.head_vocab = static_cast<long>(check_range(*v, 0, 1e7, where, "head_vocab"));
  if (auto v = r.optional_number("default_tokens"))
    m.default_tokens = static_cast<int>(check_range(*v, 1, kMaxDraftTokens, where, "default_tokens"));
  const Json& through = r.at("accepted_through");
  if (!through.is_array() || through.empty()) fail("{}.accepted_through: expected a list of probabilities", where);
  double previous = 1;
  for (const Json& p : through) {
    if (!p.is_number()) fail("{}.accepted_through: expected numbers", where);
    const double value = p.get<double>();
    if (!(value > 0 && value <= previous))
      fail("{}.accepted_through: each probability must lie in (0, the one before it], got {}", where, value);
    m.accepted_through.push_back(previous = value);
  }
  m.measured_on = r.string("measured_on");
  m.source = r.string("source");
  return m;
}

}  // namespace

SpecCatalog::SpecCatalog(const std::string& path) {
  const Json j = read_json_file(path);
  with_json_errors(path, [&] {
    if (!j.contains("methods") || !j.at("methods").is_object()) fail("{}: expected an object 'methods'", path);
    for (const auto& [id, entry] : j.at("methods").items()) methods_.push_back(method_from_json(id, entry, path));
    return 0;
  });
}

const SpecCatalog& SpecCatalog::bundled() {
  static const SpecCatalog catalog((data_dir() / "engines" / "speculation.json").string());
  return catalog;
}

std::vector<std::string> SpecCatalog::ids() const {
  std::vector<std::string> ids;
  for (const SpecMethod& m : methods_) ids.push_back(m.id);
  return ids;
}

const SpecMethod& SpecCatalog::get(const std::string& id) const {
  for (const SpecMethod& m : methods_)
    if (m.id == id) return m;
  std::string methods;
  for (const std::string& m : ids()) methods += m + ", ";
  fail("--spec: unknown method '{}' (expected {}or draft:MODEL)", id, methods);
}

namespace {

// P_1..P_k: the measured ones, then the last conditional rate carried on.
std::vector<double> through_k(const std::vector<double>& accepted_through, int k) {
  std::vector<double> out;
  if (accepted_through.empty()) return out;
  const size_t n = accepted_through.size();
  const double rate = n >= 2 ? accepted_through[n - 1] / accepted_through[n - 2] : accepted_through[0];
  double p = 0;
  for (int i = 1; i <= k; ++i) {
    p = static_cast<size_t>(i) <= n ? accepted_through[static_cast<size_t>(i) - 1] : p * rate;
    out.push_back(p);
  }
  return out;
}

}  // namespace

double tokens_per_step(const std::vector<double>& accepted_through, int k) {
  double tokens = 1;
  for (double p : through_k(accepted_through, k)) tokens += p;
  return tokens;
}

// Renewal count: N(t) = 1 + sum_j P(yield j) N(t - j), N(t <= 0) = 0, where a step yields j = 1 + (accepted) with
// P(j) = P_(j-1) - P_j (P_0 = 1, P_(k+1) = 0). Past kExactTokens its increments have settled to 1 / E per token.
double Speculation::verification_steps(long tokens) const {
  if (tokens <= 0) return 0.0;
  if (!active()) return static_cast<double>(tokens);
  constexpr long kExactTokens = 2048;
  const size_t k = accepted_through.size();
  std::vector<double> yield(k + 2, 0.0);  // yield[j]: P(a step yields j tokens), j = 1..k+1
  for (size_t j = 1; j <= k + 1; ++j)
    yield[j] = (j == 1 ? 1.0 : accepted_through[j - 2]) - (j <= k ? accepted_through[j - 1] : 0.0);
  const long exact = std::min(tokens, kExactTokens);
  std::vector<double> steps(static_cast<size_t>(exact) + 1, 0.0);
  for (long t = 1; t <= exact; ++t) {
    double n = 1;
    for (size_t j = 1; j <= k + 1 && static_cast<long>(j) < t; ++j) n += yield[j] * steps[static_cast<size_t>(t) - j];
    steps[static_cast<size_t>(t)] = n;
  }
  return steps[static_cast<size_t>(exact)] + static_cast<double>(tokens - exact) / tokens_per_step();
}

std::vector<double> geometric_acceptance(double acceptance_rate, int k) {
  std::vector<double> through;
  for (int i = 1; i <= k; ++i) through.push_back(std::pow(acceptance_rate, i));
  return through;
}

ModelSpec draft_head(const ModelSpec& target, const SpecMethod& method) {
  ModelSpec head = target;
  head.id = target.id + "+" + method.id + "-head";
  head.layers = 1;
  LayerSpec layer;
  if (method.id == "mtp") {
    layer = target.layer_specs.back();  // DeepSeek-V3's MTP module is a block of the model's own kind
  } else {
    // EAGLE's head is a dense decoder layer of the target's width and attention shape (Li et al. 2024, section 4).
    const auto attention = std::find_if(target.layer_specs.begin(), target.layer_specs.end(),
                                        [](const LayerSpec& l) { return l.mixer == MixerKind::attention; });
    layer.mixer = MixerKind::attention;
    layer.attention = attention != target.layer_specs.end() ? attention->attention : LayerAttention{};
    if (layer.attention.kv_heads <= 0) layer.attention.kv_heads = std::max(1, target.heads);
    layer.attention.window_tokens = 0, layer.attention.chunk_tokens = 0, layer.attention.vertical_stride = 0;
    layer.ffn = FfnKind::dense;
    if (head.intermediate <= 0 && target.moe)  // a MoE target without dense layers: its active FFN width
      head.intermediate = target.moe->expert_intermediate * target.moe->experts_per_token;
    if (head.head_dim <= 0 && target.heads > 0) head.head_dim = static_cast<int>(target.hidden / target.heads);
  }
  head.layer_specs = {layer};
  if (layer.mixer != MixerKind::mla) head.mla.reset();
  if (layer.mixer != MixerKind::mamba) head.mamba.reset();
  if (layer.ffn != FfnKind::moe) head.moe.reset();
  if (method.head_vocab > 0) head.vocab = method.head_vocab;
  return head;
}

namespace {

// The bytes a head adds beside the target: its layer (and its own LM head when its vocabulary is its own), at the
// weights' bytes per parameter of the whole head.
double head_weight_bytes(const ModelSpec& head, const SpecMethod& method, const Precision& precision) {
  const double total = head.total_params();
  if (!(total > 0)) return 0.0;
  const double shared = head.embedding_params() + (method.head_vocab > 0 ? 0.0 : head.lm_head_params());
  return head.weight_bytes(precision) * std::max(0.0, total - shared) / total;
}

std::string acceptance_basis(const SpecMethod& m) {
  return fmt::format("measured acceptance of {} ({}; {})", m.id, m.measured_on, m.source);
}

}  // namespace

Speculation resolve_speculation(const std::string& method, int draft_tokens, std::optional<double> acceptance_rate,
                                const ModelSpec& target, const Precision& precision, const ModelSpec* draft_model) {
  Speculation s;
  if (method.empty()) {
    if (draft_tokens != 0 || acceptance_rate) fail("--spec-tokens and --spec-acceptance need --spec METHOD");
    return s;
  }
  if (draft_tokens < 0 || draft_tokens > kMaxDraftTokens)
    fail("--spec-tokens must be 1 to {} draft tokens per step, got {}", kMaxDraftTokens, draft_tokens);
  if (acceptance_rate && !(*acceptance_rate > 0 && *acceptance_rate < 1))
    fail("--spec-acceptance must be a per-token acceptance rate in (0, 1), got {}", *acceptance_rate);
  s.method = method;
  if (method == "draft") {
    if (!draft_model) fail("--spec draft:MODEL: name the draft model (a model id, e.g. draft:llama-3.2-1b)");
    if (!acceptance_rate)
      fail(
          "--spec draft:{} needs --spec-acceptance: a draft model's acceptance depends on the pair (vLLM logs it as "
          "'Avg Draft acceptance rate'); no published figure stands for every pair",
          draft_model->id);
    if (draft_model->vocab != target.vocab)
      fail("--spec draft:{}: its vocabulary ({}) differs from {}'s ({}); a draft model must share the tokenizer",
           draft_model->id, draft_model->vocab, target.id, target.vocab);
    s.draft_tokens = draft_tokens > 0 ? draft_tokens : 3;
    s.draft = *draft_model;
    s.draft_weight_bytes = draft_model->weight_bytes(precision);
  } else {
    const SpecMethod& m = SpecCatalog::bundled().get(method);
    if (method == "mtp" && target.mtp_layers == 0)
      fail(
          "--spec mtp: {} has no multi-token-prediction module (its config has no num_nextn_predict_layers; "
          "DeepSeek-V3 and R1 have one); use eagle, eagle3, ngram or draft:MODEL",
          target.id);
    s.draft_tokens = draft_tokens > 0 ? draft_tokens : m.default_tokens;
    if (m.draft == DraftKind::head) {
      s.draft = draft_head(target, m);
      s.draft_weight_bytes = head_weight_bytes(*s.draft, m, precision);
    }
    if (!acceptance_rate) {
      s.accepted_through = through_k(m.accepted_through, s.draft_tokens);
      s.acceptance_basis = acceptance_basis(m);
      if (static_cast<size_t>(s.draft_tokens) > m.accepted_through.size())
        s.acceptance_basis += fmt::format("; drafts past the {} measured keep the last measured conditional rate",
                                          m.accepted_through.size());
      return s;
    }
  }
  s.accepted_through = geometric_acceptance(*acceptance_rate, s.draft_tokens);
  s.acceptance_basis =
      fmt::format("given: {} per draft token, independent positions (Leviathan et al. 2023)", *acceptance_rate);
  return s;
}

}  // namespace llmco2::speculation
