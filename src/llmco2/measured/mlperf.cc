// measured/mlperf.cc - MLPerf Inference power results (closed division, v3.1-v4.1): whole 8-GPU nodes at the wall
// under TensorRT-LLM, Offline (saturated) and Server (Poisson at a target rate). One row per distinct run: J per
// sample at the wall and the node's time per sample (1 / samples per second).
#include <stdexcept>

#include <fmt/format.h>

#include "hardware/gpu_catalog.h"
#include "measured/import_common.h"
#include "measured/mlperf_benchmarks.h"
#include "measured/sources.h"

namespace llmco2::measured {
namespace {

// How the submitter ran each result (data/mlperf/benchmarks.json "runs", read from its configs): engines' tensor
// parallelism, the engine's max batch, the GPUs' power limit and the engine's max tokens per step (0: not found;
// the serving default then applies).
struct RunSettings {
  const char* round;
  const char* system;     // a part of system_name
  const char* benchmark;  // prefix
  const char* scenario;
  int tensor_parallel;
  long max_batch;
  double power_cap_w;
  long max_tokens;
};
constexpr RunSettings kRuns[] = {
    {"v4.1", "H200", "llama2-70b", "Offline", 1, 806, 500, 4096},
    {"v4.1", "H200", "llama2-70b", "Server", 1, 896, 500, 4096},
    {"v4.1", "H200", "mixtral-8x7b", "Offline", 1, 3072, 500, 16384},
    {"v4.1", "H200", "mixtral-8x7b", "Server", 1, 1200, 500, 8192},
    {"v4.1", "H200", "gptj", "Offline", 1, 396, 350, 4096},
    {"v4.1", "H200", "gptj", "Server", 1, 396, 350, 4096},
    {"v4.0", "DGX H100", "llama2-70b", "Offline", 2, 896, 450, 0},
    {"v4.0", "DGX H100", "llama2-70b", "Server", 2, 1024, 450, 0},
    {"v4.0", "XE9680", "llama2-70b", "Offline", 2, 896, 450, 0},
    {"v4.0", "XE9680", "llama2-70b", "Server", 2, 1024, 450, 0},
    {"v4.0", "DGX H100", "gptj", "Offline", 1, 192, 350, 0},
    {"v4.0", "DGX H100", "gptj", "Server", 1, 256, 350, 0},
    {"v4.0", "XE9680", "gptj", "Offline", 1, 192, 350, 0},
    {"v4.0", "XE9680", "gptj", "Server", 1, 256, 350, 0},
    {"v3.1", "DGX H100", "gptj", "Server", 1, 32, 250, 0},  // v3.1 Offline configs were not found (benchmarks.json)
    {"v3.1", "G482-Z54", "gptj", "Server", 1, 32, 200, 0},  // NVIDIA's H100_PCIe_80GBx8_MaxQ class
};

const RunSettings* settings_of(const CsvRowView& v) {
  for (const RunSettings& r : kRuns)
    if (v.text("results_round") == r.round && v.text("system_name").find(r.system) != std::string::npos &&
        v.text("benchmark").starts_with(r.benchmark) && v.text("scenario") == r.scenario)
      return &r;
  return nullptr;
}

std::string gpu_of(const std::string& accelerator) {
  if (accelerator == "NVIDIA H100-PCIe-80GB") return "h100-pcie";
  if (accelerator == "NVIDIA H100-SXM-80GB") return "h100-sxm";
  if (accelerator == "NVIDIA H200-SXM-141GB") return "h200";
  throw std::invalid_argument(fmt::format("unknown accelerator '{}'", accelerator));
}

// The node catalog's entry for the system (data/nodes).
std::string node_of(const std::string& system) {
  if (system.find("G482-Z54") != std::string::npos) return "g482-z54-h100-pcie";
  if (system.find("XE9680") != std::string::npos) return "hgx-h100-xe9680";
  if (system.find("DGX H100") != std::string::npos) return "dgx-h100";
  if (system.find("H200") != std::string::npos) return "dgx-h200";
  throw std::invalid_argument(fmt::format("no node in data/nodes for system '{}'", system));
}

// The tensor parallelism of each engine: the smallest power of two whose share of the FP8 weights (1 byte per
// parameter) fills at most 60% of a GPU's memory, leaving the rest for the KV cache of large batches.
constexpr double kWeightShareOfMemory = 0.6;
int tensor_parallel_for(double params_b, const std::string& gpu_id) {
  const double memory_bytes = GpuCatalog::bundled().resolve(gpu_id).memory_bytes;
  int tp = 1;
  while (params_b * 1e9 / tp > kWeightShareOfMemory * memory_bytes && tp < 8) tp *= 2;
  return tp;
}

DatasetRow mlperf_row(const CsvRowView& v, const std::filesystem::path& file) {
  if (!v.empty("same_run_as"))
    throw std::invalid_argument(fmt::format("same measurement as the {} row (counted once)", v.text("same_run_as")));
  const MlperfBenchmark& b = mlperf_benchmark(v.text("benchmark"));
  DatasetRow row;
  row.source = "mlperf-power";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, b.model);
  row.dtype = b.dtype;
  row.gpu = gpu_of(v.text("accelerator_name"));
  row.gpus = static_cast<int>(v.number("accelerators_per_node"));
  row.engine = "trt-llm";
  row.measures = Measures::steady_state;
  if (!row.arch.params_b) throw std::invalid_argument(fmt::format("model '{}' not in the catalog", b.model));
  const RunSettings* run = settings_of(v);
  row.tensor_parallel = run ? run->tensor_parallel : tensor_parallel_for(*row.arch.params_b, row.gpu);
  row.data_parallel = row.gpus / row.tensor_parallel;
  const double node_w = v.number("avg_system_power_w");
  row.gen_tokens = v.empty("output_tokens_per_sample_observed") ? b.gen_tokens_reference
                                                                : v.number("output_tokens_per_sample_observed");
  // Rows that give tokens/s alone: samples/s = tokens/s / tokens per sample (energy per token is exact either way).
  const double samples_per_s =
      !v.empty("samples_per_s") ? v.number("samples_per_s") : v.number("throughput_value") / row.gen_tokens;
  row.prompt_tokens = b.prompt_tokens;
  row.batch = 1;
  row.energy_j.total = node_w / samples_per_s;
  row.latency_s.total = 1.0 / samples_per_s;
  row.caveats = {"node_wall_power", "throughput_row", "prompt_tokens_estimated"};
  if (v.empty("output_tokens_per_sample_observed")) row.caveats.push_back("gen_tokens_inferred");
  if (!run) row.caveats.push_back("run_settings_unknown");
  std::string notes =
      fmt::format("node {}; benchmark {}; scenario {}; round {}; node_w {:.1f}", node_of(v.text("system_name")),
                  v.text("benchmark"), v.text("scenario"), v.text("results_round"), node_w);
  const double cap_w = !v.empty("gpu_power_cap_w") ? v.number("gpu_power_cap_w") : run ? run->power_cap_w : 0;
  if (cap_w > 0) {
    row.caveats.push_back("power_capped");
    notes += fmt::format("; power_cap_w {}", cap_w);
  }
  if (b.beams > 1) notes += fmt::format("; beams {}", b.beams);
  if (run) {
    row.max_batch = static_cast<double>(run->max_batch) * row.data_parallel;  // all engines, as the format has it
    if (run->max_tokens > 0) notes += fmt::format("; max_tokens {}", run->max_tokens);
  }
  row.notes = notes;
  return row;
}

}  // namespace

