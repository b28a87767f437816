// sampling/azure_trace.cc - reading the Azure trace CSVs.
#include "sampling/azure_trace.h"

#include <charconv>
#include <string>

#include "core/csv.h"
#include "core/error.h"
#include "core/paths.h"

namespace llmco2 {
namespace {

long parse_tokens(const std::string& cell, const CsvTable& table, long line, const char* column) {
  long value = 0;
  const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (ec != std::errc() || ptr != cell.data() + cell.size() || value < 1)
    fail("{}:{}: column '{}': expected a positive whole number, got '{}'", table.source, line, column, cell);
  return value;
}

}  // namespace

std::vector<TraceRequest> read_azure_trace(const std::filesystem::path& path) {
  const CsvTable table = read_csv_file(path);
  const size_t prompt = table.column("ContextTokens"), gen = table.column("GeneratedTokens");
  std::vector<TraceRequest> requests;
  requests.reserve(table.records.size());
  for (const auto& record : table.records) {
    if (record.cells.size() != table.header.size())
      fail("{}:{}: {} cells, the header has {}", table.source, record.line, record.cells.size(), table.header.size());
    requests.push_back({parse_tokens(record.cells[prompt], table, record.line, "ContextTokens"),
                        parse_tokens(record.cells[gen], table, record.line, "GeneratedTokens")});
  }
  if (requests.empty()) fail("{}: no requests", table.source);
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

}  // namespace llmco2
