// predictor/error_band.h - how far a predictor's answers fall from real measurements held out of its training: the
// factor f within which 80% of its predictions fell (max(measured/predicted, predicted/measured) at the 80th
// percentile), which turns a prediction P into the interval [P / f, P x f]; and, for the record, the percentiles of
// measured / predicted (its bias). `llmco2 eval` writes them (data/predictors/error_bands.json); `predict` and
// `trace` read them.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "predictor/module.h"

namespace llmco2::predictor {

struct ErrorBand {
  size_t n = 0;             // measurements it was computed on
  double factor = 1;        // 80th percentile of max(measured/predicted, predicted/measured): the interval's half-width
  double low_ratio = 1;     // 10th percentile of measured / predicted
  double median_ratio = 1;  // the predictor's bias on these measurements
  double high_ratio = 1;    // 90th percentile
  // When set (upper > 0), the interval is [P x lower, P x upper] instead of [P / factor, P x factor]: the evidence
  // intervals (evidence/intervals.h), asymmetric where the held-out rows of a request's kind show a bias.
  double lower = 0, upper = 0;
};

struct PredictorErrorBands {
  std::optional<ErrorBand> energy, latency;
};

struct ErrorBands {
  double level = 0.8;        // the interval's nominal coverage
  std::string evaluated_on;  // which held-out measurements, e.g. "mlenergy-v2 (llmco2 eval test set (b))"
  std::map<std::string, PredictorErrorBands> predictors;  // by predictor name
};

// The interval a band puts around a predicted `value`: [value x lower, value x upper] when the band has them, else
// [value / factor, value x factor].
struct BandSpan {
  double low = 0, high = 0;
};
BandSpan band_span(const ErrorBand& band, double value);

// The band of (measured, predicted) pairs with both positive; nullopt when fewer than `min_pairs` remain. Percentiles
// interpolate linearly between order statistics.
std::optional<ErrorBand> error_band(const std::vector<double>& measured, const std::vector<double>& predicted,
                                    size_t min_pairs = 20);

ErrorBands read_error_bands(const std::filesystem::path& path);                      // throws Error naming file and key
void write_error_bands(const std::filesystem::path& path, const ErrorBands& bands);  // atomic
std::filesystem::path default_error_bands_path();  // data_dir()/predictors/error_bands.json

}  // namespace llmco2::predictor
