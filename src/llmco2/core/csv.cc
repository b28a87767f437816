// core/csv.cc - CSV reading and writing.
#include "core/csv.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/input_file.h"

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

CsvReader::CsvReader(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}

int CsvReader::get() { return in_.get(); }

std::optional<CsvTable::Record> CsvReader::next() {
  if (!bom_checked_) {  // a UTF-8 byte-order mark before the header
    bom_checked_ = true;
    if (in_.peek() == 0xEF) {
      char bom[3];
      in_.read(bom, 3);
      if (!(in_.gcount() == 3 && bom[1] == '\xBB' && bom[2] == '\xBF')) {
        in_.clear();
        in_.seekg(0);
      }
    }
  }
  CsvTable::Record record{line_, {}};
  std::string cell;
  bool quoted = false, any = false;
  for (int c; (c = get()) != std::char_traits<char>::eof();) {
    if (quoted) {
      if (c == '"' && in_.peek() == '"') cell += '"', get();
      else if (c == '"') quoted = false;
      else cell += static_cast<char>(c), line_ += (c == '\n');
      continue;
    }
    if (c == '"') quoted = any = true;
    else if (c == ',') record.cells.push_back(std::move(cell)), cell.clear(), any = true;
    else if (c == '\r') continue;
    else if (c == '\n') {
      ++line_;
      if (any || !cell.empty()) {
        record.cells.push_back(std::move(cell));
        return record;
      }
      record.line = line_;  // a blank line: the record starts on the next one
    } else cell += static_cast<char>(c), any = true;
    if (cell.size() > kMaxCsvRecordBytes)
      fail("{}:{}: a field longer than {} bytes (expected CSV lines)", source_, record.line, kMaxCsvRecordBytes);
  }
  if (quoted) fail("{}:{}: unterminated quoted field", source_, record.line);
  if (any || !cell.empty()) {
    record.cells.push_back(std::move(cell));
    return record;
  }
  return std::nullopt;
}

CsvTable parse_csv(std::string_view text, std::string source) {
  std::istringstream in{std::string(text)};
  CsvReader reader(in, std::move(source));
  CsvTable table;
  table.source = reader.source();
  auto header = reader.next();
  if (!header) fail("{}: empty CSV file (expected a header line)", table.source);
  table.header = std::move(header->cells);
  while (auto record = reader.next()) table.records.push_back(std::move(*record));
  return table;
}

std::string read_text_file(const std::filesystem::path& path) {
  return read_input_file(path, kMaxTextFileBytes, "text file");
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
