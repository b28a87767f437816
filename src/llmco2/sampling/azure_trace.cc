// sampling/azure_trace.cc - reading the Azure trace CSVs.
#include "sampling/azure_trace.h"

#include "core/error.h"
#include "core/paths.h"
#include "dataset/request_log.h"

namespace llmco2::sampling {

std::vector<TraceRequest> read_azure_trace(const std::filesystem::path& path) {
  const RequestLog log = read_request_log(path);
  if (log.format != "azure") fail("{}: missing column 'ContextTokens' (not an Azure trace)", log.source);
  if (log.skipped > 0) fail("{}:{}: {}", log.source, log.examples.front().line, log.examples.front().reason);
  std::vector<TraceRequest> requests;
  requests.reserve(log.requests.size());
  for (const auto& q : log.requests) requests.push_back({q.prompt_tokens, q.gen_tokens});
  return requests;
}

const std::vector<TraceRequest>& bundled_azure_requests() {
  static const std::vector<TraceRequest> requests = [] {
    auto all = read_azure_trace(data_dir() / "azure" / "AzureLLMInferenceTrace_code.csv");
    const auto conv = read_azure_trace(data_dir() / "azure" / "AzureLLMInferenceTrace_conv.csv");
    all.insert(all.end(), conv.begin(), conv.end());
    return all;
  }();
  return requests;
}

}  // namespace llmco2::sampling
