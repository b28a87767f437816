// measured/tokenpowerbench.cc - TokenPowerBench: vLLM offline batches on one H100 NVL of a 4-GPU node.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "measured/import_common.h"
#include "measured/sources.h"

namespace llmco2 {
namespace {

// Alpaca prompts are short instructions; the files keep no prompt lengths (assumed mean, docs/data.md).
constexpr double kAlpacaPromptTokens = 30;

DatasetRow tokenpowerbench_row(const CsvRowView& v, const std::filesystem::path& file) {
  if (v.empty("gpu0_power_watts"))
    throw std::invalid_argument("per-GPU power not recorded: the 3 idle GPUs in the node's sum cannot be removed");
  DatasetRow row;
  row.source = "tokenpowerbench";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("model"));
  row.dtype = "bf16";
  row.gpu = "h100-nvl";
  row.engine = v.text("engine");
  const double responses = v.number("responses"), duration_s = v.number("duration_s");
  row.measures = Measures::steady_state;
  row.batch = std::min(v.number("batch_size"), responses);
  row.max_batch = v.number("batch_size");
  row.prompt_tokens = kAlpacaPromptTokens;
  row.gen_tokens = v.number("total_output_tokens") / responses;
  // Only GPU 0 served; its own mean power times the run time is the energy of the responses.
  const double energy_j = v.number("gpu0_power_watts") * duration_s;
  row.energy_j.total = energy_j / responses * row.batch;
  row.latency_s.total = duration_s * row.batch / responses;
  row.caveats.insert(row.caveats.end(),
                     {"aggregated_mean", "prompt_tokens_estimated", "idle_gpus_subtracted", "short_run"});
  row.notes = fmt::format("{} responses in {:.1f} s; latency_total = run time x batch / responses", responses,
                          duration_s);
  return row;
}

}  // namespace

ImportResult import_tokenpowerbench(const std::filesystem::path& folder) {
  return import_csv_file(folder / "tokenpowerbench_runs_flat.csv", tokenpowerbench_row);
}

}  // namespace llmco2
