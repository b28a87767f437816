// measured/wilkins.cc - Wilkins et al.: isolated HF-transformers requests without a KV cache, layer-split multi-GPU.
#include <stdexcept>

#include <fmt/format.h>

#include "measured/import_common.h"
#include "measured/sources.h"

namespace llmco2::measured {
namespace {

void set_system(DatasetRow& row, const std::string& system) {
  if (system == "Swing AMD+A100" || system == "argonne-swing") row.gpu = "a100-40gb-sxm";
  else if (system == "Palmetto Intel+A100") row.gpu = "a100-40gb-pcie";
  else if (system == "Palmetto Intel+V100") row.gpu = "v100-sxm2", row.caveats.push_back("dtype_emulated");
  else throw std::invalid_argument(fmt::format("system '{}' is not an NVIDIA GPU system", system));
  row.caveats.push_back("gpu_variant_assumed");
}

DatasetRow wilkins_row(const CsvRowView& v, const std::filesystem::path& file) {
  const std::string& phase = v.text("Phase");
  if (phase.rfind("start-inference", 0) != 0)
    throw std::invalid_argument(fmt::format("not a request row (phase '{}': startup or Apple M1)", phase));
  DatasetRow row;
  row.source = "wilkins";
  row.source_ref = source_ref(file, v.line());
  ModelMap::bundled().apply(row, v.text("Model"));
  row.dtype = "bf16";
  set_system(row, v.text("System"));
  row.gpus = static_cast<int>(v.number("Number of GPUs"));
  if (row.gpus > 1) row.parallelism = Parallelism::layer_split, row.tensor_parallel = 1;
  row.engine = "hf-transformers";
  row.measures = Measures::isolated;
  row.prompt_tokens = v.number("Number of Input Tokens");
  // The max_new_tokens setting, named differently in one file.
  row.gen_tokens = v.number(v.empty("Number of Output Tokens") ? "Output Token Limit" : "Number of Output Tokens");
  const bool millijoules = !v.empty("GPU Energy (mJ)");
  row.energy_j.total = millijoules ? v.number("GPU Energy (mJ)") / 1000 : v.number("GPU Energy (J)");
  row.latency_s.total = v.number("Runtime (s)");
  row.repeats = 1;
  row.caveats.insert(row.caveats.end(), {"no_kv_cache", "gen_tokens_is_limit"});
  row.notes = fmt::format("phase {}", phase);
  return row;
}

// The files differ in their columns; a view that answers "" for a column a file lacks keeps one converter.
class WilkinsTable {
 public:
  explicit WilkinsTable(CsvTable table) : table_(std::move(table)) {
    for (const char* column : {"Output Token Limit", "Number of Output Tokens", "GPU Energy (mJ)", "GPU Energy (J)"})
      if (!table_.find_column(column)) add_empty_column(column);
  }
  const CsvTable& table() const { return table_; }

 private:
  void add_empty_column(const char* column) {
    table_.header.push_back(column);
    for (auto& record : table_.records) record.cells.emplace_back();
  }
  CsvTable table_;
};

}  // namespace

ImportResult import_wilkins(const std::filesystem::path& folder) {
  ImportResult out;
  for (const char* name :
       {"e2dc_all-input-stats.csv", "e2dc_all-output-stats.csv", "parameter-scale_all-input-scale-stats.csv",
        "parameter-scale_all-output-scale-stats.csv", "independence-test_all-stats-raw.csv"}) {
    const auto file = folder / name;
    const WilkinsTable table(read_csv_file(file));
    convert_records(table.table(), out, [&](const CsvRowView& v) { return wilkins_row(v, file); });
  }
  return out;
}

}  // namespace llmco2::measured
