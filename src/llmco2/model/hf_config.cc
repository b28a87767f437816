// model/hf_config.cc - per-family key names and defaults of Hugging Face configs (transformers' *Config classes).
#include "model/hf_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"

namespace llmco2::model {
namespace {

// What a family's modelling code fixes and its config does not say (transformers and vLLM model files).
struct FamilyTraits {
  std::string_view model_type;
  MlpKind mlp;
  NormKind norm;
  PositionKind position;
  int norms_per_layer;
  bool tied_default;      // the *Config default of tie_word_embeddings
  bool qkv_bias_default;  // bias of q/k/v when the config has no key for it
  bool o_bias_default;
  bool mlp_bias_default;
  std::string_view default_act;
};

constexpr std::array<FamilyTraits, 23> kFamilies{{
    // type         mlp              norm                   position              norms tied   qkv    o      mlp    act
    {"llama", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"mistral", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"mixtral", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"qwen2", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, true, false, false, "silu"},
    {"qwen2_moe", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, true, false, false, "silu"},
    {"qwen3", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"qwen3_moe", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"gemma", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, true, false, false, false,
     "gelu_pytorch_tanh"},
    {"gemma2", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 4, true, false, false, false,
     "gelu_pytorch_tanh"},
    {"gemma3_text", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 4, true, false, false, false,
     "gelu_pytorch_tanh"},
    {"bloom", MlpKind::plain, NormKind::layer_norm, PositionKind::alibi, 2, true, true, true, true,
     "gelu_pytorch_tanh"},
    {"falcon", MlpKind::plain, NormKind::layer_norm, PositionKind::rotary, 2, true, false, false, false, "gelu"},
    {"opt", MlpKind::plain, NormKind::layer_norm, PositionKind::learned, 2, true, true, true, true, "relu"},
    {"gptj", MlpKind::plain, NormKind::layer_norm, PositionKind::rotary, 1, false, false, false, true, "gelu_new"},
    {"gpt_neox", MlpKind::plain, NormKind::layer_norm, PositionKind::rotary, 2, false, true, true, true, "gelu"},
    {"phi3", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"phi3small", MlpKind::gated, NormKind::layer_norm, PositionKind::rotary, 2, true, true, true, true, "gegelu"},
    {"starcoder2", MlpKind::plain, NormKind::layer_norm, PositionKind::rotary, 2, true, true, true, true,
     "gelu_pytorch_tanh"},
    {"gpt_oss", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, true, true, true, "silu"},
    {"deci", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"deepseek_v3", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"llama4_text", MlpKind::gated, NormKind::rms_norm, PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"nemotron_h", MlpKind::plain, NormKind::rms_norm, PositionKind::none, 2, false, false, false, false, "relu2"},
}};

// Other spellings of a family: multimodal wrappers (their text_config is read) and Falcon's release-time custom
// code (RWConfig: "RefinedWebModel" for falcon-7b, "RefinedWeb" for falcon-40b's new decoder architecture).
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kFamilyAliases{
    {{"gemma3", "gemma3_text"}, {"llama4", "llama4_text"}, {"RefinedWebModel", "falcon"}, {"RefinedWeb", "falcon"}}};

const FamilyTraits* find_family(std::string_view model_type) {
  for (const auto& [alias, family] : kFamilyAliases)
    if (model_type == alias) model_type = family;
  for (const auto& f : kFamilies)
    if (f.model_type == model_type) return &f;
  return nullptr;
}

// The largest value each architecture key may take (docs/reliability.md): several times the largest published model,
// small enough that per-layer tables, parameter counts and kernel sizes stay far from exhausting memory or a long.
struct ArchitectureBound {
  std::string_view key;
  double max;
  std::string_view why;
};
constexpr double kDefaultMax = 1e9;  // keys without a bound of their own (window sizes, intervals, ranks of lists)
constexpr std::array<ArchitectureBound, 21> kArchitectureBounds{{
    {"num_hidden_layers", 1024, "the deepest public models have 126 (Llama-3.1-405B)"},
    {"hidden_size", 65536, "the widest public models have 18432 (Nemotron-4-340B)"},
    {"num_attention_heads", 1024, "public models have at most 128"},
    {"num_key_value_heads", 1024, "public models have at most 128"},
    {"num_key_value_heads_per_layer", 1024, "public models have at most 128"},
    {"head_dim", 4096, "public models use at most 256"},
    {"intermediate_size", 1 << 20, "the widest public FFN is 73728 (Nemotron-4-340B)"},
    {"intermediate_size_mlp", 1 << 20, "the widest public FFN is 73728 (Nemotron-4-340B)"},
    {"n_inner", 1 << 20, "the widest public FFN is 73728 (Nemotron-4-340B)"},
    {"moe_intermediate_size", 1 << 20, "public experts are at most 32768 wide (Grok-1)"},
    {"shared_expert_intermediate_size", 1 << 20, "public shared experts are at most 20480 wide (Qwen2-57B)"},
    {"vocab_size", 1 << 22, "the largest public vocabulary has 262208 tokens (Gemma 3)"},
    {"num_local_experts", 4096, "public MoE models have at most 512 experts (Qwen3-Next)"},
    {"num_experts_per_tok", 4096, "public MoE models have at most 512 experts (Qwen3-Next)"},
    {"kv_lora_rank", 65536, "DeepSeek-V3 caches a 512-wide latent"},
    {"q_lora_rank", 65536, "DeepSeek-V3 uses 1536"},
    {"mamba_num_heads", 65536, "Nemotron-H uses 128"},
    {"mamba_head_dim", 4096, "Nemotron-H uses 64 to 80"},
    {"ssm_state_size", 4096, "Mamba-2 models use 128"},
    {"n_groups", 65536, "Nemotron-H uses 8"},
    {"conv_kernel", 1024, "Mamba-2 uses 4"},
}};

double architecture_max(std::string_view key) {
  for (const auto& bound : kArchitectureBounds)
    if (bound.key == key) return bound.max;
  return kDefaultMax;
}

std::string architecture_why(std::string_view key) {
  for (const auto& bound : kArchitectureBounds)
    if (bound.key == key) return fmt::format(" ({})", bound.why);
  return "";
}

// Reads the first present key of several spellings, e.g. {"num_hidden_layers", "n_layer"}.
class ConfigReader {
 public:
  ConfigReader(const Json& config, std::string source) : reader_(config, std::move(source)) {}

