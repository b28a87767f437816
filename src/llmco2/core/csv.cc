// core/csv.cc - CSV reading and writing.
#include "core/csv.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace llmco2 {

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::optional<long> parse_long(std::string_view text) {
  long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<size_t> CsvTable::find_column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return std::nullopt;
}

size_t CsvTable::column(std::string_view name) const {
  if (auto index = find_column(name)) return *index;
  fail("{}: missing column '{}'", source, name);
}

namespace {

// Splits the text into records; `line` counts physical lines so every record knows where it started.
std::vector<CsvTable::Record> split_records(std::string_view text, const std::string& source) {
  std::vector<CsvTable::Record> records;
  CsvTable::Record record{1, {}};
  std::string cell;
  bool quoted = false, any = false;
  long line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c, line += (c == '\n');
      continue;
    }
    if (c == '"') quoted = any = true;
    else if (c == ',') record.cells.push_back(std::move(cell)), cell.clear(), any = true;
    else if (c == '\r') continue;
    else if (c == '\n') {
      if (any || !cell.empty()) record.cells.push_back(std::move(cell)), records.push_back(std::move(record));
      cell.clear(), any = false, record = {++line, {}};
    } else cell += c, any = true;
  }
  if (quoted) fail("{}:{}: unterminated quoted field", source, record.line);
  if (any || !cell.empty()) record.cells.push_back(std::move(cell)), records.push_back(std::move(record));
  return records;
}

}  // namespace

CsvTable parse_csv(std::string_view text, std::string source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte-order mark
  CsvTable table;
  table.source = std::move(source);
  auto records = split_records(text, table.source);
  if (records.empty()) fail("{}: empty CSV file (expected a header line)", table.source);
  table.header = std::move(records.front().cells);
  table.records.assign(std::make_move_iterator(records.begin() + 1), std::make_move_iterator(records.end()));
  return table;
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CsvTable read_csv_file(const std::filesystem::path& path) {
  return parse_csv(read_text_file(path), path.string());
}

std::string csv_escape(std::string_view cell) {
  const bool needs = cell.find_first_of(",\"\n\r") != std::string_view::npos ||
                     (!cell.empty() && (cell.front() == ' ' || cell.back() == ' '));
  if (!needs) return std::string(cell);
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void append_csv_record(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    out += csv_escape(cells[i]);
  }
  out += '\n';
}

}  // namespace llmco2
