// dataset/dataset_csv.cc - one table of columns drives both writing and reading the dataset CSV.
#include "dataset/dataset_csv.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_io.h"

namespace llmco2::dataset {
namespace {

std::string format_number(double value) { return fmt::format("{}", value); }
template <typename T>
std::string format_optional(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "";
}

double parse_number(const std::string& text) {
  const auto value = parse_double(text);
  if (!value) throw std::invalid_argument("expected a number");
  return *value;
}
long parse_integer(const std::string& text) {
  const double value = parse_number(text);
  // Within +-2^53, where a double holds every whole number (and far inside a long).
  if (value != std::floor(value) || std::fabs(value) > 9007199254740992.0)
    throw std::invalid_argument("expected a whole number of at most 2^53");
  return static_cast<long>(value);
}
template <typename T>
std::optional<T> parse_optional(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if constexpr (std::is_same_v<T, long>) return parse_integer(text);
  else return parse_number(text);
}

std::vector<std::string> split_caveats(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

struct Column {
  std::string name;
  bool required;
  std::function<std::string(const DatasetRow&)> write;
  std::function<void(DatasetRow&, const std::string&)> read;  // throws std::invalid_argument with the reason
};

#define TEXT(field) \
  [](const DatasetRow& r) { return r.field; }, [](DatasetRow& r, const std::string& s) { r.field = s; }
#define OPT(type, field)                                        \
  [](const DatasetRow& r) { return format_optional(r.field); }, \
      [](DatasetRow& r, const std::string& s) { r.field = parse_optional<type>(s); }
#define NUM(field)                                            \
  [](const DatasetRow& r) { return format_number(r.field); }, \
      [](DatasetRow& r, const std::string& s) { r.field = parse_number(s); }

const std::vector<Column>& columns() {
  static const std::vector<Column> table = {
      {"source", true, TEXT(source)},
      {"source_ref", false, TEXT(source_ref)},
      {"model", true, TEXT(model)},
      {"model_source_name", false, TEXT(model_source_name)},
      {"model_relation", false, TEXT(model_relation)},
      {"params_b", false, OPT(double, arch.params_b)},
      {"active_params_b", false, OPT(double, arch.active_params_b)},
      {"layers", false, OPT(long, arch.layers)},
      {"hidden", false, OPT(long, arch.hidden)},
      {"heads", false, OPT(long, arch.heads)},
      {"kv_heads", false, OPT(long, arch.kv_heads)},
      {"intermediate", false, OPT(long, arch.intermediate)},
      {"experts", false, OPT(long, arch.experts)},
      {"experts_per_token", false, OPT(long, arch.experts_per_token)},
      {"dtype", false, TEXT(dtype)},
      {"gpu", true, TEXT(gpu)},
      {"gpus", true, [](const DatasetRow& r) { return std::to_string(r.gpus); },
       [](DatasetRow& r, const std::string& s) { r.gpus = static_cast<int>(parse_integer(s)); }},
      {"interconnect", false, TEXT(interconnect)},
      {"parallelism", false, [](const DatasetRow& r) { return std::string(parallelism_name(r.parallelism)); },
       [](DatasetRow& r, const std::string& s) {
         if (s.empty()) return;
         auto p = parse_parallelism(s);
         if (!p) throw std::invalid_argument("parallelism must be tensor or layer_split");
         r.parallelism = *p;
       }},
      {"tensor_parallel", false, [](const DatasetRow& r) { return std::to_string(r.tensor_parallel); },
       [](DatasetRow& r, const std::string& s) {
         if (!s.empty()) r.tensor_parallel = static_cast<int>(parse_integer(s));
       }},
      {"data_parallel", false, [](const DatasetRow& r) { return std::to_string(r.data_parallel); },
       [](DatasetRow& r, const std::string& s) {
         if (!s.empty()) r.data_parallel = static_cast<int>(parse_integer(s));
       }},
      {"pipeline_parallel", false, [](const DatasetRow& r) { return std::to_string(r.pipeline_parallel); },
       [](DatasetRow& r, const std::string& s) {
         if (!s.empty()) r.pipeline_parallel = static_cast<int>(parse_integer(s));
       }},
      {"engine", true, TEXT(engine)},
      {"batch", true, NUM(batch)},
      {"max_batch", false, OPT(double, max_batch)},
      {"run_requests", false, OPT(double, run_requests)},
      {"prompt_tokens", true, NUM(prompt_tokens)},
      {"gen_tokens", true, NUM(gen_tokens)},
      {"gen_tokens_cv", false, OPT(double, gen_tokens_cv)},
      {"measures", true, [](const DatasetRow& r) { return std::string(measures_name(r.measures)); },
       [](DatasetRow& r, const std::string& s) {
         auto m = parse_measures(s);
         if (!m) throw std::invalid_argument("measures must be isolated, fixed_batch or steady_state");
         r.measures = *m;
       }},
      {"energy_prefill_j", false, OPT(double, energy_j.prefill)},
      {"energy_decode_j", false, OPT(double, energy_j.decode)},
      {"energy_total_j", false, OPT(double, energy_j.total)},
      {"latency_prefill_s", false, OPT(double, latency_s.prefill)},
      {"latency_decode_s", false, OPT(double, latency_s.decode)},
      {"latency_total_s", false, OPT(double, latency_s.total)},
      {"repeats", false, OPT(double, repeats)},
      {"energy_spread", false, OPT(double, energy_spread)},
      {"latency_spread", false, OPT(double, latency_spread)},
      {"caveats", false,
       [](const DatasetRow& r) {
         std::string out;
         for (const auto& c : r.caveats) out += (out.empty() ? "" : ";") + c;
         return out;
       },
       [](DatasetRow& r, const std::string& s) { r.caveats = split_caveats(s); }},
      {"notes", false, TEXT(notes)},
  };
  return table;
}

#undef TEXT
#undef OPT
#undef NUM

std::string check_phase_values(const PhaseValues& v, std::string_view what) {
  for (auto [value, name] : {std::pair{v.prefill, "prefill"}, {v.decode, "decode"}, {v.total, "total"}})
    if (value && *value < 0) return fmt::format("{}_{} is negative ({})", what, name, *value);
  if (v.prefill && v.decode && v.total) {
    const double sum = *v.prefill + *v.decode;
    if (std::abs(sum - *v.total) > 0.01 * std::max(*v.total, 1e-12))
      return fmt::format("{}_total {} is not prefill + decode = {}", what, *v.total, sum);
  }
  return "";
}

}  // namespace

std::string RowReject::message() const { return fmt::format("{}:{}: {}", file, line, reason); }

const std::vector<std::string>& dataset_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& c : columns()) out.push_back(c.name);
    return out;
  }();
  return names;
}