  std::optional<double> find(std::initializer_list<std::string_view> keys) const {
    for (const auto key : keys)
      if (reader_.has(key)) return reader_.number(key);
    return std::nullopt;
  }
  long count(std::initializer_list<std::string_view> keys) const {
    const auto value = find(keys);
    if (!value) fail("{}: missing key '{}'", reader_.source(), join_keys(keys));
    return checked_count(*keys.begin(), *value);
  }
  long checked_count(std::string_view key, double value) const {
    if (!(value >= 1) || value != std::floor(value))
      fail("{}: key '{}' must be a positive whole number, found {}", reader_.source(), key, value);
    check_bound(key, value);
    return static_cast<long>(value);
  }
  void check_bound(std::string_view key, double value) const {
    if (value > architecture_max(key))
      fail("{}: key '{}' = {} is above the largest accepted, {}{}", reader_.source(), key, value, architecture_max(key),
           architecture_why(key));
  }
  // A whole number that may be 0 (e.g. first_k_dense_replace), or `fallback` when the key is absent.
  long whole_or(std::string_view key, long fallback) const {
    const auto value = find({key});
    if (!value) return fallback;
    if (!(*value >= 0) || *value != std::floor(*value))
      fail("{}: key '{}' must be a whole number (0 or more), found {}", source(), key, *value);
    check_bound(key, *value);
    return static_cast<long>(*value);
  }
  long count_or(std::string_view key, long fallback) const {
    const auto value = find({key});
    return value ? checked_count(key, *value) : fallback;
  }
  // A list of whole numbers from 0 to `below` - 1 (layer indices, 0/1 flags); empty when the key is absent.
  std::vector<long> whole_numbers(std::string_view key, long below) const {
    std::vector<long> out;
    if (!has(key)) return out;
    const Json& list = at(key);
    if (!list.is_array()) fail("{}: key '{}' must be a list of whole numbers", source(), key);
    for (const auto& item : list) {
      const double value = item.is_number() ? item.get<double>() : -1.0;
      if (value < 0 || value >= static_cast<double>(below) || value != std::floor(value))
        fail("{}: key '{}' must hold whole numbers from 0 to {}, found {}", source(), key, below - 1, item.dump());
      out.push_back(static_cast<long>(value));
    }
    return out;
  }
  std::optional<bool> flag(std::string_view key) const { return reader_.optional_bool(key); }
  std::optional<std::string> text(std::string_view key) const { return reader_.optional_string(key); }
  bool has(std::string_view key) const { return reader_.has(key); }
  const Json& at(std::string_view key) const { return reader_.at(key); }
  const std::string& source() const { return reader_.source(); }

