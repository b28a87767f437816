// dataset/record.h - one row of ground truth: a configuration and what was measured (or simulated) for it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dataset/module.h"

namespace llmco2::dataset {

// What a row's energy and latency describe.
enum class Measures {
  isolated,      // one batch run alone, from its first prefill to its last token
  fixed_batch,   // a batch whose requests start together (same as isolated when batch = 1)
  steady_state,  // continuous batching under load: `batch` is the mean running batch, values per `batch` requests
};
std::string_view measures_name(Measures measures);
std::optional<Measures> parse_measures(std::string_view text);

// How the GPUs of a row share the model.
enum class Parallelism {
  tensor,       // tensor parallelism over all `gpus` (times data_parallel replicas)
  layer_split,  // layers placed on GPUs one after another (accelerate device_map="auto"): one GPU busy at a time
};
std::string_view parallelism_name(Parallelism parallelism);
std::optional<Parallelism> parse_parallelism(std::string_view text);

// The caveats a row can carry (docs/data.md explains each). Unknown flags are rejected on reading.
const std::vector<std::string>& known_caveats();

// The architecture fields of a row's model, as the source gives them or from the model catalog.
struct ArchitectureFields {
  std::optional<double> params_b, active_params_b;
  std::optional<long> layers, hidden, heads, kv_heads, intermediate, experts, experts_per_token;
};

// Energies are in J summed over all GPUs of the row; they cover the `batch` requests of the row.
struct PhaseValues {
  std::optional<double> prefill, decode, total;
  // The total, or prefill + decode when only the phases were measured.
  std::optional<double> total_or_sum() const {
    if (total) return total;
    if (prefill && decode) return *prefill + *decode;
    return std::nullopt;
  }
};

struct DatasetRow {
  std::string source;             // dataset source id, e.g. "mlenergy-v2", "sim", "nvml"
  std::string source_ref;         // where in the source: "file:line"
  std::string model;              // model catalog id when known, else the source's own name
  std::string model_source_name;  // the name the source uses
  std::string model_relation;     // same | fine-tune | same-architecture | not-in-catalog
  ArchitectureFields arch;
  std::string dtype;         // precision spec, e.g. bf16, w8a16kv16
  std::string gpu;           // GPU catalog id when known, else the source's name
  int gpus = 1;              // all GPUs of the row (tensor x pipeline x data parallel, or the layer split)
  std::string interconnect;  // link between the GPUs ("" on one GPU)
  Parallelism parallelism = Parallelism::tensor;
  int tensor_parallel = 1;
  int data_parallel = 1;
  int pipeline_parallel = 1;  // consecutive stages of the layers, each on tensor_parallel GPUs (vLLM's virtual engines)
  std::string engine;         // vllm, hf-transformers, ... or "unknown"
  double batch = 1;           // requests per batch; mean running batch for steady_state
  std::optional<double> max_batch;     // the engine's concurrency cap (steady_state)
  std::optional<double> run_requests;  // requests of the whole measured run the row's meter window covered, when
                                       // the row reports `batch` of them (the meter model needs the run's length)
  double prompt_tokens = 0;            // per request (mean when aggregated)
  double gen_tokens = 0;               // generated per request (mean when aggregated)
  // Coefficient of variation (std / mean) of the generated tokens per request, when they vary (steady_state): the
  // running batch then holds long requests more often than short ones (docs/simulator.md, steady state).
  std::optional<double> gen_tokens_cv;
  Measures measures = Measures::isolated;
  PhaseValues energy_j;
  PhaseValues latency_s;
  std::optional<double> repeats;         // runs (or requests) averaged into the row
  std::optional<double> energy_spread;   // relative standard deviation of the energy over repeats
  std::optional<double> latency_spread;  // relative standard deviation of the latency over repeats
  std::vector<std::string> caveats;
  std::string notes;

  bool has_caveat(std::string_view caveat) const;
  // Why the row's totals cannot label the GPU work it describes (a batch timed to its longest response, a whole
  // node at the wall), or "" when they can: calibration and training use only rows where this is "".
  std::string why_not_a_label() const;
  // The value of a "key value" entry of `notes` ("task gpqa; node dgx-h100; ..."), up to the next ';'; "" if absent.
  std::string note(std::string_view key) const;
};

}  // namespace llmco2::dataset
