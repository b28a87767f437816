// trace/trace_stream.h - a request log file accounted as it is read, in memory independent of its length: a survey
// pass (distinct shapes with their counts, arrivals in 30-day bins for the time outliers, skipped lines), the shape
// table predicted once, then an accounting pass over the file that looks each request's figures up in a per-shape
// memo, adds up exactly, bins the timeline and streams the per-request CSV. Both passes are split over threads; the
// results do not depend on their number, and equal account_trace's (the plain path) to the last bit.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "trace/module.h"
#include "trace/trace_account.h"

namespace llmco2::trace {

struct TraceFileOptions {
  int threads = 1;                     // workers; 0: every core
  bool keep_time_outliers = false;     // else requests dated over 30 days from the bulk are dropped and named
  std::filesystem::path requests_csv;  // the per-request CSV (written atomically), or empty
};

// The account of the log at `path` on `base` (as account_trace over read_request_log and drop_time_outliers).
// Throws Error naming the file when it cannot be read, is not a log or holds no good request.
TraceAccount account_trace_file(const std::filesystem::path& path, const Predictor& predictor,
                                const PredictorInput& base, const CarbonInputs& carbon, const TraceOptions& options,
                                const TraceFileOptions& file_options);

// A log reduced to its distinct shapes and how many requests have each (time outliers dropped unless kept): all
// that the totals and distributions of any setup need.
struct ShapeCount {
  Shape shape;
  long count = 0;
};
// The mean prompt + output tokens of the requests counted in `shapes`; 0 when none.
double mean_context_tokens(const std::vector<ShapeCount>& shapes);
struct TraceFile {
  std::string source, format;                 // the path; "azure" or "dataset"
  long time_outliers = 0;                     // requests dropped as time outliers (counted in skipped_lines)
  std::vector<SkippedLine> outlier_examples;  // those named among the skipped lines
};
struct LogShapes {
  TraceFile file;
  std::vector<ShapeCount> shapes;  // ordered by (prompt, gen)
  long requests = 0, skipped_lines = 0;
  std::vector<SkippedLine> skipped_examples;
};
LogShapes survey_log_shapes(const std::filesystem::path& path, const TraceFileOptions& options, bool progress);

// Totals and distributions of the requests of `shapes` on `base` (no timeline; skipped_shapes counted, not named).
TraceAccount account_shapes(const std::vector<ShapeCount>& shapes, const Predictor& predictor,
                            const PredictorInput& base, const CarbonInputs& carbon, const TraceOptions& options);

}  // namespace llmco2::trace
