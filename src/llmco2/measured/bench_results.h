// measured/bench_results.h - a site's own benchmark results (vllm bench serve, trtllm-bench) as dataset rows, for a
// site profile (calibrate --site). The field of each format and what it measures: docs/data.md, "Your own benchmarks".
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "measured/importer.h"
#include "measured/module.h"

namespace llmco2::measured {

// What a result file does not say about the setup it ran on.
struct BenchSetup {
  std::string gpu;     // GPU catalog id (required: neither tool writes one the catalog can take)
  int gpus = 0;        // GPUs of the server; 0: the file's own count (trtllm-bench's world_size), else refused
  std::string engine;  // "": the tool's engine (vllm for vllm bench serve against backend vllm, trt-llm)
  std::string model;   // "": the file's model name (a Hugging Face id of the catalog)
  std::string dtype;   // "": the checkpoint's own
  std::string source = "site";
};

// "vllm" (vllm bench serve --save-result: one JSON object, or one per line with --append-result), "trtllm"
// (trtllm-bench throughput --report_json) or "auto" (told apart by their keys). One row per result: a steady state
// of the closed (or open) loop the tool ran, refused with the file, the line and the field when a field it needs is
// missing or one it does not know (an energy field) is present.
ImportResult import_bench_results(const std::vector<std::filesystem::path>& files, const std::string& format,
                                  const BenchSetup& setup);

}  // namespace llmco2::measured
