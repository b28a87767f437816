// core/csv.h - reading and writing CSV (RFC 4180 quoting) with the file and line of every record.
#pragma once

#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmco2 {

// One CSV file: a header and records, each record remembering the line it started on.
struct CsvTable {
  std::string source;  // the path, for messages
  std::vector<std::string> header;
  struct Record {
    long line = 0;  // 1-based line of the file where the record starts
    std::vector<std::string> cells;
  };
  std::vector<Record> records;

  // Index of `column` in the header, or nullopt.
  std::optional<size_t> find_column(std::string_view column) const;
  // Index of `column`; throws Error "<source>: missing column '<column>'" when absent.
  size_t column(std::string_view column) const;
};

// Reads CSV records one at a time from a stream (memory: one record) or from text in memory (parse_csv: no stream
// call per character), with the same quoting rules as parse_csv.
class CsvReader {
 public:
  CsvReader(std::istream& in, std::string source);
  CsvReader(std::string_view text, std::string source);  // `text` must outlive the reader
  // The next record (the first one is the header line), or nullopt at the end. Throws Error on an unterminated quote.
  std::optional<CsvTable::Record> next();
  const std::string& source() const { return source_; }

 private:
  int get();
  int peek();
  size_t take_run(std::string& cell, bool quoted);
  void skip_bom();
  std::istream* in_ = nullptr;
  std::string_view text_;  // read from here when in_ is null
  size_t at_ = 0;
  std::string source_;
  long line_ = 1;
  bool bom_checked_ = false;
};

// Parses CSV text. Quoted fields may hold commas, quotes ("") and newlines. Throws Error on an unterminated quote.
CsvTable parse_csv(std::string_view text, std::string source);
// The header of `text` and the first record whose first cell is `first_cell` in any ASCII case, that record keeping
// its own line; nullopt when no record's first cell is. For a reader that needs one row of a large table: the other
// records are stepped over, not parsed (quote-aware: a quoted cell may hold line breaks; a quoted first cell never
// matches, so such a table is read whole by its caller's fallback).
std::optional<CsvTable> parse_csv_row(std::string_view text, std::string source, std::string_view first_cell);
// Reads and parses a CSV file; throws Error naming the file when it cannot be read.
CsvTable read_csv_file(const std::filesystem::path& path);
// The number in `column` of `record`; throws Error "<source>:<line>: column '<column>' = '<text>' is not a number"
// (or naming the missing column).
double cell_number(const CsvTable& table, const CsvTable::Record& record, std::string_view column);
// The same, which must be > 0: "<source>:<line>: column '<column>' = <value> is not positive" otherwise.
double cell_positive(const CsvTable& table, const CsvTable::Record& record, std::string_view column);
// The text of a record's cell in `column` (which must exist).
const std::string& cell_text(const CsvTable& table, const CsvTable::Record& record, std::string_view column);
// Throws Error "<source>:<line>: N cells, the header has M" unless the record is as wide as the header.
void check_record_width(const CsvTable& table, const CsvTable::Record& record);

// Quotes a cell when it needs it (comma, quote, newline, leading/trailing space).
std::string csv_escape(std::string_view cell);
// Appends one record with a trailing newline.
void append_csv_record(std::string& out, const std::vector<std::string>& cells);

// The whole of `text` as a finite number, or nullopt (empty, other characters, inf or nan).
std::optional<double> parse_double(std::string_view text);
// The whole of `text` as a whole number written without a fraction ("12", not "12.0"), or nullopt.
std::optional<long> parse_long(std::string_view text);

// Reads the whole file as text; throws Error naming the file.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace llmco2
