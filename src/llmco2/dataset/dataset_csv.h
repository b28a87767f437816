// dataset/dataset_csv.h - the dataset CSV format (docs/data.md): writing rows, and reading them with per-row
// validation.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/csv.h"
#include "dataset/module.h"
#include "dataset/record.h"

namespace llmco2::dataset {

// A row that was not kept, and why: "<file>:<line>: <reason>".
struct RowReject {
  std::string file;
  long line = 0;
  std::string reason;
  std::string message() const;
};

struct DatasetReadResult {
  std::vector<DatasetRow> rows;
  std::vector<RowReject> rejects;
};

// The columns of the format, in the order they are written.
const std::vector<std::string>& dataset_columns();

// Checks one row's values (counts positive, energies non-negative, totals consistent, caveats known).
// Returns the reason it is invalid, or "" when it is valid.
std::string validate_row(const DatasetRow& row);

// Parses a dataset file. Missing required columns are an error for the whole file (throws Error);
// a bad row is rejected with its line and reason and the rest are kept.
DatasetReadResult read_dataset(const std::filesystem::path& path);
DatasetReadResult parse_dataset(const CsvTable& table);

// The CSV text of `rows` with the header; write_dataset writes it atomically.
std::string dataset_to_csv(const std::vector<DatasetRow>& rows);
void write_dataset(const std::filesystem::path& path, const std::vector<DatasetRow>& rows);

// Every dataset CSV of a folder (data/measured) except the importers' *.rejects.csv and model_map.csv, sorted by
// name. Throws Error when there is none.
std::vector<std::filesystem::path> dataset_files(const std::filesystem::path& dir);

// The rows (and rejects) of every dataset CSV of the folder, in file order.
DatasetReadResult read_dataset_folder(const std::filesystem::path& dir);

// An importer's refusals (<source>.rejects.csv beside <source>.csv: file, line, reason), written atomically and read
// back for the calibration report.
void write_import_rejects(const std::filesystem::path& path, const std::vector<RowReject>& rejects);
// The refusals of every <source>.rejects.csv of the folder, keyed by source (empty when a source has none).
std::map<std::string, std::vector<RowReject>> read_import_rejects(const std::filesystem::path& dir);
// A reason without its row-specific detail (parenthesised parts dropped, numbers as N), to count reasons alike.
std::string reason_class(const std::string& reason);

}  // namespace llmco2::dataset
