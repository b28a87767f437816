// sampling/azure_trace.h - the (prompt, generated) token pairs of the Azure LLM inference traces (data/azure).
#pragma once

#include <filesystem>
#include <vector>

#include "sampling/module.h"

namespace llmco2::sampling {

struct TraceRequest {
  long prompt_tokens = 0;
  long gen_tokens = 0;
};

// Reads one trace CSV (dataset/request_log.h, strictly). Throws Error naming the file and line of the first bad row.
std::vector<TraceRequest> read_azure_trace(const std::filesystem::path& path);

// Both bundled traces (code and conversation), read once.
const std::vector<TraceRequest>& bundled_azure_requests();

}  // namespace llmco2::sampling