std::string validate_row(const DatasetRow& r) {
  if (r.source.empty()) return "source is empty";
  if (r.model.empty()) return "model is empty";
  if (r.gpu.empty()) return "gpu is empty";
  if (r.engine.empty()) return "engine is empty";
  if (r.gpus < 1) return fmt::format("gpus must be at least 1, got {}", r.gpus);
  if (r.tensor_parallel < 1 || r.data_parallel < 1 || r.pipeline_parallel < 1)
    return "tensor_parallel, pipeline_parallel and data_parallel must be at least 1";
  if (r.parallelism == Parallelism::tensor && r.tensor_parallel * r.pipeline_parallel * r.data_parallel != r.gpus)
    return fmt::format("gpus {} is not tensor_parallel {} x pipeline_parallel {} x data_parallel {}", r.gpus,
                       r.tensor_parallel, r.pipeline_parallel, r.data_parallel);
  if (r.parallelism == Parallelism::layer_split && r.pipeline_parallel != 1)
    return "a layer_split row has no pipeline stages (pipeline_parallel 1)";
  if (!(r.batch > 0)) return fmt::format("batch must be positive, got {}", r.batch);
  if (r.prompt_tokens < 0) return fmt::format("prompt_tokens must be >= 0, got {}", r.prompt_tokens);
  if (!(r.gen_tokens >= 1)) return fmt::format("gen_tokens must be >= 1, got {}", r.gen_tokens);
  if (auto e = check_phase_values(r.energy_j, "energy"); !e.empty()) return e;
  if (auto e = check_phase_values(r.latency_s, "latency"); !e.empty()) return e;
  const bool any_energy = r.energy_j.prefill || r.energy_j.decode || r.energy_j.total;
  const bool any_latency = r.latency_s.prefill || r.latency_s.decode || r.latency_s.total;
  if (!any_energy && !any_latency) return "no energy and no latency value";
  for (const auto& c : r.caveats)
    if (std::find(known_caveats().begin(), known_caveats().end(), c) == known_caveats().end())
      return fmt::format("unknown caveat '{}' (see docs/data.md)", c);
  return "";
}

