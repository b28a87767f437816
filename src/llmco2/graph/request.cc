// graph/request.cc - request validation.
#include "graph/request.h"

#include <algorithm>

#include "core/error.h"
#include "core/names.h"

namespace llmco2::graph {
namespace {

constexpr long kMaxBatch = 65536;
constexpr long kMaxTokens = 1L << 22;  // 4M tokens: beyond any context window of the bundled models
constexpr int kMaxGpus = 64;

void check_range(std::string_view flag, long value, long max) {
  if (value < 1) fail("--{} must be at least 1, found {}", flag, value);
  if (value > max) fail("--{} {} is absurd (at most {})", flag, value, max);
}

}  // namespace

std::string_view phase_name(Phase phase) { return phase == Phase::prefill ? "prefill" : "decode"; }

const std::vector<std::string>& known_engines() {
  static const std::vector<std::string> engines{"vllm",
                                                "vllm-eager",
                                                "vllm-v0",
                                                "vllm-v0-llm",
                                                "vllm-v0-multistep",
                                                "vllm-0.2",
                                                "hf-transformers",
                                                "trt-llm",
                                                "sglang",
                                                "tgi",
                                                "llama.cpp",
                                                "deepspeed",
                                                "hf-transformers-no-kv-cache",
                                                "unknown"};
  return engines;
}

const std::vector<std::string>& offered_engines() {
  static const std::vector<std::string> engines = [] {
    std::vector<std::string> out;
    for (const auto& e : known_engines())
      if (e != "unknown") out.push_back(e);
    return out;
  }();
  return engines;
}

double Request::stage_layer_share(int layers) const {
  if (pipeline_parallel <= 1 || layers <= 0) return 1.0;
  const int largest = (layers + pipeline_parallel - 1) / pipeline_parallel;
  return static_cast<double>(largest) / layers;
}

int kv_heads_per_gpu(int kv_heads, int gpus) { return kv_heads >= gpus ? kv_heads / gpus : 1; }

namespace {

void check_counts(const Request& r) {
  check_range("batch", r.batch, kMaxBatch);
  check_range("prompt", r.prompt_tokens, kMaxTokens);
  check_range("gen", r.gen_tokens, kMaxTokens);
}

void check_context(const Request& r, const ModelSpec& m) {
  if (m.max_positions && r.prompt_tokens + r.gen_tokens > *m.max_positions)
    fail("prompt + gen = {} tokens exceeds {}'s context window of {} tokens", r.prompt_tokens + r.gen_tokens, m.id,
         *m.max_positions);
}

}  // namespace

void validate_counts(const Request& r, const ModelSpec& m) {
  check_counts(r);
  check_context(r, m);
}

void validate_request(const Request& r, const ModelSpec& m) {
  validate_counts(r, m);
  validate_setup(r, m);
}

void validate_setup(const Request& r, const ModelSpec& m) {
  check_range("gpus", r.gpus, kMaxGpus);
  check_range("pp", r.pipeline_parallel, kMaxGpus);
  if (r.total_gpus() > kMaxGpus)
    fail("--gpus {} x --pp {} = {} GPUs is absurd (at most {})", r.gpus, r.pipeline_parallel, r.total_gpus(), kMaxGpus);
  if (r.pipeline_parallel > m.layers)
    fail("--pp {} stages exceed {}'s {} layers (each stage holds at least one)", r.pipeline_parallel, m.id, m.layers);
  const auto& engines = known_engines();
  if (std::find(engines.begin(), engines.end(), r.engine) == engines.end())
    fail("--engine '{}' is unknown (expected {})", r.engine, join_or(offered_engines()));
  if (m.heads % r.gpus != 0)
    fail("{} has {} attention heads, which {} GPUs cannot split evenly (use a divisor of {})", m.id, m.heads, r.gpus,
         m.heads);
  for (const auto& layer : m.layer_specs) {
    if (layer.mixer != MixerKind::attention && layer.mixer != MixerKind::mla) continue;
    const int kv_heads = layer.attention.kv_heads;
    const bool splits = kv_heads % r.gpus == 0;
    const bool replicates = r.gpus % kv_heads == 0;
    if (!splits && !replicates)
      fail("{} has {} key-value heads, which {} GPUs can neither split nor replicate evenly", m.id, kv_heads, r.gpus);
  }
  if (m.mamba && m.mamba->groups % r.gpus != 0 && r.gpus % m.mamba->groups != 0)
    fail("{} has {} Mamba groups, which {} GPUs can neither split nor replicate evenly", m.id, m.mamba->groups, r.gpus);
  if (m.mamba && m.mamba->heads % r.gpus != 0)
    fail("{} has {} Mamba heads, which {} GPUs cannot split evenly", m.id, m.mamba->heads, r.gpus);
  if (r.precision.expert_weights && !m.moe)
    fail("--dtype '{}' sets the experts' precision (moe...), but {} has no experts", r.precision.to_string(), m.id);
  if (r.expert_parallel && !m.moe) fail("--expert-parallel shards routed experts, but {} has no experts", m.id);
  if (r.expert_parallel && r.gpus > 1 && m.moe->experts % r.gpus != 0)
    fail("{}: {} experts cannot be sharded evenly over {} GPUs (use a divisor of {})", m.id, m.moe->experts, r.gpus,
         m.moe->experts);
  if (m.moe && r.gpus > 1 && !r.expert_parallel && m.moe->expert_intermediate % r.gpus != 0)
    fail("{}: expert width {} is not divisible by {} GPUs", m.id, m.moe->expert_intermediate, r.gpus);
}

}  // namespace llmco2::graph
