// measured/bench_results.cc - vllm bench serve and trtllm-bench result files as steady-state dataset rows. The keys
// and their units are those docs/history/benchmark-result-schemas.md cites in each tool's source.
#include "measured/bench_results.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/json_io.h"
#include "dataset/architecture.h"
#include "dataset/dataset_csv.h"
#include "measured/import_common.h"
#include "model/model_catalog.h"

namespace llmco2::measured {
namespace {

constexpr uintmax_t kMaxResultBytes = 256u << 20;  // a vllm result keeps every request's latency: ~20 bytes each

enum class Format { vllm, trtllm };

// A value of `j` at `path` ("performance.total_latency_ms"), which must be a number.
double number_at(const Json& j, std::string_view path) {
  const Json* at = &j;
  for (size_t start = 0; start <= path.size();) {
    const size_t dot = std::min(path.find('.', start), path.size());
    const std::string key(path.substr(start, dot - start));
    if (!at->is_object() || !at->contains(key)) throw std::invalid_argument(fmt::format("no field '{}'", path));
    at = &(*at)[key];
    start = dot + 1;
  }
  if (!at->is_number()) throw std::invalid_argument(fmt::format("field '{}': expected a number", path));
  const double value = at->get<double>();
  if (!std::isfinite(value)) throw std::invalid_argument(fmt::format("field '{}': not a finite number", path));
  return value;
}

double positive_at(const Json& j, std::string_view path) {
  const double value = number_at(j, path);
  if (value <= 0)
    throw std::invalid_argument(fmt::format("field '{}': expected a positive number, got {}", path, value));
  return value;
}

Format format_of(const Json& j, const std::string& format) {
  if (format == "vllm") return Format::vllm;
  if (format == "trtllm") return Format::trtllm;
  if (format != "auto") fail("import-bench --format: expected vllm, trtllm or auto, got '{}'", format);
  if (j.contains("world_info") && j.contains("performance")) return Format::trtllm;
  if (j.contains("num_prompts") && j.contains("duration")) return Format::vllm;
  throw std::invalid_argument(
      "neither a vllm bench serve result (num_prompts, duration) nor a trtllm-bench report (world_info, "
      "performance): give --format");
}

// The energy of the run: only the block TensorRT-LLM's serving client writes (energy.total_energy_j, the server's
// NVML counter over the run) is known; another energy field is refused rather than read with a guessed unit.
std::optional<double> run_energy_j(const Json& j) {
  for (const auto& [key, value] : j.items())
    if (key != "energy" && key.find("energy") != std::string::npos)
      throw std::invalid_argument(fmt::format("field '{}': an energy field this importer does not know", key));
  if (!j.contains("energy")) return std::nullopt;
  return positive_at(j, "energy.total_energy_j");
}

// The catalog model of the file's Hugging Face name, unless the setup names one.
void set_model(DatasetRow& row, const std::string& file_name, const BenchSetup& setup) {
  const std::string name = setup.model.empty() ? file_name : setup.model;
  const ModelEntry* entry = ModelCatalog::bundled().find(name);
  if (entry == nullptr)
    throw std::invalid_argument(fmt::format("model '{}' is not in the catalog (llmco2 models): give --model", name));
  row.model = entry->id;
  row.model_source_name = file_name.empty() ? name : file_name;
  row.model_relation = "same";
  row.arch = architecture_fields(ModelCatalog::bundled().config_of(*entry));
}

// A GPU count the file holds at `field`: a whole number from 1 to 1024 (a cast of anything else is no count).
int count_of(double value, std::string_view field) {
  if (!(value >= 1 && value <= 1024 && value == std::floor(value)))
    throw std::invalid_argument(
        fmt::format("field '{}': expected a whole number from 1 to 1024, got {:g}", field, value));
  return static_cast<int>(value);
}

int gpus_of(const BenchSetup& setup, std::optional<int> in_file, const char* tool) {
  if (setup.gpus > 0) return setup.gpus;
  if (!in_file) throw std::invalid_argument(fmt::format("{} writes no GPU count: give --gpus", tool));
  return *in_file;
}

DatasetRow setup_row(const BenchSetup& setup, const std::string& ref) {
  if (setup.gpu.empty()) fail("import-bench: give --gpu (the result files name no GPU of the catalog)");
  DatasetRow row;
  row.source = setup.source;
  row.source_ref = ref;
  row.gpu = setup.gpu;
  row.dtype = setup.dtype;
  row.measures = Measures::steady_state;
  row.caveats.push_back("aggregated_mean");
  return row;
}

// vllm bench serve: a closed loop (--max-concurrency) or an open one (--request-rate). The mean number of requests
// in flight is the sum of their latencies over the run's duration (Little's law), the row's time per request their
// mean latency; energy only from the energy block of TensorRT-LLM's fork of the client.
DatasetRow vllm_row(const Json& j, const BenchSetup& setup, const std::string& ref) {
  DatasetRow row = setup_row(setup, ref);
  const double completed = positive_at(j, "completed");
  const double duration_s = positive_at(j, "duration");
  double latency_sum_s = 0;
  if (j.contains("latencies") && j["latencies"].is_array() && !j["latencies"].empty()) {
    for (const Json& l : j["latencies"]) {
      if (!l.is_number() || !(l.get<double>() > 0)) throw std::invalid_argument("field 'latencies': expected seconds");
      latency_sum_s += l.get<double>();
    }
  } else {
    latency_sum_s = completed * positive_at(j, "mean_e2el_ms") / 1000;  // older clients: the e2el metric when asked
  }
  const std::string backend = j.value("backend", std::string());
  row.engine = !setup.engine.empty() ? setup.engine : backend == "vllm" ? "vllm" : "";
  if (row.engine.empty())
    throw std::invalid_argument(
        fmt::format("backend '{}' may be any OpenAI-compatible server: give --engine", backend));
  const Json model = j.contains("model_id") ? j["model_id"] : Json();
  set_model(row, model.is_string() ? model.get<std::string>() : "", setup);
  std::optional<int> tp;
  if (j.contains("tp") && j["tp"].is_string()) {  // --metadata tp=N
    const std::string text = j["tp"].get<std::string>();
    const std::optional<double> value = parse_double(text);
    if (!value) throw std::invalid_argument(fmt::format("field 'tp': expected a GPU count, got '{}'", text));
    tp = count_of(*value, "tp");
  }
  row.gpus = row.tensor_parallel = gpus_of(setup, tp, "vllm bench serve");
  row.batch = latency_sum_s / duration_s;
  if (j.contains("max_concurrency") && j["max_concurrency"].is_number())
    row.max_batch = positive_at(j, "max_concurrency");
  row.prompt_tokens = positive_at(j, "total_input_tokens") / completed;
  row.gen_tokens = positive_at(j, "total_output_tokens") / completed;
  row.latency_s.total = latency_sum_s / completed;
  if (const auto energy_j = run_energy_j(j)) row.energy_j.total = *energy_j / completed * row.batch;
  else row.caveats.push_back("energy_missing");
  row.repeats = completed;
  row.notes = fmt::format("vllm bench serve {}; max_concurrency {}; request_rate {}; failed {}",
                          j.value("date", std::string("?")), row.max_batch ? fmt::format("{:g}", *row.max_batch) : "-",
                          j.contains("request_rate") ? j["request_rate"].dump() : "-", j.value("failed", 0));
  return row;
}

// trtllm-bench throughput --report_json: all requests queued at once, at most --concurrency in flight; the report's
// measured mean concurrency (sum of request latencies / total latency) and mean request latency.
DatasetRow trtllm_row(const Json& j, const BenchSetup& setup, const std::string& ref) {
  DatasetRow row = setup_row(setup, ref);
  if (number_at(j, "world_info.pp_size") != 1)
    throw std::invalid_argument(
        "field 'world_info.pp_size': pipeline parallelism is not a configuration llmco2 rows describe");
  row.engine = setup.engine.empty() ? "trt-llm" : setup.engine;
  const Json& engine = j.contains("engine") ? j["engine"] : Json();
  set_model(row, engine.is_object() ? engine.value("model", std::string()) : "", setup);
  row.gpus = gpus_of(setup, count_of(number_at(j, "world_info.world_size"), "world_info.world_size"), "trtllm-bench");
  row.tensor_parallel = count_of(number_at(j, "world_info.tp_size"), "world_info.tp_size");
  row.data_parallel = row.gpus / std::max(1, row.tensor_parallel);
  const double requests = positive_at(j, "request_info.num_requests");
  row.batch = positive_at(j, "request_info.avg_num_concurrent_requests");
  row.max_batch = positive_at(j, "world_info.max_batch_size");
  row.prompt_tokens = positive_at(j, "request_info.avg_input_length");
  row.gen_tokens = positive_at(j, "request_info.avg_output_length");
  row.latency_s.total = positive_at(j, "performance.avg_request_latency_ms") / 1000;
  std::optional<double> energy_j = run_energy_j(j);
  if (j.contains("performance") && j["performance"].is_object() && !energy_j) energy_j = run_energy_j(j["performance"]);
  if (energy_j) row.energy_j.total = *energy_j / requests * row.batch;
  else row.caveats.push_back("energy_missing");
  row.repeats = requests;
  row.notes = fmt::format("trtllm-bench {}; backend {}", engine.is_object() ? engine.value("version", "?") : "?",
                          engine.is_object() ? engine.value("backend", "?") : "?");
  return row;
}

// The results a file holds: one JSON object, or one per line (vllm bench serve --append-result), each with its line.
std::vector<std::pair<long, Json>> results_in(const std::filesystem::path& file) {
  const std::string text = read_input_file(file, kMaxResultBytes, "benchmark result");
  if (auto whole = parse_json_fast(text)) return {{1, std::move(*whole)}};
  std::vector<std::pair<long, Json>> out;
  long line = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++line;
    const std::string_view part(text.data() + start, end - start);
    if (part.find_first_not_of(" \t\r") != std::string_view::npos)
      out.emplace_back(line, parse_json_text(part, fmt::format("{}:{}", file.string(), line)));
    start = end + 1;
  }
  if (out.empty()) fail("{}: no benchmark result in it", file.string());
  return out;
}

}  // namespace

ImportResult import_bench_results(const std::vector<std::filesystem::path>& files, const std::string& format,
                                  const BenchSetup& setup) {
  ImportResult out;
  for (const auto& file : files)
    for (const auto& result : results_in(file)) {
      const long line = result.first;  // named, not a structured binding: clang 14 cannot capture those
      const Json& j = result.second;
      std::string reason;
      try {
        if (!j.is_object()) throw std::invalid_argument("expected a JSON object");
        DatasetRow row = with_json_errors(file.string(), [&] {
          return format_of(j, format) == Format::vllm ? vllm_row(j, setup, source_ref(file, line))
                                                      : trtllm_row(j, setup, source_ref(file, line));
        });
        set_interconnect(row);
        reason = validate_row(row);
        if (reason.empty()) out.rows.push_back(std::move(row));
      } catch (const std::invalid_argument& e) {
        reason = e.what();
      }
      if (!reason.empty()) out.rejects.push_back({file.string(), line, reason});
    }
  return out;
}

}  // namespace llmco2::measured