DatasetReadResult parse_dataset(const CsvTable& table) {
  std::vector<std::optional<size_t>> index;
  for (const auto& c : columns()) {
    index.push_back(table.find_column(c.name));
    if (c.required && !index.back()) fail("{}: missing column '{}' (see docs/data.md)", table.source, c.name);
  }
  DatasetReadResult result;
  for (const auto& record : table.records) {
    if (record.cells.size() != table.header.size()) {
      result.rejects.push_back({table.source, record.line,
                                fmt::format("{} cells, the header has {}", record.cells.size(), table.header.size())});
      continue;
    }
    DatasetRow row;
    std::string reason;
    for (size_t c = 0; c < columns().size() && reason.empty(); ++c) {
      if (!index[c]) continue;
      try {
        columns()[c].read(row, record.cells[*index[c]]);
      } catch (const std::exception& e) {
        reason = fmt::format("column '{}': {}, got '{}'", columns()[c].name, e.what(), record.cells[*index[c]]);
      }
    }
    if (reason.empty()) reason = validate_row(row);
    if (reason.empty()) result.rows.push_back(std::move(row));
    else result.rejects.push_back({table.source, record.line, reason});
  }
  return result;
}

DatasetReadResult read_dataset(const std::filesystem::path& path) { return parse_dataset(read_csv_file(path)); }

std::string dataset_to_csv(const std::vector<DatasetRow>& rows) {
  std::string out;
  append_csv_record(out, dataset_columns());
  std::vector<std::string> cells(columns().size());
  for (const auto& row : rows) {
    for (size_t c = 0; c < columns().size(); ++c) cells[c] = columns()[c].write(row);
    append_csv_record(out, cells);
  }
  return out;
}

void write_dataset(const std::filesystem::path& path, const std::vector<DatasetRow>& rows) {
  write_file_atomic(path, dataset_to_csv(rows));
}

std::vector<std::filesystem::path> dataset_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".csv" && name.find(".rejects.") == std::string::npos && name != "model_map.csv")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) fail("{}: no dataset CSV files (run `llmco2 import all` first)", dir.string());
  return files;
}

DatasetReadResult read_dataset_folder(const std::filesystem::path& dir) {
  DatasetReadResult all;
  for (const auto& file : dataset_files(dir)) {
    DatasetReadResult read = read_dataset(file);
    all.rows.insert(all.rows.end(), std::make_move_iterator(read.rows.begin()),
                    std::make_move_iterator(read.rows.end()));
    all.rejects.insert(all.rejects.end(), read.rejects.begin(), read.rejects.end());
  }
  return all;
}

void write_import_rejects(const std::filesystem::path& path, const std::vector<RowReject>& rejects) {
  std::string text;
  append_csv_record(text, {"file", "line", "reason"});
  for (const auto& r : rejects) append_csv_record(text, {r.file, std::to_string(r.line), r.reason});
  write_file_atomic(path, text);
}

std::map<std::string, std::vector<RowReject>> read_import_rejects(const std::filesystem::path& dir) {
  constexpr std::string_view kSuffix = ".rejects.csv";
  std::map<std::string, std::vector<RowReject>> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !name.ends_with(kSuffix)) continue;
    const CsvTable table = read_csv_file(entry.path());
    const size_t file = table.column("file"), line = table.column("line"), reason = table.column("reason");
    auto& rejects = out[name.substr(0, name.size() - kSuffix.size())];
    for (const auto& r : table.records) {
      if (r.cells.size() != table.header.size())
        fail("{}:{}: expected {} cells", table.source, r.line, table.header.size());
      rejects.push_back({r.cells[file], parse_long(r.cells[line]).value_or(0), r.cells[reason]});
    }
  }
  return out;
}

// A digit run stands alone (a count or a measurement, replaced by N) when it starts a word, or continues a number
// replaced just before it ("0.0747", "1,000"); in a name ("gptj-99", "llama2-70b") it stays.
std::string reason_class(const std::string& reason) {
  std::string out;
  int depth = 0;
  size_t number_end = std::string::npos;  // where the last N ends in `out`
  for (size_t i = 0; i < reason.size(); ++i) {
    const char c = reason[i];
    depth += c == '(';
    const bool inside = depth > 0;
    depth -= c == ')' && depth > 0;
    if (inside) continue;
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      out += c;
      continue;
    }
    const bool replacing = number_end == out.size();  // the digit before this one became the N just written
    const bool word_start = out.empty() || out.back() == ' ' || out.back() == '=';
    const bool after_separator =
        !out.empty() && (out.back() == '.' || out.back() == ',') && number_end + 1 == out.size();
    if (replacing && i > 0 && std::isdigit(static_cast<unsigned char>(reason[i - 1]))) continue;
    if (word_start || after_separator) {
      out += 'N';
      number_end = out.size();
      continue;
    }
    out += c;
  }
  for (size_t at; (at = out.find("  ")) != std::string::npos;) out.erase(at, 1);  // where a parenthesis was
  for (size_t at; (at = out.find(" :")) != std::string::npos;) out.erase(at, 1);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace llmco2::dataset
