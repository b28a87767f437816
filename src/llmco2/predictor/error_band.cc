// predictor/error_band.cc - error bands from held-out measurements, and their file.
#include "predictor/error_band.h"

#include <algorithm>

#include "core/error.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "core/statistics.h"

namespace llmco2::predictor {
namespace {

Json band_json(const ErrorBand& b) {
  return {{"n", b.n},
          {"factor", b.factor},
          {"low_ratio", b.low_ratio},
          {"median_ratio", b.median_ratio},
          {"high_ratio", b.high_ratio}};
}

ErrorBand band_from(const Json& json, const std::string& source) {
  const JsonReader r(json, source);
  ErrorBand b;
  b.n = static_cast<size_t>(r.positive_number("n"));
  b.factor = r.positive_number("factor");
  if (b.factor < 1) fail("{}: key 'factor' must be at least 1, got {}", source, b.factor);
  b.low_ratio = r.positive_number("low_ratio");
  b.median_ratio = r.positive_number("median_ratio");
  b.high_ratio = r.positive_number("high_ratio");
  if (!(b.low_ratio <= b.median_ratio && b.median_ratio <= b.high_ratio))
    fail("{}: expected low_ratio <= median_ratio <= high_ratio", source);
  return b;
}

}  // namespace

BandSpan band_span(const ErrorBand& band, double value) {
  if (band.upper > 0) return {value * band.lower, value * band.upper};
  return {value / band.factor, value * band.factor};
}

std::optional<ErrorBand> error_band(const std::vector<double>& measured, const std::vector<double>& predicted,
                                    size_t min_pairs) {
  std::vector<double> ratios, factors;
  for (size_t i = 0; i < measured.size() && i < predicted.size(); ++i)
    if (measured[i] > 0 && predicted[i] > 0) {
      ratios.push_back(measured[i] / predicted[i]);
      factors.push_back(std::max(ratios.back(), 1.0 / ratios.back()));
    }
  if (ratios.size() < min_pairs || ratios.empty()) return std::nullopt;
  return ErrorBand{ratios.size(), percentile(factors, 0.8), percentile(ratios, 0.1), percentile(ratios, 0.5),
                   percentile(ratios, 0.9)};
}

ErrorBands read_error_bands(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  const std::string source = path.string();
  const JsonReader r(json, source);
  ErrorBands bands;
  bands.level = r.positive_number("level");
  bands.evaluated_on = r.string("evaluated_on");
  const Json& predictors = r.at("predictors");
  if (!predictors.is_object()) fail("{}: key 'predictors' must be an object", source);
  for (const auto& [name, entry] : predictors.items()) {
    const JsonReader e(entry, source + ": predictors." + name);
    PredictorErrorBands p;
    if (e.has("energy")) p.energy = band_from(e.at("energy"), e.source() + ".energy");
    if (e.has("latency")) p.latency = band_from(e.at("latency"), e.source() + ".latency");
    bands.predictors[name] = p;
  }
  return bands;
}

void write_error_bands(const std::filesystem::path& path, const ErrorBands& bands) {
  Json predictors = Json::object();
  for (const auto& [name, p] : bands.predictors) {
    Json entry = Json::object();
    if (p.energy) entry["energy"] = band_json(*p.energy);
    if (p.latency) entry["latency"] = band_json(*p.latency);
    predictors[name] = entry;
  }
  const Json json = {{"level", bands.level}, {"evaluated_on", bands.evaluated_on}, {"predictors", predictors}};
  write_file_atomic(path, json.dump(2) + "\n");
}

std::filesystem::path default_error_bands_path() { return data_dir() / "predictors" / "error_bands.json"; }

}  // namespace llmco2::predictor
