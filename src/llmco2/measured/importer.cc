// measured/importer.cc - the list of sources and their importers.
#include "measured/importer.h"

#include "core/error.h"
#include "core/names.h"
#include "measured/sources.h"

namespace llmco2::measured {

const std::vector<Importer>& importers() {
  static const std::vector<Importer> list = {
      {"mlenergy-v1", "mlenergy_leaderboard_v1_legacy", "HF/FastChat, batch 1 (A40 batch 1-16), per-model means",
       import_mlenergy_v1},
      {"mlenergy-v2", "mlenergy_leaderboard_v2", "vLLM 0.5.4, continuous batching, steady state", import_mlenergy_v2},
      {"mlenergy-v3", "mlenergy_leaderboard_v3", "vLLM 0.11.1, continuous batching, steady state", import_mlenergy_v3},
      {"splitwise", "splitwise_perf_model", "fixed batches under TP 2-8, normalised power (A100) and latency",
       import_splitwise},
      {"wilkins", "wilkins_energy_inference", "HF transformers, isolated requests, no KV cache, layer split",
       import_wilkins},
      {"tokenpowerbench", "tokenpowerbench", "vLLM offline batches on one H100 NVL", import_tokenpowerbench},
      {"chuyishang", "chuyishang_inference_energy", "vLLM server, 10-minute closed-loop load", import_chuyishang},
      {"benchlab", "benchlab_thank_you", "one aggregate of 1,000 HF batch-1 requests (token count missing)",
       import_benchlab},
      {"mlperf-power", "mlperf_power",
       "MLPerf Inference power: 8-GPU nodes at the wall, TensorRT-LLM, Offline and Server (node scope)",
       import_mlperf_power},
      {"mlperf-amd", "mlperf_amd_performance",
       "MLPerf Inference performance on AMD MI300X/MI325X: vLLM on ROCm, Offline, Server and Interactive throughput "
       "(node scope, no power)",
       import_mlperf_amd},
      {"vidur", "vidur_profiling", "not importable: per-operator latencies, no energy and no whole configurations",
       nullptr},
      {"ecologits", "ecologits_fitted_coefficients", "not importable: fitted coefficients, not measurements", nullptr},
  };
  return list;
}

const Importer& find_importer(const std::string& id) {
  std::vector<std::string> ids;
  for (const auto& importer : importers()) {
    if (importer.id == id) return importer;
    ids.push_back(importer.id);
  }
  fail("unknown source '{}' (expected {})", id, join_or(ids));
}

}  // namespace llmco2::measured
