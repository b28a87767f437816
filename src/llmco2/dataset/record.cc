// dataset/record.cc - names of the enums of a dataset row and the caveat vocabulary.
#include "dataset/record.h"

#include <algorithm>

#include <fmt/format.h>

namespace llmco2::dataset {

std::string_view measures_name(Measures m) {
  switch (m) {
    case Measures::isolated:
      return "isolated";
    case Measures::fixed_batch:
      return "fixed_batch";
    case Measures::steady_state:
      return "steady_state";
  }
  return "?";
}

std::optional<Measures> parse_measures(std::string_view text) {
  for (auto m : {Measures::isolated, Measures::fixed_batch, Measures::steady_state})
    if (measures_name(m) == text) return m;
  return std::nullopt;
}

std::string_view parallelism_name(Parallelism p) { return p == Parallelism::tensor ? "tensor" : "layer_split"; }

std::optional<Parallelism> parse_parallelism(std::string_view text) {
  for (auto p : {Parallelism::tensor, Parallelism::layer_split})
    if (parallelism_name(p) == text) return p;
  return std::nullopt;
}

const std::vector<std::string>& known_caveats() {
  static const std::vector<std::string> caveats = {
      "no_kv_cache",              // decode recomputes the whole sequence at every step
      "aggregated_mean",          // a mean over many requests of different lengths
      "prompt_tokens_estimated",  // prompt length not recorded by the source: estimated (see notes)
      "gen_tokens_estimated",     // generated tokens not counted by the source but estimated from the text (notes)
      "gen_tokens_is_limit",      // gen is the max_new_tokens setting; the real count is 0.9-1.0 of it
      "gen_tokens_inferred",      // gen inferred from the timings (generation stopped early)
      "power_normalised",         // energy from normalised power x an assumed reference power
      "power_capped",             // GPUs ran under a power cap
      "idle_gpus_subtracted",     // idle GPUs of the node were in the source's sum; their power was removed
      "gpu_variant_assumed",      // the source names the GPU family only; the variant is our assumption
      "dtype_emulated",           // the dtype has no tensor-core support on this GPU (bf16 on V100)
      "short_run",                // runs of a few seconds: NVML power averaging error is large
      "nvml_window_mean",         // energy = run time x mean of 1-s-averaged NVML power samples over a window
                                  // around the run (TokenPowerBench); the simulator models that meter
      "tail_included",            // energy includes some time after the load ended
      "energy_missing",           // latency only: the source recorded no power
      "model_substituted",        // the source's model is not in the catalog; a same-architecture model stands in
      "model_reconstructed",      // the catalog's config of the model was assembled from partial sources
                                  // (data/models/RECONSTRUCTED.md), no copy of its config.json being public
      "engine_assumed",           // the source does not name its engine; the notes say why this one
      "greedy_sampling",          // the client asked for greedy decoding (temperature 0): the sampler only argmaxes
      "temperature_sampling",     // the client samples with a temperature alone: no top-p/top-k sort of the vocabulary
      "sampling_penalties",       // the client set a repetition/frequency/presence penalty: more sampler passes
      "batch_ran_to_longest",     // a fixed batch timed to its longest response while gen is the mean response:
                                  // the decode steps run are unknown (not fitted; docs/data.md)
      "batch_ran_to_cap",         // a fixed batch timed to its longest response, which reached the cap in the note
                                  // max_output_tokens: it decodes max_output_tokens - 1 steps (docs/data.md)
      "node_wall_power",          // energy of the whole node at the wall (GPUs, host, supplies), not the GPUs alone
      "throughput_row",           // a saturated or rate-driven run: latency_total is the node's time per request
                                  // (1 / requests per second), not a request's latency
      "run_settings_unknown",     // how the submitter ran it (batch limit, power limit) was not found: not replayed
  };
  return caveats;
}

std::string DatasetRow::note(std::string_view key) const {
  const std::string needle = std::string(key) + " ";
  for (size_t at = 0; (at = notes.find(needle, at)) != std::string::npos; at += needle.size()) {
    if (at > 0 && notes[at - 1] != ' ' && notes[at - 1] != ';') continue;  // a key, not the end of another word
    const size_t start = at + needle.size(), end = notes.find(';', start);
    return notes.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  return "";
}

std::string DatasetRow::why_not_a_label() const {
  if (has_caveat("batch_ran_to_longest"))
    return "a batch timed to its longest response with the mean response length: its decode steps are unknown";
  if (has_caveat("node_wall_power"))
    return fmt::format("whole-node wall energy: validated at node scope by serve-validate --source {}, not fitted",
                       source);
  if (pipeline_parallel > 1)
    return fmt::format("pipeline stages: held out of every fit, validated by serve-validate --source {}", source);
  if (has_caveat("throughput_row"))
    return fmt::format("a whole node's throughput under load: validated at node scope by serve-validate --source {}",
                       source);
  return "";
}

bool DatasetRow::has_caveat(std::string_view caveat) const {
  return std::find(caveats.begin(), caveats.end(), caveat) != caveats.end();
}

}  // namespace llmco2::dataset