 private:
  static std::string join_keys(std::initializer_list<std::string_view> keys) {
    std::string out;
    for (const auto key : keys) out += (out.empty() ? "" : "' (or '") + std::string(key);
    return keys.size() > 1 ? out + "')" : out;
  }
  JsonReader reader_;
};

Activation parse_activation(const ConfigReader& c, std::string_view fallback) {
  std::string name(fallback);
  for (const auto key : {"mlp_hidden_act", "hidden_activation", "hidden_act", "activation_function"})
    if (auto value = c.text(key)) {
      name = *value;
      break;
    }
  if (name == "silu" || name == "swish" || name == "swiglu") return Activation::silu;
  if (name == "relu") return Activation::relu;
  if (name == "relu2") return Activation::relu2;
  if (name == "gelu") return Activation::gelu;
  // gelu_new (transformers' NewGELUActivation, GPT-2/GPT-J) and gelu_fast are the tanh approximation.
  if (name == "gelu_pytorch_tanh" || name == "gelu_tanh" || name == "gegelu" || name == "bloom_gelu" ||
      name == "gelu_new" || name == "gelu_fast")
    return Activation::gelu_tanh;
  fail("{}: unsupported activation '{}' (expected silu, relu, relu2, gelu or gelu_pytorch_tanh)", c.source(), name);
}

// A torch dtype name under `key` (torch_dtype, mamba_ssm_cache_dtype): float32, float16 or bfloat16.
DType torch_dtype_named(const ConfigReader& c, std::string_view key, const std::string& name) {
  if (name == "float32") return DType::fp32;
  if (name == "float16") return DType::fp16;
  if (name == "bfloat16") return DType::bf16;
  fail("{}: key '{}' must be float32, float16 or bfloat16, found '{}'", c.source(), key, name);
}

void read_dtype(const ConfigReader& c, ModelSpec& m) {
  const auto name = c.text("torch_dtype");
  if (!name) return;  // keeps bf16, dtype_from_config = false
  m.default_dtype = torch_dtype_named(c, "torch_dtype", *name);
  m.dtype_from_config = true;
  m.default_precision = {m.default_dtype, m.default_dtype, m.default_dtype};
}

// Quantisation (transformers' quantization_config; ModelOpt's hf_quant_config.json) -> the checkpoint's precision.
// Embeddings, LM head and norms stay at torch_dtype in every format read here (Precision::unquantised_dtype).
class QuantReader {
 public:
  QuantReader(const Json& q, std::string where) : q_(q), where_(std::move(where)) {}

  std::optional<std::string> text(std::string_view key) const {
    if (!q_.contains(key) || q_.at(key).is_null()) return std::nullopt;
    if (!q_.at(key).is_string()) fail("{}: key '{}' must be a string", where_, key);
    return q_.at(key).get<std::string>();
  }
  long bits(std::initializer_list<std::string_view> keys, const std::string& method) const {
    for (const auto key : keys)
      if (q_.contains(key) && q_.at(key).is_number()) {
        const double value = q_.at(key).get<double>();
        if (value != 4 && value != 8) fail("{}: key '{}' must be 4 or 8 for {}, found {}", where_, key, method, value);
        return static_cast<long>(value);
      }
    fail("{}: missing key '{}' for quant_method '{}'", where_, *keys.begin(), method);
  }
  bool flag(std::string_view key) const {
    return q_.contains(key) && q_.at(key).is_boolean() && q_.at(key).get<bool>();
  }
  const Json& json() const { return q_; }
  const std::string& where() const { return where_; }

