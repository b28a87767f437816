// model/hf_config.cc - per-family key names and defaults of Hugging Face configs (transformers' *Config classes).
#include "model/hf_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>

#include "core/error.h"
#include "core/names.h"

namespace llmco2 {
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

constexpr std::array<FamilyTraits, 18> kFamilies{{
    // type         mlp              norm                   position              norms tied   qkv    o      mlp    act
    {"llama",       MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"mistral",     MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"mixtral",     MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"qwen2",       MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, true,  false, false, "silu"},
    {"qwen2_moe",   MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, true,  false, false, "silu"},
    {"qwen3",       MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"qwen3_moe",   MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"gemma",       MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, true,  false, false, false, "gelu_pytorch_tanh"},
    {"gemma2",      MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 4, true,  false, false, false, "gelu_pytorch_tanh"},
    {"gemma3_text", MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 4, true,  false, false, false, "gelu_pytorch_tanh"},
    {"bloom",       MlpKind::plain, NormKind::layer_norm, PositionKind::alibi,  2, true,  true,  true,  true,  "gelu_pytorch_tanh"},
    {"falcon",      MlpKind::plain, NormKind::layer_norm, PositionKind::rotary, 2, true,  false, false, false, "gelu"},
    {"opt",         MlpKind::plain, NormKind::layer_norm, PositionKind::learned, 2, true, true,  true,  true,  "relu"},
    {"phi3",        MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, false, false, false, "silu"},
    {"phi3small",   MlpKind::gated, NormKind::layer_norm, PositionKind::rotary, 2, true,  true,  true,  true,  "gegelu"},
    {"starcoder2",  MlpKind::plain, NormKind::layer_norm, PositionKind::rotary, 2, true,  true,  true,  true,  "gelu_pytorch_tanh"},
    {"gpt_oss",     MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, true,  true,  true,  "silu"},
    {"deci",        MlpKind::gated, NormKind::rms_norm,   PositionKind::rotary, 2, false, false, false, false, "silu"},
}};

const FamilyTraits* find_family(std::string_view model_type) {
  if (model_type == "gemma3") model_type = "gemma3_text";  // text part of the multimodal config
  for (const auto& f : kFamilies)
    if (f.model_type == model_type) return &f;
  return nullptr;
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
    if (!(value >= 1) || value != std::floor(value) || value > 1e9)
      fail("{}: key '{}' must be a positive whole number, found {}", reader_.source(), key, value);
    return static_cast<long>(value);
  }
  long count_or(std::string_view key, long fallback) const {
    const auto value = find({key});
    return value ? checked_count(key, *value) : fallback;
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
  for (const auto key : {"hidden_activation", "hidden_act", "activation_function"})
    if (auto value = c.text(key)) { name = *value; break; }
  if (name == "silu" || name == "swish" || name == "swiglu") return Activation::silu;
  if (name == "relu") return Activation::relu;
  if (name == "gelu" || name == "gelu_new" || name == "gelu_fast") return Activation::gelu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_tanh" || name == "gegelu" || name == "bloom_gelu")
    return Activation::gelu_tanh;
  fail("{}: unsupported activation '{}' (expected silu, relu, gelu or gelu_pytorch_tanh)", c.source(), name);
}

void read_dtype(const ConfigReader& c, ModelSpec& m) {
  const auto name = c.text("torch_dtype");
  if (!name) return;  // keeps bf16, dtype_from_config = false
  if (*name == "float32") m.default_dtype = DType::fp32;
  else if (*name == "float16") m.default_dtype = DType::fp16;
  else if (*name == "bfloat16") m.default_dtype = DType::bf16;
  else fail("{}: key 'torch_dtype' must be float32, float16 or bfloat16, found '{}'", c.source(), *name);
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
  bool flag(std::string_view key) const { return q_.contains(key) && q_.at(key).is_boolean() && q_.at(key).get<bool>(); }
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
  return {w, a, compressed_tensors_dtype(q, kv_scheme, sixteen)};
}

Precision quantised_precision(const QuantReader& q, const std::string& method, const ModelSpec& m) {
  const DType t = m.default_dtype;
  if (method == "awq" || method == "gptq") {
    const DType w = q.bits({"bits", "w_bit"}, method) == 4 ? DType::int4 : DType::int8;
    return {w, t, t};  // weight-only: w4a16 / w8a16
  }
  if (method == "fp8") return {DType::fp8, DType::fp8, t};  // dynamic or static fp8 activations (W8A8)
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
  fail("{}: unsupported quant_method '{}' (supported: awq, gptq, fp8, mxfp4, bitsandbytes, compressed-tensors, "
       "modelopt); pass --dtype to choose a precision", q.where(), method);
}

void read_quantization(const ConfigReader& c, const Json* hf_quant_config, ModelSpec& m) {
  if (hf_quant_config != nullptr) {  // ModelOpt checkpoints: {"producer": ..., "quantization": {...}}
    if (!hf_quant_config->contains("quantization") || !hf_quant_config->at("quantization").is_object())
      fail("{}: hf_quant_config.json has no 'quantization' object", c.source());
    m.default_precision = modelopt_precision(QuantReader(hf_quant_config->at("quantization"),
                                                         c.source() + " (hf_quant_config.json)"), m.default_dtype);
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
  if (m.family == "bloom" || m.family == "falcon") {
    const auto value = c.find({"n_inner", "ffn_hidden_size"});
    return value ? c.checked_count("n_inner", *value) : 4 * m.hidden;  // BloomMLP / FalconMLP: 4 x hidden
  }
  return c.count({"intermediate_size", "ffn_dim", "ff_intermediate_size"});
}

int read_kv_heads(const ConfigReader& c, const ModelSpec& m) {
  if (m.family == "falcon") {
    const bool new_arch = c.flag("new_decoder_architecture").value_or(false);
    if (new_arch) return static_cast<int>(c.count({"num_kv_heads"}));
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

void read_layers(const ConfigReader& c, ModelSpec& m) {
  const int kv_heads = read_kv_heads(c, m);
  const auto windows = read_windows(c, m);
  m.layer_attention.assign(m.layers, LayerAttention{kv_heads, 0, 0});
  for (int i = 0; i < m.layers; ++i) m.layer_attention[i].window_tokens = windows[i];
  if (c.has("num_key_value_heads_per_layer")) {  // DeciLM: variable GQA
    const Json& per_layer = c.at("num_key_value_heads_per_layer");
    if (!per_layer.is_array() || static_cast<int>(per_layer.size()) != m.layers)
      fail("{}: key 'num_key_value_heads_per_layer' must list {} numbers", c.source(), m.layers);
    for (int i = 0; i < m.layers; ++i) {
      if (!per_layer[i].is_number()) fail("{}: key 'num_key_value_heads_per_layer' must hold numbers", c.source());
      m.layer_attention[i].kv_heads = static_cast<int>(c.checked_count("num_key_value_heads_per_layer",
                                                                        per_layer[i].get<double>()));
    }
  }
  if (m.family == "phi3small") {  // block-sparse layers: local blocks + 1 in vert_stride blocks beyond them
    const long every = c.count_or("dense_attention_every_n_layers", 2);
    const long local = c.count_or("blocksparse_num_local_blocks", 16) * c.count_or("blocksparse_block_size", 64);
    const int stride = static_cast<int>(c.count_or("blocksparse_vert_stride", 8));
    for (int i = 0; i < m.layers; ++i)
      if ((i + 1) % every != 0) m.layer_attention[i] = LayerAttention{kv_heads, local, stride};
  }
}

void read_moe(const ConfigReader& c, ModelSpec& m) {
  const auto experts = c.find({"num_local_experts", "num_experts"});
  if (!experts) return;
  MoeSpec moe;
  moe.experts = static_cast<int>(c.checked_count("num_local_experts", *experts));
  moe.experts_per_token = static_cast<int>(c.count({"num_experts_per_tok", "experts_per_token"}));
  if (moe.experts_per_token > moe.experts)
    fail("{}: key 'num_experts_per_tok' ({}) exceeds the number of experts ({})", c.source(), moe.experts_per_token,
         moe.experts);
  const auto expert_width = c.find({"moe_intermediate_size"});
  moe.expert_intermediate = expert_width ? c.checked_count("moe_intermediate_size", *expert_width) : m.intermediate;
  if (auto shared = c.find({"shared_expert_intermediate_size"}))
    moe.shared_intermediate = c.checked_count("shared_expert_intermediate_size", *shared);
  moe.router_bias = m.family == "gpt_oss";
  const long step = c.count_or("decoder_sparse_step", 1);
  const bool dense_layers = c.has("mlp_only_layers") && !c.at("mlp_only_layers").empty();
  if (step != 1 || dense_layers)
    fail("{}: models mixing dense and MoE layers (decoder_sparse_step, mlp_only_layers) are not supported yet",
         c.source());
  m.moe = moe;
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
  if (m.heads % m.layer_attention[0].kv_heads != 0 && m.family != "deci")
    fail("{}: num_attention_heads ({}) must be a multiple of the key-value heads ({})", m.source, m.heads,
         m.layer_attention[0].kv_heads);
  for (const auto& a : m.layer_attention)
    if (a.kv_heads > m.heads)
      fail("{}: key-value heads ({}) exceed attention heads ({})", m.source, a.kv_heads, m.heads);
}

}  // namespace

const std::vector<std::string>& supported_families() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : kFamilies) out.emplace_back(f.model_type);
    out.emplace_back("gemma3");
    return out;
  }();
  return names;
}

