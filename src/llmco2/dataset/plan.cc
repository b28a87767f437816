// dataset/plan.cc - reading and writing plan CSVs.
#include "dataset/plan.h"

#include <fmt/format.h>

#include "core/json_io.h"

namespace llmco2::dataset {
namespace {

// Parses a positive whole number (or >= `minimum`); returns the reason on failure.
std::string parse_count(const std::string& text, long minimum, long& out, std::string_view column) {
  const auto value = parse_long(text);
  if (!value) return fmt::format("column '{}': expected a whole number, got '{}'", column, text);
  out = *value;
  if (out < minimum) return fmt::format("column '{}': must be at least {}, got {}", column, minimum, out);
  return "";
}

}  // namespace

PlanReadResult parse_plan(const CsvTable& table) {
  const size_t model = table.column("model"), gpu = table.column("gpu"), gpus = table.column("gpus"),
               batch = table.column("batch"), prompt = table.column("prompt"), gen = table.column("gen");
  const auto dtype = table.find_column("dtype"), engine = table.find_column("engine");
  PlanReadResult result;
  for (const auto& record : table.records) {
    const auto& cells = record.cells;
    auto reject = [&](std::string reason) { result.rejects.push_back({table.source, record.line, std::move(reason)}); };
    if (cells.size() != table.header.size()) {
      reject(fmt::format("{} cells, the header has {}", cells.size(), table.header.size()));
      continue;
    }
    PlanRow row;
    row.line = record.line;
    row.model = cells[model];
    row.gpu = cells[gpu];
    if (row.model.empty() || row.gpu.empty()) {
      reject("model and gpu must not be empty");
      continue;
    }
    long gpu_count = 0;
    std::string reason = parse_count(cells[gpus], 1, gpu_count, "gpus");
    if (reason.empty()) reason = parse_count(cells[batch], 1, row.batch, "batch");
    if (reason.empty()) reason = parse_count(cells[prompt], 1, row.prompt, "prompt");
    if (reason.empty()) reason = parse_count(cells[gen], 1, row.gen, "gen");
    if (!reason.empty()) {
      reject(reason);
      continue;
    }
    row.gpus = static_cast<int>(gpu_count);
    if (dtype) row.dtype = cells[*dtype];
    if (engine) row.engine = cells[*engine];
    result.rows.push_back(std::move(row));
  }
  return result;
}

PlanReadResult read_plan(const std::filesystem::path& path) { return parse_plan(read_csv_file(path)); }

std::string plan_to_csv(const std::vector<PlanRow>& rows) {
  std::string out;
  append_csv_record(out, {"model", "gpu", "gpus", "batch", "prompt", "gen", "dtype", "engine"});
  for (const auto& r : rows)
    append_csv_record(out, {r.model, r.gpu, std::to_string(r.gpus), std::to_string(r.batch), std::to_string(r.prompt),
                            std::to_string(r.gen), r.dtype, r.engine});
  return out;
}

void write_plan(const std::filesystem::path& path, const std::vector<PlanRow>& rows) {
  write_file_atomic(path, plan_to_csv(rows));
}

}  // namespace llmco2::dataset