 private:
  const Json& q_;
  std::string where_;
};

DType kv_from_algo(const QuantReader& q, std::string_view key, DType sixteen) {
  const auto algo = q.text(key);
  if (!algo) return sixteen;
  if (*algo == "FP8") return DType::fp8;
  if (*algo == "NVFP4") return DType::nvfp4;
  if (*algo == "INT8") return DType::int8;
  fail("{}: key '{}' must be FP8, NVFP4 or INT8, found '{}'", q.where(), key, *algo);
}

// ModelOpt (TensorRT Model Optimizer): quant_algo FP8, NVFP4, W4A16_AWQ, W4A8_AWQ, W8A8_SQ_PER_CHANNEL, MXFP4.
Precision modelopt_precision(const QuantReader& q, DType sixteen) {
  const auto algo = q.text("quant_algo");
  if (!algo) fail("{}: missing key 'quant_algo'", q.where());
  const DType kv = kv_from_algo(q, "kv_cache_quant_algo", sixteen);
  if (*algo == "FP8") return {DType::fp8, DType::fp8, kv};
  if (*algo == "NVFP4") return {DType::nvfp4, DType::nvfp4, kv};
  if (*algo == "MXFP4") return {DType::mxfp4, sixteen, kv};
  if (*algo == "W4A16_AWQ") return {DType::int4, sixteen, kv};
  if (*algo == "W4A8_AWQ") return {DType::int4, DType::fp8, kv};
  if (*algo == "W8A8_SQ_PER_CHANNEL") return {DType::int8, DType::int8, kv};
  fail("{}: unsupported quant_algo '{}' (supported: FP8, NVFP4, MXFP4, W4A16_AWQ, W4A8_AWQ, W8A8_SQ_PER_CHANNEL)",
       q.where(), *algo);
}

// One compressed-tensors quantisation args object ({num_bits, type, group_size}) -> a dtype; null -> `sixteen`.
DType compressed_tensors_dtype(const QuantReader& q, const Json& args, DType sixteen) {
  if (args.is_null()) return sixteen;
  const double bits = args.value("num_bits", 0.0);
  const std::string type = args.value("type", std::string("int"));
  if (bits == 8) return type == "float" ? DType::fp8 : DType::int8;
  if (bits == 4 && type == "float") return args.value("group_size", 16.0) == 32 ? DType::mxfp4 : DType::nvfp4;
  if (bits == 4) return DType::int4;
  fail("{}: compressed-tensors num_bits must be 4 or 8, found {}", q.where(), bits);
}

// compressed-tensors (llm-compressor, Red Hat / Neural Magic): the first config group's weights and activations.
Precision compressed_tensors_precision(const QuantReader& q, DType sixteen) {
  const Json& groups = q.json().contains("config_groups") ? q.json().at("config_groups") : Json();
  if (!groups.is_object() || groups.empty()) fail("{}: missing key 'config_groups'", q.where());
  const Json& group = groups.begin().value();
  const DType w = compressed_tensors_dtype(q, group.value("weights", Json()), sixteen);
  const DType a = compressed_tensors_dtype(q, group.value("input_activations", Json()), sixteen);
  const Json& kv_scheme = q.json().value("kv_cache_scheme", Json());
  Precision p{w, a, compressed_tensors_dtype(q, kv_scheme, sixteen)};
  const Json& weights = group.value("weights", Json());
  p.block_scaled = weights.is_object() && weights.value("strategy", std::string()) == "block" && p.one_byte_gemms();
  return p;
}

Precision quantised_precision(const QuantReader& q, const std::string& method, const ModelSpec& m) {
  const DType t = m.default_dtype;
  if (method == "awq" || method == "gptq") {
    const DType w = q.bits({"bits", "w_bit"}, method) == 4 ? DType::int4 : DType::int8;
    return {w, t, t};  // weight-only: w4a16 / w8a16
  }
  if (method == "fp8") {  // dynamic or static fp8 activations (W8A8); DeepSeek and Qwen's checkpoints in 128 blocks
    Precision p{DType::fp8, DType::fp8, t};
    const Json& block = q.json().value("weight_block_size", Json());
    p.block_scaled = block.is_array() && !block.empty();
    return p;
  }
  if (method == "mxfp4") {  // gpt-oss: only the experts (modules_to_not_convert: attention, router, embeddings)
    if (m.moe) return {t, t, t, DType::mxfp4};
    return {DType::mxfp4, t, t};
  }
  if (method == "bitsandbytes") {
    if (q.flag("load_in_4bit")) return {DType::int4, t, t};
    if (q.flag("load_in_8bit")) return {DType::int8, DType::int8, t};  // LLM.int8(): int8 matmuls
    fail("{}: bitsandbytes config with neither load_in_4bit nor load_in_8bit", q.where());
  }
  if (method == "compressed-tensors") return compressed_tensors_precision(q, t);
  if (method == "modelopt") return modelopt_precision(q, t);
  fail(
      "{}: unsupported quant_method '{}' (supported: awq, gptq, fp8, mxfp4, bitsandbytes, compressed-tensors, "
      "modelopt); pass --dtype to choose a precision",
      q.where(), method);
}

void read_quantization(const ConfigReader& c, const Json* hf_quant_config, ModelSpec& m) {
  if (hf_quant_config != nullptr) {  // ModelOpt checkpoints: {"producer": ..., "quantization": {...}}
    if (!hf_quant_config->contains("quantization") || !hf_quant_config->at("quantization").is_object())
      fail("{}: hf_quant_config.json has no 'quantization' object", c.source());
    m.default_precision = modelopt_precision(
        QuantReader(hf_quant_config->at("quantization"), c.source() + " (hf_quant_config.json)"), m.default_dtype);
    m.quantization = "modelopt";
    return;
  }
  if (!c.has("quantization_config")) return;
  const Json& config = c.at("quantization_config");
  if (!config.is_object()) fail("{}: key 'quantization_config' must be an object", c.source());
  const QuantReader q(config, c.source() + " quantization_config");
  const auto method = q.text("quant_method");
  if (!method) fail("{}: missing key 'quant_method'", q.where());
  m.default_precision = quantised_precision(q, *method, m);
  m.quantization = *method;
}

long read_intermediate(const ConfigReader& c, const ModelSpec& m) {
  if (m.family == "bloom" || m.family == "falcon" || m.family == "gptj") {
    const auto value = c.find({"n_inner", "ffn_hidden_size"});
    return value ? c.checked_count("n_inner", *value) : 4 * m.hidden;  // BloomMLP / FalconMLP / GPTJMLP: 4 x hidden
  }
  if (m.family == "llama4_text") return c.count({"intermediate_size_mlp"});  // dense layers; experts: intermediate_size
  return c.count({"intermediate_size", "ffn_dim", "ff_intermediate_size"});
}

// Falcon's new decoder architecture (falcon-40b/180b): KV groups, separate norms for attention and MLP.
bool falcon_new_architecture(const ConfigReader& c, std::string_view model_type) {
  return c.flag("new_decoder_architecture").value_or(model_type == "RefinedWeb");
}

int read_kv_heads(const ConfigReader& c, const ModelSpec& m, std::string_view model_type) {
  if (m.family == "falcon") {
    if (falcon_new_architecture(c, model_type)) return static_cast<int>(c.count({"num_kv_heads", "n_head_kv"}));
    return c.flag("multi_query").value_or(true) ? 1 : m.heads;  // FalconConfig: multi_query defaults to true
  }
  if (auto kv = c.find({"num_key_value_heads"})) return static_cast<int>(c.checked_count("num_key_value_heads", *kv));
  return m.heads;  // plain multi-head attention
}

// Which layers slide: Mistral/Qwen2/Phi-3/StarCoder2 every layer; Gemma2 even layers; Gemma3 all but every Nth;
// gpt-oss (and newer configs) an explicit layer_types list.
std::vector<long> read_windows(const ConfigReader& c, const ModelSpec& m) {
  std::vector<long> windows(m.layers, 0);
  const auto window = c.find({"sliding_window"});
  const bool enabled = c.flag("use_sliding_window").value_or(true);
  if (!window || !enabled) return windows;
  const long w = c.checked_count("sliding_window", *window);
  if (c.has("layer_types")) {
    const Json& types = c.at("layer_types");
    if (!types.is_array() || static_cast<int>(types.size()) != m.layers)
      fail("{}: key 'layer_types' must list {} layer types", c.source(), m.layers);
    for (int i = 0; i < m.layers; ++i) windows[i] = types[i] == "sliding_attention" ? w : 0;
    return windows;
  }
  for (int i = 0; i < m.layers; ++i) {
    if (m.family == "gemma2") windows[i] = (i % 2 == 0) ? w : 0;
    else if (m.family == "gemma3_text") {
      const long pattern = c.count_or("sliding_window_pattern", 6);
      windows[i] = ((i + 1) % pattern != 0) ? w : 0;
    } else windows[i] = w;
  }
  return windows;
}

void read_per_layer_kv_heads(const ConfigReader& c, ModelSpec& m) {  // DeciLM: variable GQA
  if (!c.has("num_key_value_heads_per_layer")) return;
  const Json& per_layer = c.at("num_key_value_heads_per_layer");
  if (!per_layer.is_array() || static_cast<int>(per_layer.size()) != m.layers)
    fail("{}: key 'num_key_value_heads_per_layer' must list {} numbers", c.source(), m.layers);
  for (int i = 0; i < m.layers; ++i) {
    if (!per_layer[i].is_number()) fail("{}: key 'num_key_value_heads_per_layer' must hold numbers", c.source());
    m.layer_specs[i].attention.kv_heads =
        static_cast<int>(c.checked_count("num_key_value_heads_per_layer", per_layer[i].get<double>()));
  }
}

void read_block_sparse(const ConfigReader& c, ModelSpec& m, int kv_heads) {  // Phi-3-small
  if (m.family != "phi3small") return;  // block-sparse layers: local blocks + 1 in vert_stride blocks beyond them
  const long every = c.count_or("dense_attention_every_n_layers", 2);
  const long local = c.count_or("blocksparse_num_local_blocks", 16) * c.count_or("blocksparse_block_size", 64);
  const int stride = static_cast<int>(c.count_or("blocksparse_vert_stride", 8));
  for (int i = 0; i < m.layers; ++i)
    if ((i + 1) % every != 0) m.layer_specs[i].attention = LayerAttention{kv_heads, local, stride};
}

// Llama-4: no_rope_layers[i] = 1 marks a RoPE layer, 0 a NoPE one; empty means every 4th layer is NoPE
// (Llama4TextConfig's no_rope_layer_interval). RoPE layers attend within chunks of attention_chunk_size tokens
// (vLLM: chunked local attention), NoPE layers attend to the whole context.
void read_llama4_attention(const ConfigReader& c, ModelSpec& m) {
  if (m.family != "llama4_text") return;
  std::vector<long> uses_rope = c.whole_numbers("no_rope_layers", 2);
  if (uses_rope.empty()) {
    const long interval = c.count_or("no_rope_layer_interval", 4);
    for (int i = 0; i < m.layers; ++i) uses_rope.push_back((i + 1) % interval != 0 ? 1 : 0);
  }
  if (static_cast<int>(uses_rope.size()) != m.layers)
    fail("{}: key 'no_rope_layers' must list {} flags, found {}", c.source(), m.layers, uses_rope.size());
  const long chunk = c.count_or("attention_chunk_size", 0);
  for (int i = 0; i < m.layers; ++i) {
    m.layer_specs[i].attention.rope = uses_rope[i] == 1;
    m.layer_specs[i].attention.chunk_tokens = uses_rope[i] == 1 ? chunk : 0;
  }
}

// Multi-head latent attention (DeepSeek-V2/V3): q_lora_rank may be null (q_proj straight from the hidden state).
void read_mla(const ConfigReader& c, ModelSpec& m) {
  if (!c.has("kv_lora_rank")) return;
  MlaSpec mla;
  mla.q_lora_rank = c.has("q_lora_rank") ? c.count({"q_lora_rank"}) : 0;
  mla.kv_lora_rank = c.count({"kv_lora_rank"});
  mla.qk_nope_head_dim = c.count({"qk_nope_head_dim"});
  mla.qk_rope_head_dim = c.count({"qk_rope_head_dim"});
  mla.v_head_dim = c.count({"v_head_dim"});
  m.head_dim = static_cast<int>(mla.qk_head_dim());
  m.mla = mla;
  for (auto& layer : m.layer_specs) layer = LayerSpec{MixerKind::mla, LayerAttention{1}, layer.ffn};  // one latent
}

// Nemotron-H: hybrid_override_pattern has one character per layer: 'M' Mamba-2, '*' attention, '-' MLP.
void read_hybrid_pattern(const ConfigReader& c, ModelSpec& m) {
  if (m.family != "nemotron_h") return;
  const auto pattern = c.text("hybrid_override_pattern");
  if (!pattern || static_cast<int>(pattern->size()) != m.layers)
    fail("{}: key 'hybrid_override_pattern' must be a string of {} characters (M, * or -)", c.source(), m.layers);
  for (int i = 0; i < m.layers; ++i) {
    LayerSpec& layer = m.layer_specs[i];
    const char kind = (*pattern)[i];
    if (kind == 'M') layer = LayerSpec{MixerKind::mamba, LayerAttention{}, FfnKind::none};
    else if (kind == '*') layer.ffn = FfnKind::none;
    else if (kind == '-') layer = LayerSpec{MixerKind::none, LayerAttention{}, FfnKind::dense};
    else
      fail(
          "{}: key 'hybrid_override_pattern' has '{}' at layer {} (supported: M Mamba-2, * attention, - MLP; "
          "E MoE layers are not supported)",
          c.source(), kind, i);
  }
}

// Nemotron-H's Mamba-2 mixer (NemotronHConfig attribute names and defaults).
void read_mamba(const ConfigReader& c, ModelSpec& m) {
  if (m.family != "nemotron_h") return;
  MambaSpec mamba;
  mamba.heads = static_cast<int>(c.count({"mamba_num_heads"}));
  mamba.head_dim = static_cast<int>(c.count({"mamba_head_dim"}));
  mamba.state_dim = static_cast<int>(c.count({"ssm_state_size"}));
  mamba.groups = static_cast<int>(c.count_or("n_groups", 8));
  mamba.conv_kernel = static_cast<int>(c.count_or("conv_kernel", 4));
  mamba.chunk_tokens = c.count_or("chunk_size", 256);
  mamba.conv_bias = c.flag("use_conv_bias").value_or(true);
  mamba.proj_bias = c.flag("mamba_proj_bias").value_or(false);
  if (const auto name = c.text("mamba_ssm_cache_dtype"))
    mamba.ssm_state_dtype = torch_dtype_named(c, "mamba_ssm_cache_dtype", *name);
  if (mamba.heads % mamba.groups != 0)
    fail("{}: mamba_num_heads ({}) must be a multiple of n_groups ({})", c.source(), mamba.heads, mamba.groups);
  m.mamba = mamba;
}

void read_layers(const ConfigReader& c, ModelSpec& m, std::string_view model_type) {
  const int kv_heads = read_kv_heads(c, m, model_type);
  const auto windows = read_windows(c, m);
  m.layer_specs.assign(m.layers, LayerSpec{MixerKind::attention, LayerAttention{kv_heads}, FfnKind::dense});
  for (int i = 0; i < m.layers; ++i) m.layer_specs[i].attention.window_tokens = windows[i];
  read_per_layer_kv_heads(c, m);
  read_block_sparse(c, m, kv_heads);
  read_llama4_attention(c, m);
  read_mla(c, m);
  read_hybrid_pattern(c, m);
  read_mamba(c, m);
}

// Which layers' FFN is a mixture of experts, by transformers' rules, each key neutral when absent: DeepSeek's
// first_k_dense_replace and moe_layer_freq, Qwen-MoE's decoder_sparse_step and mlp_only_layers, Llama-4's
// interleave_moe_layer_step (or an explicit moe_layers list).
void mark_moe_layers(const ConfigReader& c, ModelSpec& m) {
  const long first_moe = c.whole_or("first_k_dense_replace", 0);
  const long frequency = c.count_or("moe_layer_freq", 1);
  const long step = c.count_or(m.family == "llama4_text" ? "interleave_moe_layer_step" : "decoder_sparse_step", 1);
  const auto dense = c.whole_numbers("mlp_only_layers", m.layers);
  const auto listed = c.whole_numbers("moe_layers", m.layers);
  for (int i = 0; i < m.layers; ++i) {
    bool moe = i >= first_moe && i % frequency == 0 && (i + 1) % step == 0 &&
               std::find(dense.begin(), dense.end(), i) == dense.end();
    if (!listed.empty()) moe = std::find(listed.begin(), listed.end(), i) != listed.end();
    if (moe) m.layer_specs[i].ffn = FfnKind::moe;
  }
}

// The always-on shared expert: Qwen2-MoE's shared_expert_intermediate_size (0: none), DeepSeek's n_shared_experts
// experts of moe_intermediate_size, Llama-4's one expert of the routed experts' width (modelling code, no key).
long shared_expert_width(const ConfigReader& c, const ModelSpec& m, long expert_width) {
  if (c.has("shared_expert_intermediate_size")) return c.whole_or("shared_expert_intermediate_size", 0);
  if (m.family == "llama4_text") return expert_width;
  return c.whole_or("n_shared_experts", 0) * expert_width;
}

void read_moe(const ConfigReader& c, ModelSpec& m) {
  const auto experts = c.find({"num_local_experts", "num_experts", "n_routed_experts"});
  if (!experts || m.family == "nemotron_h") return;  // Nemotron-H's MoE keys serve only 'E' layers
  MoeSpec moe;
  moe.experts = static_cast<int>(c.checked_count("num_local_experts", *experts));
  moe.experts_per_token = static_cast<int>(c.count({"num_experts_per_tok", "experts_per_token"}));
  if (moe.experts_per_token > moe.experts)
    fail("{}: key 'num_experts_per_tok' ({}) exceeds the number of experts ({})", c.source(), moe.experts_per_token,
         moe.experts);
  const auto expert_width = c.find({"moe_intermediate_size"});
  moe.expert_intermediate = expert_width                ? c.checked_count("moe_intermediate_size", *expert_width)
                            : m.family == "llama4_text" ? c.count({"intermediate_size"})
                                                        : m.intermediate;
  moe.shared_intermediate = shared_expert_width(c, m, moe.expert_intermediate);
  moe.shared_gate = m.family == "qwen2_moe";
  moe.router_bias = m.family == "gpt_oss" || c.text("topk_method").value_or("") == "noaux_tc";
  moe.batched_in_hf = m.family == "gpt_oss";
  m.moe = moe;
  mark_moe_layers(c, m);
}

void read_biases(const ConfigReader& c, const FamilyTraits& f, ModelSpec& m) {
  m.qkv_bias = f.qkv_bias_default;
  m.o_bias = f.o_bias_default;
  m.mlp_bias = f.mlp_bias_default;
  for (const auto key : {"attention_bias", "bias", "use_bias", "enable_bias"}) {
    if (auto value = c.flag(key)) {
      m.qkv_bias = *value;
      m.o_bias = *value && m.family != "qwen2";
      if (std::string_view(key) != "attention_bias") m.mlp_bias = *value;
    }
  }
  if (auto value = c.flag("mlp_bias")) m.mlp_bias = *value;
}

void check_shapes(const ModelSpec& m) {
  for (const auto& layer : m.layer_specs) {
    if (layer.mixer != MixerKind::attention) continue;
    const int kv = layer.attention.kv_heads;
    if (m.heads % kv != 0 && m.family != "deci")
      fail("{}: num_attention_heads ({}) must be a multiple of the key-value heads ({})", m.source, m.heads, kv);
    if (kv > m.heads) fail("{}: key-value heads ({}) exceed attention heads ({})", m.source, kv, m.heads);
  }
}

}  // namespace

const std::vector<std::string>& supported_families() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : kFamilies) out.emplace_back(f.model_type);
    for (const auto& alias : kFamilyAliases) out.emplace_back(alias.first);
    return out;
  }();
  return names;
}

