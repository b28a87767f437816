// measured/mlperf_amd.cc - MLPerf Inference performance results on AMD Instinct MI300X and MI325X (closed division,
// v4.1 and v5.1): whole systems under AMD's vLLM-on-ROCm harness, Offline (saturated), Server (Poisson at a target
// rate) and Interactive (the same under tighter latency limits). No power was measured: one row per distinct run with
// one node's time per sample (1 / samples per second per node) and, for Server and Interactive, the mean TTFT and
// TPOT in the notes.
#include <cctype>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "measured/import_common.h"
#include "measured/mlperf_benchmarks.h"
#include "measured/sources.h"

namespace llmco2::measured {
namespace {

// How AMD's harness ran each benchmark, read from the submissions' code (mlcommons/inference_results_v4.1@198fc467
// closed/AMD/code/llama2-70b-99.9: VllmFp8/mainVllmFp8_Offline.py and mainVllmFp8_SyncServer.py defaults, the
// test_VllmFp8/*_perf.sh flags; inference_results_v5.1@965182b0 closed/AMD/code/<benchmark>/harness_llm/models/
// <benchmark>/<scenario>_<gpu>.yaml, which the partners' submissions reuse unchanged): TP 1 and 8 engines per node
// everywhere; the most sequences an engine decodes at once (vLLM's max_num_seqs, or where the v5.1 llama2 scheduler
// patch caps the decode batch lower, VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH) and max_num_batched_tokens.
// MangoBoost's LLMBoost engine (closed source) publishes neither: its runs are not matched.
struct AmdRunSettings {
  const char* round;
  const char* benchmark;  // prefix
  const char* scenario;
  const char* gpu;
  long max_num_seqs;
  long max_tokens;
};
constexpr AmdRunSettings kAmdRuns[] = {
    {"v4.1", "llama2-70b", "Offline", "mi300x", 2048, 65536},
    {"v4.1", "llama2-70b", "Server", "mi300x", 1024, 49152},
    {"v5.1", "llama2-70b", "Offline", "mi300x", 1536, 40960},  // max_num_seqs 1792, decode batch cap 1536
    {"v5.1", "llama2-70b", "Offline", "mi325x", 2048, 65536},  // max_num_seqs 2700, decode batch cap 2048
    {"v5.1", "llama2-70b", "Server", "mi300x", 608, 40960},    // max_num_seqs 650, decode batch cap 608
    {"v5.1", "llama2-70b", "Server", "mi325x", 832, 40960},    // max_num_seqs 1024, decode batch cap 832
    {"v5.1", "llama2-70b", "Interactive", "mi300x", 600, 40960},
    {"v5.1", "llama2-70b", "Interactive", "mi325x", 3840, 43008},
    {"v5.1", "mixtral-8x7b", "Offline", "mi300x", 5000, 51200},
    {"v5.1", "mixtral-8x7b", "Offline", "mi325x", 4736, 51200},
    {"v5.1", "mixtral-8x7b", "Server", "mi300x", 4096, 32000},
    {"v5.1", "mixtral-8x7b", "Server", "mi325x", 2560, 32000},
};

const AmdRunSettings* amd_settings_of(const CsvRowView& v, const std::string& gpu) {
  if (v.text("framework").find("Mango") != std::string::npos) return nullptr;
  for (const AmdRunSettings& r : kAmdRuns)
    if (v.text("round") == r.round && v.text("benchmark").starts_with(r.benchmark) &&
        v.text("scenario") == r.scenario && gpu == r.gpu)
      return &r;
  return nullptr;
}

std::string engine_of(const std::string& round, const std::string& scenario, const std::string& gpu) {
  if (round == "v4.1") return "vllm-v0-llm";
  return scenario == "Interactive" && gpu == "mi325x" ? "vllm" : "vllm-v0-multistep";
}

// The accelerator column names one GPU model; a system that mixes MI300X and MI325X nodes is no one GPU's evidence.
std::string amd_gpu_of(const std::string& accelerator) {
  const bool mi300x = accelerator.find("MI300X") != std::string::npos;
  const bool mi325x = accelerator.find("MI325X") != std::string::npos;
  if (mi300x && mi325x) throw std::invalid_argument(fmt::format("mixes GPU models ('{}')", accelerator));
  if (mi325x) return "mi325x";
  if (mi300x) return "mi300x";
  throw std::invalid_argument(fmt::format("unknown accelerator '{}'", accelerator));
}

// The GPUs of the whole system: the count that opens its name ("16xMI300X_...", "1xMI300X_..."), else one node
// ("XE9680_MI300X_192GBx8", "D75T-7U_8xMI325X").
int system_gpus(const std::string& system, int per_node) {
  size_t digits = 0;
  while (digits < system.size() && std::isdigit(static_cast<unsigned char>(system[digits]))) ++digits;
  if (digits == 0 || digits >= system.size() || system[digits] != 'x') return per_node;
  return std::stoi(system.substr(0, digits));
}

// The node catalog's entry for the GPU (data/nodes): the host of a node runs no part of a throughput figure, so one
// platform per GPU model stands for every submitter's.
std::string amd_node_of(const std::string& gpu) {
  return gpu == "mi325x" ? "quanta-d74a-7u-mi325x" : "mi300x-platform";
}

// A run's identity: -99 and -99.9 results of one system are usually one run submitted twice (the same figures).
std::string run_key(const CsvRowView& v, const std::string& benchmark) {
  return fmt::format("{}|{}|{}|{}|{}|{}", v.text("round"), v.text("submitter"), v.text("system"), benchmark,
                     v.text("scenario"), v.text("tokens_per_s"));
}

DatasetRow mlperf_amd_row(const CsvRowView& v, const std::filesystem::path& file,
                          const std::set<std::string>& runs_99_9) {
  if (const std::string name = v.text("benchmark"); name.ends_with("-99") && runs_99_9.count(run_key(v, name + ".9")))
    throw std::invalid_argument("the same run as the system's -99.9 row (counted once)");
  if (v.text("valid") != "True") throw std::invalid_argument("the result is marked invalid");
  const MlperfBenchmark& b = mlperf_benchmark(v.text("benchmark"));
  DatasetRow row;
  row.source = "mlperf-amd";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, b.model);
  if (!row.arch.params_b) throw std::invalid_argument(fmt::format("model '{}' not in the catalog", b.model));
  row.dtype = b.dtype;
  row.gpu = amd_gpu_of(v.text("accelerator"));
  row.gpus = static_cast<int>(v.number("accelerators_per_node"));
  const int gpus = system_gpus(v.text("system"), row.gpus);
  if (gpus % row.gpus != 0)
    throw std::invalid_argument(fmt::format("{} GPUs are not whole nodes of {}", gpus, row.gpus));
  const int nodes = gpus / row.gpus;
  // vLLM's V0 engine driven in process (no API server), prefill and decode in separate steps; v5.1 schedules 7-13
  // steps per call (num_scheduler_steps); its MI325X Interactive runs V1 with chunked prefill ("vllm").
  row.engine = engine_of(v.text("round"), v.text("scenario"), row.gpu);
  row.measures = Measures::steady_state;
  const AmdRunSettings* run = amd_settings_of(v, row.gpu);
  row.tensor_parallel = 1;
  row.data_parallel = row.gpus;
  const double samples_per_s = v.number("samples_per_s") / nodes;  // one node's
  row.gen_tokens = v.number("tokens_per_s") / v.number("samples_per_s");
  row.prompt_tokens = b.prompt_tokens;
  row.batch = 1;
  row.latency_s.total = 1.0 / samples_per_s;
  row.caveats = {"throughput_row", "prompt_tokens_estimated", "energy_missing"};
  if (v.text("framework").find("vllm") == std::string::npos && v.text("framework").find("vLLM") == std::string::npos)
    row.caveats.push_back("engine_assumed");
  if (!run) row.caveats.push_back("run_settings_unknown");
  const std::string scenario = v.text("scenario");
  std::string notes =
      fmt::format("node {}; benchmark {}; scenario {}; round {}; nodes {}; submitter {}", amd_node_of(row.gpu),
                  v.text("benchmark"), scenario, v.text("round"), nodes, v.text("submitter"));
  if (scenario != "Offline")
    notes +=
        fmt::format("; mean_ttft_ms {:.1f}; mean_tpot_ms {:.2f}", v.number("mean_ttft_ms"), v.number("mean_tpot_ms"));
  if (run) {
    row.max_batch = static_cast<double>(run->max_num_seqs) * row.data_parallel;  // all engines, as the format has it
    notes += fmt::format("; max_tokens {}", run->max_tokens);
  }
  row.notes = notes;
  return row;
}

}  // namespace

ImportResult import_mlperf_amd(const std::filesystem::path& folder) {
  const std::filesystem::path file = folder / "mlperf_amd_performance.csv";
  const CsvTable table = read_csv_file(file);
  std::set<std::string> runs_99_9;
  for (const auto& record : table.records) {
    const CsvRowView v(table, record);
    if (v.text("benchmark").ends_with("-99.9")) runs_99_9.insert(run_key(v, v.text("benchmark")));
  }
  ImportResult out;
  convert_records(table, out, [&](const CsvRowView& v) { return mlperf_amd_row(v, file, runs_99_9); });
  return out;
}

}  // namespace llmco2::measured
