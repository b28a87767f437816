// measured/chuyishang.cc - chuyishang/inference-energy: 10-minute vLLM closed-loop load tests.
#include <stdexcept>

#include <fmt/format.h>

#include "measured/import_common.h"
#include "measured/sources.h"

namespace llmco2::measured {
namespace {

// The load generator's default prompt length (mean 256 +- 64 tokens, SOURCE.md); the summaries keep none.
constexpr double kGeneratorPromptTokens = 256;

std::string gpu_of(const std::string& system) {
  if (system.find("A100-80GB") != std::string::npos) return "a100-80gb-sxm";  // a DGX: SXM boards
  if (system.find("RTX 6000 Ada") != std::string::npos) return "rtx-6000-ada";
  if (system.find("RTX 3090") != std::string::npos) return "rtx-3090";
  throw std::invalid_argument(fmt::format("unknown system_gpu '{}'", system));
}

DatasetRow chuyishang_row(const CsvRowView& v, const std::filesystem::path& file) {
  DatasetRow row;
  row.source = "chuyishang";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("model"));
  // The checkpoint's own precision: the runs served `--dtype bfloat16` (SOURCE.md), vLLM's activation type, which
  // leaves a quantised checkpoint quantised (gpt-oss-20b keeps its MXFP4 experts); the other three models are bf16
  // anyway.
  row.dtype = "";
  row.gpu = gpu_of(v.text("system_gpu"));
  row.engine = "vllm";
  row.measures = Measures::steady_state;
  const double requests = v.number("total_requests"), latency_s = v.number("avg_latency_s");
  // Little's law: mean requests in flight = arrival rate x time in system (600 s measurement window).
  row.batch = requests * latency_s / 600.0;
  row.max_batch = 128;
  row.prompt_tokens = kGeneratorPromptTokens;
  row.gen_tokens = v.number("total_output_tokens") / requests;
  row.energy_j.total = v.number("total_energy_J") / requests * row.batch;
  row.latency_s.total = latency_s;
  row.caveats.insert(row.caveats.end(), {"aggregated_mean", "prompt_tokens_estimated", "tail_included"});
  row.notes = "batch = requests x mean latency / 600 s (Little's law); latency_total = mean end-to-end latency";
  return row;
}

}  // namespace

ImportResult import_chuyishang(const std::filesystem::path& folder) {
  return import_csv_file(folder / "results_parsed.csv", chuyishang_row);
}

}  // namespace llmco2::measured
