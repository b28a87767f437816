// engine/engine_profile.cc - engine profiles from data/engines/engines.json, range-checked.
#include "engine/engine_profile.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "core/input_file.h"
#include "core/paths.h"
#include "core/ranges.h"

namespace llmco2::engine {

double EngineProfile::launch_s(double kernel_launches, double step_tokens) const {
  const bool graph = cuda_graphs && step_tokens <= static_cast<double>(graph_max_tokens);
  return graph ? graph_launch_s : kernel_launches * launch_host_s;
}

// A profile held (`read` empty), or read on first use by `read`, once, whichever thread asks first.
struct EngineCatalog::Entry {
  std::function<EngineProfile()> read;
  mutable std::once_flag once;
  mutable std::optional<EngineProfile> profile;

  const EngineProfile& get() const {
    if (read) std::call_once(once, [this] { profile = read(); });
    return *profile;
  }
  static std::shared_ptr<Entry> held(EngineProfile p) {
    auto entry = std::make_shared<Entry>();
    entry->profile = std::move(p);
    return entry;
  }
  static std::shared_ptr<Entry> deferred(std::function<EngineProfile()> read) {
    auto entry = std::make_shared<Entry>();
    entry->read = std::move(read);
    return entry;
  }
};

const EngineCatalog& EngineCatalog::bundled() {
  static const EngineCatalog catalog = lazy_engine_catalog(default_engine_catalog_path());
  return catalog;
}

const EngineProfile& EngineCatalog::get(const std::string& id) const {
  auto it = engines_.find(id);
  if (it == engines_.end()) it = engines_.find("default");
  if (it == engines_.end()) fail("engine catalog has no '{}' and no 'default' entry", id);
  return it->second->get();
}

// Copy on write: an entry shared with another catalog, or not read yet, becomes this catalog's own.
EngineProfile& EngineCatalog::at(const std::string& id) {
  auto it = engines_.find(id);
  if (it == engines_.end()) fail("engine catalog has no '{}'", id);
  if (it->second->read || it->second.use_count() > 1) it->second = Entry::held(it->second->get());
  return *it->second->profile;
}

std::vector<std::string> EngineCatalog::ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, entry] : engines_) ids.push_back(id);
  return ids;
}

void EngineCatalog::add(EngineProfile profile) {
  const std::string id = profile.id;
  engines_[id] = Entry::held(std::move(profile));
}

EnginePrecision engine_precision(const Gpu& gpu, const Precision& requested, const std::string& engine) {
  return gpu.engine_precision(requested, EngineCatalog::bundled().get(engine).casts_bf16_to_fp16);
}

double& engine_field(EngineProfile& p, const std::string& field) {
  if (field == "launch_host_s") return p.launch_host_s;
  if (field == "graph_launch_s") return p.graph_launch_s;
  if (field == "step_host_s") return p.step_host_s;
  if (field == "step_host_per_seq_s") return p.step_host_per_seq_s;
  if (field == "tp_step_host_s") return p.tp_step_host_s;
  if (field == "draft_pass_host_s") return p.draft_pass_host_s;
  if (field == "spec_step_host_s") return p.spec_step_host_s;
  if (field == "sampler_random_bytes_per_logit") return p.sampler_random_bytes_per_logit;
  if (field == "sampler_top_p_extra_bytes_per_logit") return p.sampler_top_p_extra_bytes_per_logit;
  if (field == "sampler_greedy_bytes_per_logit") return p.sampler_greedy_bytes_per_logit;
  if (field == "sampler_penalty_bytes_per_logit") return p.sampler_penalty_bytes_per_logit;
  if (field == "memory_utilization") return p.memory_utilization;
  if (field == "expert_loop_launches") return p.expert_loop_launches;
  fail("engine profile has no numeric field '{}'", field);
}

