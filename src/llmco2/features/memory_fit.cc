// features/memory_fit.cc - weights at their stored dtype split over the GPUs, the engine's reserve, the KV cache
// capped by sliding windows, and the waves of a batch whose cache does not fit at once.
#include "features/memory_fit.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "engine/engine_profile.h"

namespace llmco2::features {
namespace {

constexpr double kGB = 1e9;

// Whether `candidate` is a valid request that runs on `gpu`.
bool runs_on(const ModelSpec& m, const Request& candidate, const Gpu& gpu) {
  try {
    validate_request(candidate, m);
  } catch (const Error&) {
    return false;
  }
  return plan_memory(m, candidate, gpu).runs();
}

// Fewest pipeline stages of the request's GPUs on which it runs (up to 64 GPUs in all), or 0.
int stages_needed(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  for (int stages = r.pipeline_parallel + 1; stages * r.gpus <= 64; ++stages) {
    Request candidate = r;
    candidate.pipeline_parallel = stages;
    if (runs_on(m, candidate, gpu)) return stages;
  }
  return 0;
}

// Smallest GPU count the model's heads allow on which the request runs, or 0 if none up to 64 does.
int gpus_needed(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  for (int n = 1; n <= 64; ++n) {
    Request candidate = r;
    candidate.gpus = n;
    if (runs_on(m, candidate, gpu)) return n;
  }
  return 0;
}

std::string wave_note(const MemoryPlan& p, long batch) {
  return fmt::format(
      "the KV cache holds {} of the {} sequences ({:.2f} GB each, {:.1f} GB free per GPU): the engine "
      "runs {} waves, the last of {}",
      p.sequences_per_wave, batch, p.kv_bytes_per_sequence_per_gpu / kGB, p.kv_capacity_bytes_per_gpu / kGB, p.waves,
      p.last_wave_sequences);
}

void schedule_waves(MemoryPlan& p, long batch) {
  const double per_sequence = p.kv_bytes_per_sequence_per_gpu, sequences = static_cast<double>(batch);
  const double fitting = per_sequence > 0 ? std::floor(p.kv_capacity_bytes_per_gpu / per_sequence) : sequences;
  p.sequences_per_wave = static_cast<long>(std::min(sequences, fitting));
  if (p.sequences_per_wave < 1) return;
  p.waves = (batch + p.sequences_per_wave - 1) / p.sequences_per_wave;
  p.last_wave_sequences = batch - (p.waves - 1) * p.sequences_per_wave;
  if (p.waves > 1) p.note = wave_note(p, batch);
}

}  // namespace

double weight_bytes_per_gpu(const ModelSpec& m, const Request& r) {
  const double all_bytes = m.weight_bytes(r.precision);
  if (r.pipeline_parallel <= 1) return all_bytes / r.gpus;
  // The largest stage: its share of the layers, and the larger end of the model (the first stage holds the embedding
  // table, the last the LM head; with tied embeddings each holds the table). Bytes in proportion to parameters.
  const double total = m.total_params(), head = m.head_params();
  const double end = std::max(m.embedding_params(), m.tied_embeddings ? m.embedding_params() : m.lm_head_params());
  const double share = (r.stage_layer_share(m.layers) * (total - head) + end) / total;
  return all_bytes * share / r.gpus;
}

namespace {

// Activation elements per profiled token row (residual and norm output, FFN gate/up/activation) and the bytes of
// each, the setup's part of activation_peak_bytes_per_gpu.
struct ActivationWidth {
  double elements_per_row = 0, bytes = 2;
  bool profiles = true;  // the engine profiles its token budget (continuous batching)
};

ActivationWidth activation_width(const ModelSpec& m, const Request& r) {
  const double dense = m.layers_with(FfnKind::dense) > 0 ? static_cast<double>(m.intermediate) : 0.0;
  const double ffn = m.moe ? std::max(dense, static_cast<double>(m.moe->expert_intermediate) * m.moe->experts_per_token)
                           : static_cast<double>(m.intermediate);
  // Continuous-batching engines profile a forward pass of their token budget up front; a static-batch engine (HF
  // generate) needs only its own prefill's activations and logits.
  return {2.0 * static_cast<double>(m.hidden) + 3.0 * ffn / r.gpus,
          dtype_bytes(r.precision.stored_activation_dtype()),  // w8a8 GEMM inputs: 16-bit between
          EngineCatalog::bundled().get(r.engine).continuous_batching};
}

double activation_peak_bytes(const ActivationWidth& w, const ModelSpec& m, const Request& r) {
  const double tokens = w.profiles ? kProfiledBatchedTokens
                                   : std::min(kProfiledBatchedTokens, static_cast<double>(r.batch * r.prompt_tokens));
  const double sequences = w.profiles ? kProfiledSequences : static_cast<double>(r.batch);
  const double rows = tokens * w.elements_per_row * w.bytes;
  const double logits = sequences * static_cast<double>(m.vocab) * 4.0;
  return rows + logits;
}

}  // namespace

double activation_peak_bytes_per_gpu(const ModelSpec& m, const Request& r) {
  return activation_peak_bytes(activation_width(m, r), m, r);
}

namespace {

// Tokens one attention layer keeps cached: all of them, or at most the window (sliding) or the chunk (chunked local
// attention: vLLM frees the blocks of finished chunks).
double cached_tokens(const LayerAttention& a, double context) {
  if (a.window_tokens > 0 && a.vertical_stride == 0) return std::min(context, static_cast<double>(a.window_tokens));
  if (a.chunk_tokens > 0) return std::min(context, static_cast<double>(a.chunk_tokens));
  return context;
}

}  // namespace

double kv_bytes_per_sequence_per_gpu(const ModelSpec& m, const Request& r) {
  const double context = static_cast<double>(r.prompt_tokens + r.gen_tokens);
  const double kv_bytes = dtype_bytes(r.precision.kv_cache);
  double tokens_heads = 0;  // sum over attention layers of cached tokens x KV heads per GPU
  double latent_bytes = 0;  // MLA: one latent of kv_lora_rank + rope dims per token, held whole by every GPU
  for (const auto& layer : m.layer_specs) {
    const double cached = cached_tokens(layer.attention, context);
    if (layer.mixer == MixerKind::attention)
      tokens_heads += cached * kv_heads_per_gpu(layer.attention.kv_heads, r.gpus);
    if (layer.mixer == MixerKind::mla)
      latent_bytes += cached * static_cast<double>(m.mla->cached_elements()) * kv_bytes;
  }
  // A pipeline stage caches its own layers only (the largest stage's share).
  return (2.0 * tokens_heads * m.head_dim * kv_bytes + latent_bytes) * r.stage_layer_share(m.layers) +
         state_bytes_per_sequence_per_gpu(m, r);
}

double state_bytes_per_sequence_per_gpu(const ModelSpec& m, const Request& r) {
  if (!m.mamba) return 0.0;
  const MambaSpec& mamba = *m.mamba;
  const double conv = static_cast<double>(mamba.conv_kernel - 1) * static_cast<double>(mamba.conv_channels());
  // The conv window in the model's 16-bit type and the SSM state in its own, both split with the heads.
  const double bytes =
      conv * dtype_bytes(r.precision.unquantised_dtype()) + mamba.state_elements() * dtype_bytes(mamba.ssm_state_dtype);
  return m.layers_with(MixerKind::mamba) * bytes / r.gpus * r.stage_layer_share(m.layers);
}

namespace {

// The plan from what the request occupies per GPU: weights, the engine's share of memory, the activation peak and
// one sequence's KV cache.
MemoryPlan plan_from(const Gpu& gpu, const Request& r, double weight_bytes_per_gpu, EngineShare share,
                     double activation_bytes, double kv_bytes_per_sequence) {
  MemoryPlan p;
  p.memory_bytes_per_gpu = gpu.memory_bytes;
  p.weight_bytes_per_gpu = weight_bytes_per_gpu;
  // The engine's share of memory for weights + KV (vLLM 0.9; HF allocates as it goes: 1.0), then activations; or
  // (TensorRT-LLM) the KV cache's share of what the weights and activations leave free.
  const double free_bytes = std::max(0.0, gpu.memory_bytes - weight_bytes_per_gpu - activation_bytes);
  p.reserve_bytes_per_gpu = share.of_free ? activation_bytes + (1.0 - share.share) * free_bytes
                                          : (1.0 - share.share) * gpu.memory_bytes + activation_bytes;
  p.kv_bytes_per_sequence_per_gpu = kv_bytes_per_sequence;
  const double left = gpu.memory_bytes - p.weight_bytes_per_gpu - p.reserve_bytes_per_gpu;
  p.weights_fit = left > 0;
  p.kv_capacity_bytes_per_gpu = std::max(0.0, left);
  if (!p.weights_fit) {
    p.note = fmt::format("{:.1f} GB of weights + {:.1f} GB of engine reserve per GPU exceed {:.0f} GB",
                         p.weight_bytes_per_gpu / kGB, p.reserve_bytes_per_gpu / kGB, gpu.memory_bytes / kGB);
    return p;
  }
  schedule_waves(p, r.batch);
  if (p.sequences_per_wave < 1)
    p.note = fmt::format(
        "one sequence of {} tokens needs {:.1f} GB of KV cache per GPU, but weights and reserve "
        "leave {:.1f} GB",
        r.prompt_tokens + r.gen_tokens, p.kv_bytes_per_sequence_per_gpu / kGB, p.kv_capacity_bytes_per_gpu / kGB);
  return p;
}

EngineShare usable_share(const Request& r) {
  const EngineProfile& engine = EngineCatalog::bundled().get(r.engine);
  return {engine.memory_utilization, engine.kv_share_of_free};
}

}  // namespace

MemoryPlan plan_memory(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  return plan_from(gpu, r, weight_bytes_per_gpu(m, r), usable_share(r), activation_peak_bytes_per_gpu(m, r),
                   kv_bytes_per_sequence_per_gpu(m, r));
}

MemoryPlanner::MemoryPlanner(const ModelSpec& model, const Request& setup, const Gpu& gpu)
    : model_(model),
      gpu_(gpu),
      weight_bytes_per_gpu_(weight_bytes_per_gpu(model, setup)),
      stage_share_(setup.stage_layer_share(model.layers)),
      share_(usable_share(setup)),
      kv_bytes_(dtype_bytes(setup.precision.kv_cache)),
      state_bytes_(state_bytes_per_sequence_per_gpu(model, setup)) {
  const ActivationWidth width = activation_width(model, setup);
  activation_elements_per_row_ = width.elements_per_row;
  activation_bytes_ = width.bytes;
  profiles_ = width.profiles;
  for (const auto& layer : model.layer_specs) {
    if (layer.mixer != MixerKind::attention && layer.mixer != MixerKind::mla) continue;
    auto same = [&](const CacheGroup& g) {
      return g.attention == layer.attention && g.mla == (layer.mixer == MixerKind::mla);
    };
    auto it = std::find_if(groups_.begin(), groups_.end(), same);
    if (it == groups_.end())
      it = groups_.insert(groups_.end(), {layer.attention, layer.mixer == MixerKind::mla,
                                          kv_heads_per_gpu(layer.attention.kv_heads, setup.gpus), 0});
    ++it->layers;
  }
}

// Each layer's term is an integer (tokens x heads) or an integer times the KV dtype's bytes (a short binary
// fraction), far below 2^53: the grouped sums equal kv_bytes_per_sequence_per_gpu's layer-by-layer sums exactly.
double MemoryPlanner::kv_bytes_per_sequence(const Request& r) const {
  const double context = static_cast<double>(r.prompt_tokens + r.gen_tokens);
  double tokens_heads = 0, latent_bytes = 0;
  for (const CacheGroup& g : groups_) {
    const double cached = cached_tokens(g.attention, context);
    if (g.mla) latent_bytes += g.layers * (cached * static_cast<double>(model_.mla->cached_elements()) * kv_bytes_);
    else tokens_heads += g.layers * (cached * g.kv_heads_per_gpu);
  }
  return (2.0 * tokens_heads * model_.head_dim * kv_bytes_ + latent_bytes) * stage_share_ + state_bytes_;
}

MemoryPlan MemoryPlanner::plan(const Request& r) const {
  const ActivationWidth width{activation_elements_per_row_, activation_bytes_, profiles_};
  return plan_from(gpu_, r, weight_bytes_per_gpu_, share_, activation_peak_bytes(width, model_, r),
                   kv_bytes_per_sequence(r));
}

MemoryFit memory_fit(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  const MemoryPlan plan = plan_memory(m, r, gpu);
  MemoryFit fit;
  fit.weight_bytes_per_gpu = plan.weight_bytes_per_gpu;
  fit.kv_cache_bytes_per_gpu = plan.kv_bytes_per_sequence_per_gpu * static_cast<double>(r.batch);
  fit.usable_bytes_per_gpu = plan.memory_bytes_per_gpu - plan.reserve_bytes_per_gpu;
  return fit;
}

void check_memory_fit(const ModelSpec& m, const Request& r, const Gpu& gpu) {
  const MemoryPlan plan = plan_memory(m, r, gpu);
  if (plan.runs()) return;
  const int needed = gpus_needed(m, r, gpu), stages = stages_needed(m, r, gpu);
  std::string advice = needed > 0 ? fmt::format("it needs --gpus {} or more", needed)
                                  : std::string(
                                        "no GPU count up to 64 holds it; lower the context or the "
                                        "precision (--dtype)");
  if (stages > 0) advice += fmt::format(" (or --pp {} stages of --gpus {})", stages, r.gpus);
  const std::string stages_words = r.pipeline_parallel > 1 ? fmt::format(" x {} stages", r.pipeline_parallel) : "";
  fail("{} does not fit {}{} x {} ({}): {}; {}", m.id, r.gpus, stages_words, gpu.id, r.precision.to_string(), plan.note,
       advice);
}

void check_runs(const ModelSpec& model, const Request& request, const Gpu& gpu) {
  validate_request(request, model);
  check_memory_fit(model, request, gpu);
}

}  // namespace llmco2::features