// What each benchmark runs (../shared/data/measured/mlperf_power/SOURCE.md sections 5-6 and data/mlperf/README.md):
// the model, its mean prompt length, the reference mean output length, and the precision the harnesses build (FP8
// weights and activations, FP8 KV cache: NVIDIA's for Hopper, SOURCE.md notes; AMD's for CDNA 3,
// mlperf_amd_performance/SOURCE.md).
// No source states a mean prompt length (data/mlperf/benchmarks.json: the datasets must be tokenised to know it);
// llama2-70b's prompts are below 1,024 tokens and mixtral's OpenOrca part likewise: half that bound is the estimate
// (caveat prompt_tokens_estimated; docs/calibration.md gives the sensitivity). gptj's CNN/DailyMail prompts are cut
// at 1,919 tokens (benchmarks.json prompt_tokens_max): the same rule gives 960, near the 781-word mean article of
// CNN/DailyMail (See et al. 2017, table 1) in GPT-2 BPE tokens plus the instruction.
const MlperfBenchmark& mlperf_benchmark(const std::string& name) {
  constexpr double kPromptEstimate = 512;
  constexpr double kGptjPromptEstimate = 960;
  static constexpr MlperfBenchmark kBenchmarks[] = {
      {"gptj", "EleutherAI/gpt-j-6b", kGptjPromptEstimate, 69, "wfp8afp8kvfp8", 4},
      {"llama2-70b", "meta-llama/Llama-2-70b-chat-hf", kPromptEstimate, 294.45, "wfp8afp8kvfp8", 1},
      {"mixtral-8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1", kPromptEstimate, 144.84, "wfp8afp8kvfp8", 1},
  };
  for (const MlperfBenchmark& b : kBenchmarks)
    if (name.starts_with(b.prefix)) return b;
  throw std::invalid_argument(fmt::format("unknown benchmark '{}'", name));
}

ImportResult import_mlperf_power(const std::filesystem::path& folder) {
  return import_csv_file(folder / "mlperf_llm_power.csv", mlperf_row);
}

}  // namespace llmco2::measured
