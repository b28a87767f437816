// measured/splitwise.cc - SplitwiseSim's profiling database: fixed batches of Llama-2-70B / BLOOM-176B under TP.
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "hardware/gpu_catalog.h"
#include "measured/import_common.h"
#include "measured/sources.h"

namespace llmco2::measured {
namespace {

// The power columns are normalised; we read them as fractions of the board TDP from the GPU catalog
// (SOURCE.md: peak ~1.0). Only a100-80gb-sxm rows have power.
double tdp_w(const std::string& gpu_id) {
  for (const Gpu& gpu : GpuCatalog::bundled().gpus())
    if (gpu.id == gpu_id) return gpu.tdp_w;
  throw std::invalid_argument(fmt::format("GPU '{}' is not in the catalog", gpu_id));
}

DatasetRow splitwise_row(const CsvRowView& v, const std::filesystem::path& file) {
  DatasetRow row;
  row.source = "splitwise";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("model"));
  row.dtype = "fp16";
  const std::string& hardware = v.text("hardware");
  if (hardware == "a100-80gb") row.gpu = "a100-80gb-sxm";
  else if (hardware == "h100-80gb") row.gpu = "h100-sxm";
  else if (hardware == "h100-80gb-pcap") row.gpu = "h100-sxm", row.caveats.push_back("power_capped");
  else throw std::invalid_argument(fmt::format("unknown hardware '{}'", hardware));
  row.gpus = row.tensor_parallel = static_cast<int>(v.number("tensor_parallel"));
  // The repository does not name its engine. The paper's prototype is built on vLLM (arXiv 2311.18677, Nov 2023),
  // which replayed no CUDA graphs before v0.2.2 (PR #1926, Nov 2023) and all-reduced with NCCL before v0.2.7
  // (custom all-reduce, PR #2192): engine class vllm-0.2. The data agree: at TP 8 a 70B decode step
  // is no faster than at TP 4 (~30 ms on H100, 3-6 ms of weight streaming), the floor of eager kernel launches.
  row.engine = "vllm-0.2";
  row.caveats.push_back("engine_assumed");
  row.batch = v.number("batch_size");
  row.measures = row.batch > 1 ? Measures::fixed_batch : Measures::isolated;
  row.prompt_tokens = v.number("prompt_size");
  const double requested = v.number("token_size");
  const double prefill_s = v.number("prompt_time") / 1000, total_s = v.number("e2e_time") / 1000;
  const double step_s = v.number("token_time") / 1000;
  const double steps = (total_s - prefill_s) / step_s;
  row.gen_tokens = requested;
  if (steps + 1 < 0.95 * requested) {  // generation stopped early: count the steps that ran
    row.gen_tokens = std::round(steps) + 1;
    row.caveats.push_back("gen_tokens_inferred");
  }
  row.latency_s = {prefill_s, total_s - prefill_s, total_s};
  const double power = v.number("average_power");
  if (power > 0) {
    row.energy_j.total = power * tdp_w(row.gpu) * row.gpus * total_s;
    row.caveats.push_back("power_normalised");
  } else {
    row.caveats.push_back("energy_missing");
  }
  row.repeats = 1;
  row.notes = "engine assumed: vLLM 0.2 of 2023 (no CUDA graphs, NCCL all-reduce), the paper's prototype";
  return row;
}

}  // namespace

ImportResult import_splitwise(const std::filesystem::path& folder) {
  return import_csv_file(folder / "perf_model.csv", splitwise_row);
}

}  // namespace llmco2::measured