namespace {

// The physical bounds any engine's values must lie in, whatever its own ranges say.
constexpr ParamRange kEngineBounds[] = {
    {"launch_host_s", 1e-6, 2e-4, "a CUDA launch costs ~2-5 us in C++; PyTorch eager with Python modules 10-100 us"},
    {"graph_launch_s", 1e-6, 1e-3, "one cudaGraphLaunch of a whole forward pass: tens of us"},
    {"step_host_s", 0.0, 2e-2, "scheduling, input preparation and sampler sync of one step: 0.1-10 ms"},
    {"step_host_per_seq_s", 0.0, 5e-4,
     "per-sequence bookkeeping per step: at most ~0.5 ms (llama.cpp samples on the CPU)"},
    {"tp_step_host_s", 0.0, 2e-3, "broadcasting a step's inputs to tensor-parallel workers: tens to hundreds of us"},
    {"draft_pass_host_s", 0.0, 2e-3,
     "a draft pass's host work: one CUDA-graph replay (~10 us) to ~20 Python-launched tensor operations (~0.3 ms)"},
    {"spec_step_host_s", 0.0, 3e-3,
     "a verification's extra host work: a few microseconds in C++ to ~40 Python-launched operations (~0.6 ms)"},
    {"sampler_random_bytes_per_logit", 2.0, 200.0,
     "temperature sampling: a fused sampler reads the logits once "
     "(~4 B); PyTorch casts, divides, softmaxes and draws an exponential per logit (~45-80 B)"},
    {"sampler_top_p_extra_bytes_per_logit", 0.0, 400.0,
     "top-p/top-k: a radix sort of fp32 keys with int64 indices, "
     "cumulative sum, mask and scatter back: ~150-220 B in PyTorch, a few passes in fused kernels"},
    {"sampler_greedy_bytes_per_logit", 2.0, 200.0,
     "greedy: an argmax (~4-10 B), up to ~60 B where the engine still "
     "computes softmax and log-softmax"},
    {"sampler_penalty_bytes_per_logit", 0.0, 200.0, "penalties: token-count tensors and masks over the vocabulary"},
    {"memory_utilization", 0.5, 1.0, "share of GPU memory an engine gives to weights + KV cache"},
    {"expert_loop_launches", 0.0, 10.0,
     "launches per routed graph node per loaded expert: 0 for fused MoE kernels "
     "(vLLM fused_moe, TensorRT-LLM, SGLang), a few for a Python loop over the experts"},
};

EngineProfile profile_from_json(const std::string& id, const Json& j, const std::string& source) {
  const std::string where = source + ": engines." + id;
  JsonReader r(j, where);
  EngineProfile p;
  p.id = id;
  if (auto v = r.optional_bool("cuda_graphs")) p.cuda_graphs = *v;
  if (auto v = r.optional_bool("paged_kv")) p.paged_kv = *v;
  if (auto v = r.optional_bool("continuous_batching")) p.continuous_batching = *v;
  if (auto v = r.optional_bool("casts_bf16_to_fp16")) p.casts_bf16_to_fp16 = *v;
  if (auto v = r.optional_bool("prefill_stalls_decode")) p.prefill_stalls_decode = *v;
  if (auto v = r.optional_bool("custom_allreduce")) p.custom_allreduce = *v;
  if (auto v = r.optional_string("allreduce_kernel")) {
    if (*v != "vllm" && *v != "sglang" && *v != "trtllm")
      fail("{}.allreduce_kernel: expected \"vllm\", \"sglang\" or \"trtllm\", got \"{}\"", where, *v);
    if (!p.custom_allreduce) fail("{}.allreduce_kernel: set without custom_allreduce: true", where);
    p.allreduce_kernel = *v;
  }
  if (auto v = r.optional_bool("kv_share_of_free")) p.kv_share_of_free = *v;
  if (auto v = r.optional_string("attention_kernel")) p.attention_kernel = *v;
  if (auto v = r.optional_number("graph_max_tokens"))
    p.graph_max_tokens = static_cast<long>(check_range(*v, 1, 1e6, where, "graph_max_tokens"));
  for (const ParamRange& bound : kEngineBounds) {
    double& field = engine_field(p, std::string(bound.name));
    if (auto v = r.optional_number(bound.name)) field = *v;
    check_range(field, bound, where);
  }
  if (r.has("ranges")) {
    for (const auto& [field, range] : r.at("ranges").items()) {
      if (!range.is_array() || range.size() != 2 || !range[0].is_number() || !range[1].is_number())
        fail("{}.ranges.{}: expected [lo, hi]", where, field);
      const double lo = range[0].get<double>(), hi = range[1].get<double>();
      const auto bound = std::find_if(std::begin(kEngineBounds), std::end(kEngineBounds),
                                      [&name = field](const ParamRange& b) { return b.name == name; });
      if (bound == std::end(kEngineBounds)) continue;  // a documented range for a non-fitted field
      check_range(lo, bound->lo, bound->hi, where, "ranges." + field + "[0]");
      check_range(hi, bound->lo, bound->hi, where, "ranges." + field + "[1]");
      if (lo > hi) fail("{}.ranges.{}: lower end {} above upper end {}", where, field, lo, hi);
      const double value = engine_field(p, field);
      if (value < lo || value > hi)
        fail("{}: {} = {:g} is outside its own range [{:g}, {:g}]", where, field, value, lo, hi);
      p.ranges[field] = {lo, hi};
    }
  }
  if (r.has("sources") && r.at("sources").is_object())
    for (const auto& [field, text] : r.at("sources").items())
      if (text.is_string()) p.sources[field] = text.get<std::string>();
  return p;
}

}  // namespace

