// core/csv.cc - CSV reading and writing.
#include "core/csv.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>

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

CsvReader::CsvReader(std::istream& in, std::string source) : in_(&in), source_(std::move(source)) {}
CsvReader::CsvReader(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

int CsvReader::get() {
  if (in_) return in_->get();
  return at_ < text_.size() ? static_cast<unsigned char>(text_[at_++]) : std::char_traits<char>::eof();
}

int CsvReader::peek() {
  if (in_) return in_->peek();
  return at_ < text_.size() ? static_cast<unsigned char>(text_[at_]) : std::char_traits<char>::eof();
}

// Appends to `cell` the characters before the next one next() must see (a quote; outside quotes a comma, CR or LF;
// inside them LF, for the line count) when reading from memory, and says how many; 0 from a stream.
size_t CsvReader::take_run(std::string& cell, bool quoted) {
  if (in_) return 0;
  size_t end = at_;
  auto plain = [quoted](char c) { return c != '"' && c != '\n' && (quoted || (c != ',' && c != '\r')); };
  while (end < text_.size() && plain(text_[end])) ++end;
  cell.append(text_.data() + at_, end - at_);
  const size_t n = end - at_;
  at_ = end;
  return n;
}

// Skips a UTF-8 byte-order mark before the header.
void CsvReader::skip_bom() {
  bom_checked_ = true;
  if (!in_) {
    if (text_.starts_with("\xEF\xBB\xBF")) at_ = 3;
    return;
  }
  if (in_->peek() == 0xEF) {
    char bom[3];
    in_->read(bom, 3);
    if (!(in_->gcount() == 3 && bom[1] == '\xBB' && bom[2] == '\xBF')) {
      in_->clear();
      in_->seekg(0);
    }
  }
}

std::optional<CsvTable::Record> CsvReader::next() {
  if (!bom_checked_) skip_bom();
  CsvTable::Record record{line_, {}};
  std::string cell;
  bool quoted = false, any = false;
  size_t record_bytes = 0;   // of the cells already taken, one separator each
  auto check_length = [&] {  // after each character (or run) added, quoted or not: a quoted field may span lines
    if (record_bytes + cell.size() > kMaxCsvRecordBytes)
      fail("{}:{}: a record longer than {} bytes (expected CSV lines)", source_, record.line, kMaxCsvRecordBytes);
  };
  auto take_cell = [&] {
    record_bytes += cell.size() + 1;
    record.cells.push_back(std::move(cell));
    cell.clear();
    check_length();
  };
  for (;;) {
    if (take_run(cell, quoted) > 0) any = true, check_length();  // from memory: plain characters in one step
    const int c = get();
    if (c == std::char_traits<char>::eof()) break;
    if (quoted) {
      if (c == '"' && peek() == '"') cell += '"', get();
      else if (c == '"') quoted = false;
      else cell += static_cast<char>(c), line_ += (c == '\n');
      check_length();
      continue;
    }
    if (c == '"') quoted = any = true;
    else if (c == ',') take_cell(), any = true;
    else if (c == '\r') continue;
    else if (c == '\n') {
      ++line_;
      if (any || !cell.empty()) {
        record.cells.push_back(std::move(cell));
        return record;
      }
      record.line = line_;  // a blank line: the record starts on the next one
    } else cell += static_cast<char>(c), any = true, check_length();
  }
  if (quoted) fail("{}:{}: unterminated quoted field", source_, record.line);
  if (any || !cell.empty()) {
    record.cells.push_back(std::move(cell));
    return record;
  }
  return std::nullopt;
}

CsvTable parse_csv(std::string_view text, std::string source) {
  CsvReader reader(text, std::move(source));
  CsvTable table;
  table.source = reader.source();
  auto header = reader.next();
  if (!header) fail("{}: empty CSV file (expected a header line)", table.source);
  table.header = std::move(header->cells);
  while (auto record = reader.next()) table.records.push_back(std::move(*record));
  return table;
}

namespace {

// The end of the record that starts at `start` (the index of its '\n', or text.size()), and the line breaks inside
// it. A '\n' ends the record when the quotes before it on the record are balanced ("" inside a quoted cell counts 2).
std::pair<size_t, long> record_end(std::string_view text, size_t start) {
  bool inside_quotes = false;
  long breaks = 0;
  for (size_t from = start;; ++breaks) {
    const size_t newline = text.find('\n', from);
    if (newline == std::string_view::npos) return {text.size(), breaks};
    inside_quotes ^= (std::count(text.begin() + from, text.begin() + newline, '"') & 1) != 0;
    if (!inside_quotes) return {newline, breaks};
    from = newline + 1;
  }
}

bool first_cell_is(std::string_view record, std::string_view cell) {
  if (record.size() <= cell.size() || (record[cell.size()] != ',' && record[cell.size()] != '\r')) return false;
  for (size_t i = 0; i < cell.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(record[i])) != std::tolower(static_cast<unsigned char>(cell[i])))
      return false;
  return true;
}

}  // namespace

std::optional<CsvTable> parse_csv_row(std::string_view text, std::string source, std::string_view first_cell) {
  const auto [header_end, header_breaks] = record_end(text, 0);
  long line = 2 + header_breaks;
  for (size_t start = header_end + 1; start < text.size();) {
    const auto [end, breaks] = record_end(text, start);
    if (first_cell_is(text.substr(start, end - start), first_cell)) {
      const std::string two_records =
          std::string(text.substr(0, header_end)) + "\n" + std::string(text.substr(start, end - start));
      CsvTable table = parse_csv(two_records, std::move(source));
      table.records.at(0).line = line;
      return table;
    }
    line += 1 + breaks;
    start = end + 1;
  }
  return std::nullopt;
}

std::string read_text_file(const std::filesystem::path& path) {
  return read_input_file(path, kMaxTextFileBytes, "text file");
}

CsvTable read_csv_file(const std::filesystem::path& path) { return parse_csv(read_text_file(path), path.string()); }

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

double cell_number(const CsvTable& table, const CsvTable::Record& record, std::string_view column) {
  const std::string& text = record.cells.at(table.column(column));
  const auto value = parse_double(text);
  if (!value) fail("{}:{}: column '{}' = '{}' is not a number", table.source, record.line, column, text);
  return *value;
}

double cell_positive(const CsvTable& table, const CsvTable::Record& record, std::string_view column) {
  const double value = cell_number(table, record, column);
  if (!(value > 0)) fail("{}:{}: column '{}' = {} is not positive", table.source, record.line, column, value);
  return value;
}

const std::string& cell_text(const CsvTable& table, const CsvTable::Record& record, std::string_view column) {
  return record.cells.at(table.column(column));
}

void check_record_width(const CsvTable& table, const CsvTable::Record& record) {
  if (record.cells.size() != table.header.size())
    fail("{}:{}: {} cells, the header has {}", table.source, record.line, record.cells.size(), table.header.size());
}

}  // namespace llmco2