namespace {

// The context window of a family whose configs leave it out: the config class's default. transformers'
// Gemma3TextConfig has max_position_embeddings=131072 by default (configuration_gemma3.py), Google's Gemma 3 model
// card a "128K context window" for the 4B, 12B and 27B models. BLOOM (ALiBi: no position table) and Falcon (rotary,
// which HF transformers extends) get none: they ran beyond their 2,048 training tokens in public measurements
// (Splitwise's BLOOM-176B, Wilkins et al.'s Falcon-7B/40B up to 4,096 tokens under HF transformers).
std::optional<long> default_context_tokens(std::string_view family) {
  if (family == "gemma3_text") return 131072;
  return std::nullopt;
}

void read_shape(const ConfigReader& c, ModelSpec& m) {
  m.hidden = c.count({"hidden_size", "n_embd", "n_embed", "d_model"});
  m.layers = static_cast<int>(c.count({"num_hidden_layers", "n_layer", "num_layers"}));
  m.heads = static_cast<int>(c.count({"num_attention_heads", "n_head"}));
  const auto head_dim = c.find({"head_dim"});
  m.head_dim = static_cast<int>(head_dim ? c.checked_count("head_dim", *head_dim) : m.hidden / m.heads);
  if (!head_dim && m.hidden % m.heads != 0)
    fail("{}: hidden_size ({}) is not a multiple of num_attention_heads ({}) and no head_dim is given", c.source(),
         m.hidden, m.heads);
  m.intermediate = read_intermediate(c, m);
  // Gemma3TextConfig's default vocabulary (262208) applies when the text_config omits vocab_size.
  m.vocab = m.family == "gemma3_text" && !c.has("vocab_size") ? 262208 : c.count({"vocab_size"});
  if (auto positions = c.find({"max_position_embeddings", "n_positions"}))
    m.max_positions = c.checked_count("max_position_embeddings", *positions);
  else m.max_positions = default_context_tokens(m.family);
  m.mtp_layers = static_cast<int>(c.whole_or("num_nextn_predict_layers", 0));
}

// Falcon: parallel attention and MLP reading the layer's input (one norm; two, ln_attn and ln_mlp, in the new
// decoder architecture, which is always parallel), rotary or ALiBi.
void read_falcon_block(const ConfigReader& c, ModelSpec& m, std::string_view model_type) {
  if (m.family != "falcon") return;
  const bool new_architecture = falcon_new_architecture(c, model_type);
  m.parallel_attention = new_architecture || c.flag("parallel_attn").value_or(true);
  if (m.parallel_attention) m.norms_per_layer = new_architecture ? 2 : 1;
  if (c.flag("alibi").value_or(false)) m.position = PositionKind::alibi;
}

// GPT-J: one LayerNorm feeds attention and MLP (always parallel); lm_head has a bias. GPT-NeoX: two LayerNorms,
// parallel (use_parallel_residual, default true: x + attn(ln1(x)) + mlp(ln2(x))) or sequential.
void read_gpt_block(const ConfigReader& c, ModelSpec& m) {
  if (m.family == "gptj") {
    m.parallel_attention = true;
    m.lm_head_bias = true;
  }
  if (m.family == "gpt_neox") m.parallel_attention = c.flag("use_parallel_residual").value_or(true);
}

// Partial rotary embedding: GPT-J turns the first rotary_dim dims of each head (null: all of them), GPT-NeoX the
// first int(head_dim x rotary_pct) (GPTNeoXConfig default 0.25; newer files also write partial_rotary_factor).
void read_rotary_dims(const ConfigReader& c, ModelSpec& m) {
  if (m.family == "gptj") m.rotary_dim = static_cast<int>(c.count_or("rotary_dim", m.head_dim));
  if (m.family == "gpt_neox") {
    const double pct = c.find({"rotary_pct", "partial_rotary_factor"}).value_or(0.25);
    if (!(pct > 0 && pct <= 1)) fail("{}: key 'rotary_pct' must be above 0 and at most 1, found {}", c.source(), pct);
    m.rotary_dim = std::max(1, static_cast<int>(m.head_dim * pct));
  }
  if (m.rotary_dim > m.head_dim)
    fail("{}: key 'rotary_dim' ({}) exceeds the head dimension ({})", c.source(), m.rotary_dim, m.head_dim);
}

void read_family_traits(const ConfigReader& c, const FamilyTraits& family, ModelSpec& m) {
  m.family = std::string(family.model_type);
  m.mlp = family.mlp;
  m.norm = family.norm;
  m.position = family.position;
  m.norms_per_layer = family.norms_per_layer;
  m.activation = parse_activation(c, family.default_act);
  m.tied_embeddings = c.flag("tie_word_embeddings").value_or(family.tied_default);
}

// Multimodal wrappers (Llama-4, Gemma-3) keep the language model's keys in a text_config object.
const Json& architecture_keys(const Json& config) {
  if (config.is_object() && config.contains("text_config") && config.at("text_config").is_object())
    return config.at("text_config");
  return config;
}

}  // namespace

