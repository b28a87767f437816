// measured/import_common.h - what the importers share: model name mapping, numeric cells, row skeletons.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "core/csv.h"
#include "dataset/record.h"
#include "measured/importer.h"
#include "measured/module.h"

namespace llmco2::measured {

// The source's model names mapped to catalog ids (data/measured/model_map.csv), with the relation.
class ModelMap {
 public:
  static const ModelMap& bundled();
  explicit ModelMap(const std::filesystem::path& path);
  // Sets model, model_source_name, model_relation and the architecture fields of `row` (with the caveat
  // model_substituted or model_reconstructed where it applies). Names without a mapping keep the source's name and
  // relation "not-in-catalog" (the simulator cannot label them). Throws std::invalid_argument for a name mapped as
  // "out-of-scope" (an architecture llmco2 does not represent: encoder-decoder, RNN), so the row is rejected.
  void apply(DatasetRow& row, const std::string& source_name) const;

 private:
  struct Entry {
    std::string model, relation, notes;
    ArchitectureFields arch;     // of the catalog model, resolved once when the map is read
    bool reconstructed = false;  // the catalog's config is a reconstruction
  };
  std::map<std::string, Entry> entries_;
};

// Reads a table's cells by column name; number() throws std::invalid_argument with the column named.
class CsvRowView {
 public:
  CsvRowView(const CsvTable& table, const CsvTable::Record& record) : table_(table), record_(record) {}
  const std::string& text(std::string_view column) const;
  double number(std::string_view column) const;
  bool empty(std::string_view column) const { return text(column).empty(); }
  bool has(std::string_view column) const { return table_.find_column(column).has_value(); }
  long line() const { return record_.line; }

 private:
  const CsvTable& table_;
  const CsvTable::Record& record_;
};

// The link between the row's GPUs from the GPU catalog ("" on one GPU or a GPU not in the catalog).
void set_interconnect(DatasetRow& row);

// Runs `convert` on every record of `table`; a record that throws (std::invalid_argument or Error) or yields a row
// validate_row rejects becomes a RowReject with its line. Every record ends up as a row or a reject.
template <typename Convert>
void convert_records(const CsvTable& table, ImportResult& out, Convert convert) {
  for (const auto& record : table.records) {
    CsvRowView view(table, record);
    std::string reason;
    try {
      DatasetRow row = convert(view);
      set_interconnect(row);
      reason = validate_row(row);
      if (reason.empty()) out.rows.push_back(std::move(row));
    } catch (const std::exception& e) {
      reason = e.what();
    }
    if (!reason.empty()) out.rejects.push_back({table.source, record.line, reason});
  }
}

// Imports one CSV file: convert(view, file) per record.
template <typename Convert>
ImportResult import_csv_file(const std::filesystem::path& file, Convert convert) {
  ImportResult out;
  convert_records(read_csv_file(file), out, [&](const CsvRowView& v) { return convert(v, file); });
  return out;
}

// "<file name>:<line>" relative to the source folder.
std::string source_ref(const std::filesystem::path& file, long line);

// A request's time in the running batch of a steady state, by Little's law: mean running requests x output tokens per
// request / output tokens per second. It spans the steady state's energy window, so energy / latency is its mean power.
inline double steady_state_latency_s(double mean_running, double gen_tokens, double output_tokens_per_s) {
  return mean_running * gen_tokens / output_tokens_per_s;
}

// Mean prompt length in tokens estimated as characters / 4 over the first human turn of a ShareGPT-style JSON file.
double sharegpt_mean_prompt_tokens(const std::filesystem::path& file);

}  // namespace llmco2::measured
