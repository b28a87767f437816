// measured/importer.h - importers that convert public measurements into the dataset format, keeping their caveats.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "dataset/dataset_csv.h"
#include "measured/module.h"

namespace llmco2::measured {

struct ImportResult {
  std::vector<DatasetRow> rows;
  std::vector<RowReject> rejects;  // source rows not converted, each with its file, line and reason
};

struct Importer {
  std::string id;                                                        // `llmco2 import <id>`
  std::string folder;                                                    // its folder under ../shared/data/measured
  std::string summary;                                                   // what the source measured, in one line
  std::function<ImportResult(const std::filesystem::path& folder)> run;  // empty: not importable (see summary)
};

// Every source in ../shared/data/measured, importable or not (with the reason).
const std::vector<Importer>& importers();
const Importer& find_importer(const std::string& id);  // throws Error naming the known ids

}  // namespace llmco2::measured