EngineCatalog engine_catalog_from_json(const Json& j, const std::string& source) {
  JsonReader top(j, source);
  const Json& engines = top.at("engines");
  if (!engines.is_object()) fail("{}: key 'engines' must be an object of engine profiles", source);
  EngineCatalog catalog;
  for (const auto& [id, body] : engines.items()) {
    if (!body.is_object()) fail("{}: engines.{} must be an object", source, id);
    catalog.add(profile_from_json(id, body, source));
  }
  if (!catalog.has("default")) fail("{}: no 'default' engine (used for unknown engines)", source);
  return catalog;
}

namespace {

// A fitted value inside its engine's own range when it states one, else inside the field's physical bound.
void check_fitted(const EngineProfile& profile, const std::string& field, double value, const std::string& source) {
  const std::string key = "engines." + profile.id + "." + field;
  const auto range = profile.ranges.find(field);
  if (range != profile.ranges.end()) check_range(value, range->second.first, range->second.second, source, key);
  else check_range(value, engine_bound(field), source, key);
}

}  // namespace

void EngineCatalog::overlay(const std::string& id, std::vector<std::pair<std::string, double>> fields,
                            const std::string& source) {
  const auto it = engines_.find(id);
  if (it == engines_.end()) fail("engine catalog has no '{}'", id);
  for (const auto& [field, value] : fields)
    check_range(value, engine_bound(field), source, "engines." + id + "." + field);
  it->second = Entry::deferred([base = it->second, fields = std::move(fields), source] {
    EngineProfile profile = base->get();
    for (const auto& [field, value] : fields) {
      check_fitted(profile, field, value, source);
      engine_field(profile, field) = value;
    }
    return profile;
  });
}

EngineCatalog lazy_engine_catalog(const std::filesystem::path& path) {
  auto text = std::make_shared<const std::string>(read_input_file(path, kMaxJsonFileBytes, "JSON file"));
  const auto top = json_object_members(*text);
  std::optional<JsonMembers> engines;
  if (top)
    for (const auto& [key, value] : *top)
      if (key == "engines") engines = json_object_members(value);
  const bool has_default = engines && std::any_of(engines->begin(), engines->end(),
                                                  [](const auto& member) { return member.first == "default"; });
  if (!has_default) return load_engine_catalog(path);  // its reader says what is wrong
  EngineCatalog catalog;
  const std::string source = path.string();
  for (const auto& [key, value] : *engines) {
    const std::string_view slice = value;  // a named copy: lambdas may not capture structured bindings (clang)
    catalog.engines_[std::string(key)] = EngineCatalog::Entry::deferred([text, slice, source, id = std::string(key)] {
      const Json body = parse_json_text(slice, source + ": engines." + id);
      if (!body.is_object()) fail("{}: engines.{} must be an object", source, id);
      return with_json_errors(source, [&] { return profile_from_json(id, body, source); });
    });
  }
  return catalog;
}

EngineCatalog load_engine_catalog(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  return with_json_errors(path.string(), [&] { return engine_catalog_from_json(json, path.string()); });
}

std::filesystem::path default_engine_catalog_path() { return data_dir() / "engines" / "engines.json"; }

const ParamRange& engine_bound(const std::string& field) {
  for (const ParamRange& bound : kEngineBounds)
    if (bound.name == field) return bound;
  fail("internal: no physical bound for engine field '{}'", field);
}

}  // namespace llmco2::engine
