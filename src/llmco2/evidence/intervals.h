// evidence/intervals.h - intervals from held-out residuals of the same kind: split conformal prediction per evidence
// label (Mondrian conformal), over the leave-one-source-out and leave-one-GPU-out residuals of every public source
// (`llmco2 validate` computes them and writes data/evidence/intervals.json). A prediction P of a request labelled L
// gets [P x lower, P x upper], the quantiles of measured / predicted among held-out rows labelled L, each source
// weighted equally; the median of that ratio is the bias its kind showed, stated beside the figure.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "evidence/evidence.h"
#include "evidence/module.h"

namespace llmco2::evidence {

// One held-out prediction of a measured row: its label as the held-out study saw it, its source, measured/predicted.
struct HeldOutResidual {
  EvidenceLabel label = EvidenceLabel::extrapolated;
  std::string source;
  double ratio = 1;
};

struct RatioInterval {
  size_t n = 0, sources = 0;    // residuals and sources it rests on
  double lower = 1, upper = 1;  // the interval [P x lower, P x upper]
  double median = 1;            // median measured / predicted of its residuals: the bias of its kind
  std::string pooled_with;      // labels whose residuals it shares because it had too few of its own; "" if none
};

// A label with fewer residuals than this, or from fewer than two sources, shares the next worse label's (then the
// next better's) residuals.
inline constexpr size_t kMinResiduals = 30;

using LabelIntervals = std::map<EvidenceLabel, RatioInterval>;

// Per label, the (1 - level) / 2 and (1 + level) / 2 quantiles of the residuals' ratios (each source's residuals
// weighing 1 / sources in all, a source's rows equally), pooled where too few, then nested: a less evidenced label's
// interval holds the better evidenced one's (an extrapolation is never surer than an interpolation). Labels without
// any residual, even pooled, are absent.
LabelIntervals fit_label_intervals(const std::vector<HeldOutResidual>& residuals, double level);
// Whether [lower, upper] holds `ratio`.
bool covers(const RatioInterval& interval, double ratio);

// The regime of a request: its batch and context bands (evidence.h) capped at 2, i.e. batch 1-3, 4-15 or 16 and
// more; context below 1k, 1k-4k or 4k and more.
struct Regime {
  int batch = 0, context = 0;
  auto operator<=>(const Regime&) const = default;
};
inline constexpr int kRegimeBands = 3;
Regime regime_of(const EvidenceKey& key);
std::string regime_name(const Regime& regime);  // "batch 16+, context <1k"

// How a label's interval fared on the held-out rows of one regime, each source's rows judged by intervals fitted
// without that source (cross-conformal). Intervals fitted per label and regime covered new sources worse than one per
// label (docs/carbon.md, "Intervals": each cell rests on two or three sources), so the interval is the label's, and its
// held-out coverage in the request's regime is stated beside it.
struct RegimeCoverage {
  size_t n = 0, sources = 0;  // held-out rows judged, and their sources
  double covered = 0;         // share of them inside their interval
};
using RegimeCoverages = std::map<std::pair<EvidenceLabel, Regime>, RegimeCoverage>;

struct EvidenceIntervals {
  double level = 0.8;
  std::string basis;  // what the residuals are: "leave-one-source-out and leave-one-GPU-out, 7 sources, ..."
  LabelIntervals energy, latency;
  RegimeCoverages energy_coverage, latency_coverage;  // absent regimes: no held-out row of that label there
};

// data/evidence/intervals.json. Reading throws Error naming the file and key; writing is atomic.
EvidenceIntervals read_evidence_intervals(const std::filesystem::path& path);
void write_evidence_intervals(const std::filesystem::path& path, const EvidenceIntervals& intervals);
std::filesystem::path default_evidence_intervals_path();  // data_dir()/evidence/intervals.json

// "80% interval x0.74-x1.31 of the prediction, from 412 held-out rows of 5 sources labelled interpolated; they
// measured 1.04x the prediction in the median"
std::string interval_sentence(const RatioInterval& interval, double level, EvidenceLabel label);
// "held out, it covered 45% of 94 rows (2 sources) in this regime (batch 1-3, context 4k+)"
std::string coverage_sentence(const RegimeCoverage& coverage, const Regime& regime);

}  // namespace llmco2::evidence
