// evaluation/report.h - the evaluation report: Markdown tables in the paper's layout (MAPE, EBA per family, the
// ablation) and predicted-vs-measured plots.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "evaluation/module.h"
#include "evaluation/scoring.h"

namespace llmco2::evaluation {

struct PredictorResult {
  std::string name;
  std::vector<Prediction> predictions;  // parallel to the test rows
  Score score;
  double fit_seconds = 0;
};

struct TestResult {
  std::string id;  // "a", "b": names the plot file
  std::string title;
  std::string description;  // Markdown: what is trained on, what is tested, and why
  std::vector<const DatasetRow*> rows;
  std::vector<PredictorResult> predictors;
};

struct AblationRow {
  std::string label;      // "no phase split (NNLQP)", ...
  std::string predictor;  // its name in the test results
};

struct EvalReport {
  std::vector<TestResult> tests;
  std::vector<AblationRow> ablation;
  std::string command;   // how to reproduce it
  std::string preamble;  // Markdown put before the tables
  double seconds = 0;
};

// Writes the Markdown report and one PNG scatter per test set into `plot_dir` (linked relative to the report). Returns
// a warning, or "" when everything was written.
std::string write_eval_report(const EvalReport& report, const std::filesystem::path& markdown,
                              const std::filesystem::path& plot_dir);

}  // namespace llmco2::evaluation
