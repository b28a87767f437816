// measured/tokenpowerbench.cc - TokenPowerBench: vLLM offline batches on one H100 NVL of a 4-GPU node.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "measured/import_common.h"
#include "measured/sources.h"

namespace llmco2::measured {
namespace {

// Alpaca prompts are short instructions; the files keep no prompt lengths (assumed mean, docs/data.md).
constexpr double kAlpacaPromptTokens = 30;
// Above this a node GPU is serving, not idle: idle H100 NVL boards of the node read 60-64 W in these files.
constexpr double kBusyGpuW = 150;
// Runs shorter than this are dominated by the meter's window around them (docs/data.md, nvml_window_mean).
constexpr double kShortRunS = 10;

DatasetRow tokenpowerbench_row(const CsvRowView& v, const std::filesystem::path& file) {
  if (v.empty("gpu0_power_watts"))
    throw std::invalid_argument("per-GPU power not recorded: the 3 idle GPUs in the node's sum cannot be removed");
  // A second GPU drawing serving power (300-370 W against ~61 W idle) ran part of the work; how the run was split
  // over the two (tensor or data parallel) is not recorded.
  if (!v.empty("gpu1_power_watts") && v.number("gpu1_power_watts") > kBusyGpuW)
    throw std::invalid_argument(
        fmt::format("GPU 1 drew {:.0f} W (serving, not idle): the run used two GPUs and its "
                    "parallelism is not recorded",
                    v.number("gpu1_power_watts")));
  DatasetRow row;
  row.source = "tokenpowerbench";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("model"));
  row.dtype = "bf16";
  row.gpu = "h100-nvl";
  row.engine = v.text("engine");
  const double responses = v.number("responses"), duration_s = v.number("duration_s");
  // SingleNode/engines/vllm_engine.py@ec00f52 run_inference: one llm.generate() per batch_size prompts, one after
  // the other, each returning when its longest response ends. With 32 or more responses sampled at temperature 0.7,
  // one reaches max_tokens: every run takes max_tokens steps per batch (7.6-7.7 ms per step for Llama-3.1-8B at 32
  // responses, max_tokens 256 to 2,000).
  row.batch = std::min(v.number("batch_size"), responses);
  row.measures = row.batch > 1 ? Measures::fixed_batch : Measures::isolated;
  row.max_batch = v.number("batch_size");
  row.prompt_tokens = kAlpacaPromptTokens;
  row.gen_tokens = v.number("total_output_tokens") / responses;
  // Only GPU 0 served; its own mean power times the run time is the energy of the responses.
  const double energy_j = v.number("gpu0_power_watts") * duration_s;
  row.energy_j.total = energy_j / responses * row.batch;
  row.latency_s.total = duration_s * row.batch / responses;
  row.run_requests = responses;
  // SingleNode/power_monitor.py: 1-s-averaged NVML samples from 2 s before to 2 s after the run, 10% trimmed.
  row.caveats.insert(row.caveats.end(),
                     {"aggregated_mean", "prompt_tokens_estimated", "idle_gpus_subtracted", "nvml_window_mean"});
  if (duration_s < kShortRunS) row.caveats.push_back("short_run");
  // Only vLLM's engine is read (DeepSpeed's runs its own loop); a lone sequence returns when it ends.
  if (row.batch > 1 && row.engine == "vllm") row.caveats.push_back("batch_ran_to_cap");
  // total_output_tokens is VLLMEngine.estimate_tokens: words x 1.3 of the generated text, not a token count
  // (SingleNode/llm_benchmark.py@ec00f52 L167).
  row.caveats.push_back("gen_tokens_estimated");
  // SingleNode/engines/vllm_engine.py@ec00f52 L90-93: SamplingParams(max_tokens, temperature), no top-p or top-k.
  row.caveats.push_back("temperature_sampling");
  row.notes =
      fmt::format("{} responses in {:.1f} s; latency_total = run time x batch / responses; max_output_tokens {}",
                  responses, duration_s, v.text("max_output_tokens_from_filename"));
  return row;
}

}  // namespace

ImportResult import_tokenpowerbench(const std::filesystem::path& folder) {
  return import_csv_file(folder / "tokenpowerbench_runs_flat.csv", tokenpowerbench_row);
}

}  // namespace llmco2::measured
