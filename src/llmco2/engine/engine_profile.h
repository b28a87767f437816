// engine/engine_profile.h - a serving engine as physics: its host costs per step and per kernel launch, whether it
// replays CUDA graphs, how it lays out the KV cache and how much memory it reserves (data/engines/engines.json).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/ranges.h"
#include "engine/module.h"
#include "hardware/gpu.h"

namespace llmco2::engine {

// How the requests choose their tokens: greedy, or random sampling with top-p/top-k (the default of chat clients: a
// sort of the vocabulary) or with a temperature alone; with or without repetition/frequency/presence penalties.
struct SamplingMode {
  bool greedy = false;
  bool top_p = true;
  bool penalties = false;
  bool operator==(const SamplingMode&) const = default;
};

struct EngineProfile {
  std::string id;
  bool cuda_graphs = true;         // decode steps replay a captured CUDA graph (one host launch per step)
  double launch_host_s = 2e-5;     // host time per kernel launched eagerly (PyTorch dispatcher + Python)
  double graph_launch_s = 5e-5;    // host time per CUDA-graph replay
  double step_host_s = 5e-4;       // per-step host work serial with the GPU: scheduling, inputs, sampler sync
  double step_host_per_seq_s = 0;  // per running sequence per step (scheduler, sampler, detokeniser)
  double tp_step_host_s = 0;       // per step under tensor parallelism: broadcasting the step to the workers
  // Speculative decoding: the proposer's host work per draft pass (positions, sequence lengths, slot mapping, input
  // copies, attention metadata, argmax launched from Python), overlapping the pass's kernels.
  double draft_pass_host_s = 3e-4;
  // Speculative decoding: host work a verification step adds to the step's serial part (the rejection sampler, the
  // accepted tokens read back, the proposer's inputs and attention metadata).
  double spec_step_host_s = 5e-4;
  // GPU memory traffic of the token sampler per element of the [sequences, vocab] logits of a step (its passes:
  // casts, temperature, softmax, log-softmax, the exponential draw, argmax), on the GPU that samples: random sampling
  // with a temperature, the extra of a top-p/top-k sort and mask, greedy decoding, and the extra of penalties.
  double sampler_random_bytes_per_logit = 8;
  double sampler_top_p_extra_bytes_per_logit = 0;
  double sampler_greedy_bytes_per_logit = 8;
  double sampler_penalty_bytes_per_logit = 0;
  double sampler_bytes_per_logit(const SamplingMode& sampling) const {
    const double choose =
        sampling.greedy ? sampler_greedy_bytes_per_logit
                        : sampler_random_bytes_per_logit + (sampling.top_p ? sampler_top_p_extra_bytes_per_logit : 0.0);
    return choose + (sampling.penalties ? sampler_penalty_bytes_per_logit : 0.0);
  }
  bool paged_kv = true;                // false: the KV cache of a static batch is padded to its longest sequence
  bool continuous_batching = true;     // requests join and leave the running batch at every step
  bool prefill_stalls_decode = false;  // prefills run as steps of their own that pause every running decode (vLLM
                                       // v0 without chunked prefill); false: prefill chunks ride along in decode steps
  bool custom_allreduce = false;       // small all-reduces over NVLink by the engine's own kernel (peers' buffers read
                                       // directly, one or two stages whatever the GPU count), not NCCL's ring
  // Whose measured all-reduce kernel that is ("vllm", "sglang", "trtllm": KernelParams::direct); empty: the
  // generation's curve pooled over the engines.
  std::string allreduce_kernel;
  bool casts_bf16_to_fp16 = true;  // on GPUs without bf16 tensor cores: cast to fp16 (vLLM) or keep bf16 (PyTorch)
  // Routed experts looped over on the host (HF transformers' MoE blocks: per loaded expert a torch.where with its
  // device-to-host sync, gathers of its tokens and routing weights, the expert MLP, a multiply and index_add_):
  // kernel launches per routed graph node per loaded expert. 0: fused MoE kernels, one launch per routed node.
  double expert_loop_launches = 0;
  double memory_utilization = 0.9;  // share of GPU memory given to weights + KV cache (the rest: activations, context)
  // memory_utilization is the KV cache's share of the memory left free after the weights and activations
  // (TensorRT-LLM's KvCacheConfig.free_gpu_memory_fraction), not of the whole GPU (vLLM's gpu_memory_utilization,
  // SGLang's mem_fraction_static).
  bool kv_share_of_free = false;
  long graph_max_tokens = 512;  // steps with more tokens than this run eagerly even with cuda_graphs
  std::string attention_kernel = "flash";
  std::map<std::string, std::pair<double, double>> ranges;  // numeric field -> range a calibration may move it in
  std::map<std::string, std::string> sources;               // field -> citation

  // Host seconds one step needs: launches (graph replay or eager) and serial work.
  double launch_s(double kernel_launches, double step_tokens) const;
  double serial_s(double sequences, int tp_gpus) const {
    return step_host_s + step_host_per_seq_s * sequences + (tp_gpus > 1 ? tp_step_host_s : 0.0);
  }
  bool operator==(const EngineProfile&) const = default;
};

// The engines of data/engines/engines.json by id; unknown ids get "default". A catalog is a value (copies are
// independent); the bundled one reads each engine's object of the file when that engine is first asked for (a request
// names one engine, and parsing all ten with their citations was a seventh of `predict`), and so does a copy of it.
class EngineCatalog {
 public:
  static const EngineCatalog& bundled();                  // data/engines/engines.json
  const EngineProfile& get(const std::string& id) const;  // thread-safe
  EngineProfile& at(const std::string& id);               // for calibration; throws Error when unknown
  bool has(const std::string& id) const { return engines_.count(id) != 0; }
  std::vector<std::string> ids() const;
  void add(EngineProfile profile);
  // Sets fitted host costs of engine `id` (data/sim/params.json): each value is checked now against the physical
  // bound of its field (kEngineBounds), and against the engine's own range when the engine is first read.
  void overlay(const std::string& id, std::vector<std::pair<std::string, double>> fields, const std::string& source);

 private:
  struct Entry;  // a profile, or how to read it on first use
  std::map<std::string, std::shared_ptr<Entry>> engines_;
  friend EngineCatalog lazy_engine_catalog(const std::filesystem::path& path);
};

// A request's precision as `engine` (an id of the bundled catalog) runs it on `gpu`: Gpu::engine_precision with the
// engine's bf16 policy.
EnginePrecision engine_precision(const Gpu& gpu, const Precision& requested, const std::string& engine);

// The physical bound of a numeric engine field (kEngineBounds in engine_profile.cc), e.g. step_host_s in [0, 0.02] s.
// Throws Error for a field without one.
const ParamRange& engine_bound(const std::string& field);

// The numeric fields calibration may fit, by name.
double& engine_field(EngineProfile& profile, const std::string& field);
inline constexpr const char* kEngineFittedFields[] = {"step_host_s", "launch_host_s", "step_host_per_seq_s"};

// Reads and range-checks the catalog: every numeric value finite, inside its stated range, ranges inside the global
// physical bounds. Throws Error naming the file and key of the first bad value.
EngineCatalog engine_catalog_from_json(const Json& json, const std::string& source);
EngineCatalog load_engine_catalog(const std::filesystem::path& path);
// The catalog of `path` with each engine read on first use (json_object_members); load_engine_catalog's reading,
// with its messages, when the file is not a plain object of engines.
EngineCatalog lazy_engine_catalog(const std::filesystem::path& path);
std::filesystem::path default_engine_catalog_path();

}  // namespace llmco2::engine
