// measured/mlperf_benchmarks.h - what each MLPerf Inference LLM benchmark runs, shared by the NVIDIA power and the
// AMD performance importers.
#pragma once

#include <string>

#include "measured/module.h"

namespace llmco2::measured {

struct MlperfBenchmark {
  const char* prefix;           // "llama2-70b" of "llama2-70b-99.9"
  const char* model;            // source name, mapped by data/measured/model_map.csv
  double prompt_tokens;         // mean, estimated (data/mlperf/README.md)
  double gen_tokens_reference;  // mlperf_power/SOURCE.md section 6
  const char* dtype;
  int beams;  // beam search width (data/mlperf/benchmarks.json "decoding")
};

// The benchmark whose prefix starts `name`; throws std::invalid_argument for an unknown one.
const MlperfBenchmark& mlperf_benchmark(const std::string& name);

}  // namespace llmco2::measured