ModelSpec model_from_hf_config(const Json& config, const std::string& source, const Json* hf_quant_config) {
  const ConfigReader c(config, source);
  const auto model_type = c.text("model_type");
  if (!model_type) fail("{}: missing key 'model_type'", source);
  const FamilyTraits* family = find_family(*model_type);
  if (family == nullptr)
    fail("{}: unsupported model_type '{}' (supported: {})", source, *model_type, join_or(supported_families()));

  ModelSpec m;
  m.id = source;
  m.source = source;
  m.family = std::string(family->model_type);
  m.hidden = c.count({"hidden_size", "n_embd", "d_model"});
  m.layers = static_cast<int>(c.count({"num_hidden_layers", "n_layer", "num_layers"}));
  m.heads = static_cast<int>(c.count({"num_attention_heads", "n_head"}));
  const auto head_dim = c.find({"head_dim"});
  m.head_dim = static_cast<int>(head_dim ? c.checked_count("head_dim", *head_dim) : m.hidden / m.heads);
  if (!head_dim && m.hidden % m.heads != 0)
    fail("{}: hidden_size ({}) is not a multiple of num_attention_heads ({}) and no head_dim is given", source,
         m.hidden, m.heads);
  m.intermediate = read_intermediate(c, m);
  // Gemma3TextConfig's default vocabulary (262208) applies when the text_config omits vocab_size.
  m.vocab = m.family == "gemma3_text" && !c.has("vocab_size") ? 262208 : c.count({"vocab_size"});
  if (auto positions = c.find({"max_position_embeddings", "n_positions"}))
    m.max_positions = c.checked_count("max_position_embeddings", *positions);
  m.mlp = family->mlp;
  m.norm = family->norm;
  m.position = family->position;
  m.norms_per_layer = family->norms_per_layer;
  m.activation = parse_activation(c, family->default_act);
  m.tied_embeddings = c.flag("tie_word_embeddings").value_or(family->tied_default);
  m.parallel_attention = m.family == "falcon" && c.flag("parallel_attn").value_or(true) &&
                         !c.flag("new_decoder_architecture").value_or(false);
  if (m.parallel_attention) m.norms_per_layer = 1;
  if (m.family == "falcon" && c.flag("alibi").value_or(false)) m.position = PositionKind::alibi;
  read_biases(c, *family, m);
  read_dtype(c, m);
  read_layers(c, m);
  read_moe(c, m);
  read_quantization(c, hf_quant_config, m);
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
  if (!std::filesystem::exists(quant_path)) return model_from_hf_config(config, path.string());
  const Json quant = read_json_file(quant_path);
  return model_from_hf_config(config, path.string(), &quant);
}

}  // namespace llmco2