ModelSpec model_from_hf_config(const Json& config, const std::string& source, const Json* hf_quant_config) {
  const ConfigReader top(config, source);
  const Json& keys = architecture_keys(config);
  const ConfigReader c(keys, &keys == &config ? source : source + " text_config");
  const auto model_type = top.text("model_type");
  if (!model_type) fail("{}: missing key 'model_type'", source);
  const FamilyTraits* family = find_family(c.text("model_type").value_or(*model_type));
  if (family == nullptr)
    fail("{}: unsupported model_type '{}' (supported: {})", source, *model_type, join_or(supported_families()));

  ModelSpec m;
  m.id = source;
  m.source = source;
  read_family_traits(c, *family, m);
  read_shape(c, m);
  read_falcon_block(c, m, *model_type);
  read_gpt_block(c, m);
  read_rotary_dims(c, m);
  read_biases(c, *family, m);
  read_dtype(c.text("torch_dtype") ? c : top, m);
  read_layers(c, m, *model_type);
  read_moe(c, m);
  read_quantization(top, hf_quant_config, m);
  check_shapes(m);
  return m;
}

std::filesystem::path hf_quant_config_path(const std::filesystem::path& config_path) {
  if (config_path.filename() == "config.json") return config_path.parent_path() / "hf_quant_config.json";
  auto sibling = config_path;
  return sibling.replace_extension(".hf_quant_config.json");
}

ModelSpec read_hf_config(const std::filesystem::path& path) {
  const Json config = read_json_file(path);
  const auto quant_path = hf_quant_config_path(path);
  if (!std::filesystem::exists(quant_path))
    return with_json_errors(path.string(), [&] { return model_from_hf_config(config, path.string()); });
  const Json quant = read_json_file(quant_path);
  return with_json_errors(path.string(), [&] { return model_from_hf_config(config, path.string(), &quant); });
}

}  // namespace llmco2::model
