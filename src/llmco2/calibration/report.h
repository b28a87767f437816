// calibration/report.h - the calibration report (docs/calibration.md) with predicted-vs-measured plots.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/module.h"
#include "dataset/dataset_csv.h"

namespace llmco2::calibration {

struct CalibrationReport {
  const CalibrationSet* set = nullptr;
  std::vector<RowReject> read_rejects;                           // rows the dataset reader refused
  std::map<std::string, std::vector<RowReject>> import_rejects;  // per source, rows its importer refused
  std::vector<SimEstimate> fit;                                  // per sample, parameters fitted on all sources
  std::vector<SimEstimate> leave_one_out;      // per sample, parameters fitted without the sample's source
  std::vector<SimEstimate> leave_one_gpu_out;  // per sample, parameters fitted without any row of the sample's GPU type
  std::vector<std::string> at_bounds;          // fitted parameters that ended at an end of their range
  SimParams params;                            // fitted on all sources (shipped)
  double seconds = 0;                          // wall time of the whole calibration
  std::string command;                         // how to reproduce it
  // Sections written by later layers (the whole-node validation needs the serving simulation), placed after the
  // accuracy tables, each a complete markdown section.
  std::vector<std::string> appendix;
};

// Writes the markdown report and, when gnuplot is installed, energy.svg and latency.svg into `plot_dir`
// (log-log predicted vs measured, one colour per source). Returns a warning, or "" when all was written.
std::string write_calibration_report(const CalibrationReport& report, const std::filesystem::path& markdown,
                                     const std::filesystem::path& plot_dir);

// Writes one CSV line per simulatable row: the row's identity, the measured energy and latency, and the fitted and
// held-out predictions (empty where a held-out fit was not run), so that a source's errors can be studied by row.
void write_calibration_rows(const CalibrationReport& report, const std::filesystem::path& csv);

}  // namespace llmco2::calibration
