// research/throughput_fit.cc - a generation's kernel efficiencies fitted to whole-node throughput runs, leave one
// round out.
#include "research/throughput_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/progress.h"

namespace llmco2::research {
namespace {

using Fields = std::vector<std::pair<const char*, double KernelEfficiency::*>>;
const Fields kComputeFields = kernel_efficiency_fields({"gemm_efficiency", "attention_efficiency", "mla_efficiency"});
const Fields kMemoryFields = kernel_efficiency_fields({"memory_efficiency"});

// The scales that keep every field of `fields` inside its range: [max lo / value, min hi / value].
std::pair<double, double> scale_bounds(const KernelEfficiency& start, const Fields& fields) {
  double lo = 0, hi = 1e9;
  for (const auto& [name, field] : fields) {
    const ParamRange& range = kernel_param_range(name);
    lo = std::max(lo, range.lo / (start.*field));
    hi = std::min(hi, range.hi / (start.*field));
  }
  if (!(lo <= hi)) fail("no scale keeps the {} fields of the starting entry inside their ranges", fields.size());
  return {lo, hi};
}

// The runs' squared log errors of Offline throughput. A Server or Interactive run's throughput is the rate it was
// offered, and its time per output token turns on how close to saturation the submitter ran it (the rate was raised
// until the latency limit was near): a capacity fit takes the saturated runs alone, and the others are scored.
double log_loss(const NodeValidation& v) {
  double sum = 0;
  long n = 0;
  for (const NodeValidationRow& r : v.rows)
    if (r.simulated_tokens_per_s > 0)
      sum += std::pow(std::log(r.simulated_tokens_per_s / r.measured_tokens_per_s), 2), ++n;
  if (n == 0) fail("no Offline run was replayed to fit on");
  return sum / static_cast<double>(n);
}

bool offline(const DatasetRow& r) { return r.note("scenario") == "Offline"; }

constexpr double kRatio = 0.6180339887498949;  // golden section
constexpr double kTolerance = 0.01;            // bracket width in log scale: 1%
constexpr int kSweeps = 2;                     // compute then memory, twice

class Fitter {
 public:
  Fitter(const std::vector<DatasetRow>& rows, const std::string& generation, const std::string& gpu,
         const SimParams& base)
      : rows_(rows), generation_(generation), gpu_(gpu), base_(base), start_(base.kernels.generation(generation)) {}

  NodeValidation replay(const std::function<bool(const DatasetRow&)>& chosen, const ThroughputScales& s) {
    SimParams params = base_;
    params.kernels.generations[generation_] = scaled_efficiency(start_, s);
    if (!gpu_.empty()) params.kernels.gpus[gpu_] = scaled_efficiency(start_, gpu_scales(s));
    check_interrupt();
    ++evaluations;
    if (progress_) progress_->update(evaluations);
    return validate_node_rows(rows_, chosen, params, false);
  }

  // Whether a fit on `runs` searches the corrected GPU's scale: only when its Offline runs include that GPU (else
  // the scale is not identified and stays the generation's).
  bool searches_gpu(const std::function<bool(const DatasetRow&)>& runs) const {
    return !gpu_.empty() && std::any_of(rows_.begin(), rows_.end(),
                                        [&](const DatasetRow& r) { return runs(r) && offline(r) && r.gpu == gpu_; });
  }

  // The replays one fit takes: each golden-section search evaluates 2 points, then one per narrowing of its bracket
  // to kTolerance; then one replay of the held-out or fitted runs.
  long evaluations_of(bool gpu_search) const {
    long per_sweep = 0;
    const auto compute = scale_bounds(start_, kComputeFields), memory = scale_bounds(start_, kMemoryFields);
    std::vector<std::pair<double, double>> searched = {compute, memory};
    if (gpu_search) searched.push_back(compute);
    for (const auto& bounds : searched) {
      const double width = std::log(bounds.second / bounds.first);
      per_sweep += 2 + static_cast<long>(std::max(0.0, std::ceil(std::log(kTolerance / width) / std::log(kRatio))));
    }
    return kSweeps * per_sweep + 1;
  }
  void show_progress(Progress* progress) { progress_ = progress; }

  // Golden-section search of one scale (in log space) with the others held, in turn, twice over. The corrected GPU's
  // scale is searched as its absolute compute scale (compute x gpu_compute), which its runs alone determine, and held
  // when the generation's compute scale moves, so that the searches do not pull against each other.
  ThroughputScales fit(const std::function<bool(const DatasetRow&)>& runs) {
    const auto chosen = [&](const DatasetRow& r) { return runs(r) && offline(r); };
    const auto compute = scale_bounds(start_, kComputeFields), memory = scale_bounds(start_, kMemoryFields);
    ThroughputScales s;
    s.compute = std::clamp(1.0, compute.first, compute.second), s.memory = std::clamp(1.0, memory.first, memory.second);
    double gpu_absolute = s.compute;
    const bool gpu_runs = searches_gpu(runs);
    for (int sweep = 0; sweep < kSweeps; ++sweep) {
      s.compute = golden(chosen, compute, [&](double v) { return ThroughputScales{v, s.memory, gpu_absolute / v}; });
      s.gpu_compute = gpu_absolute / s.compute;
      s.memory = golden(chosen, memory, [&](double v) { return ThroughputScales{s.compute, v, s.gpu_compute}; });
      if (!gpu_runs) continue;
      gpu_absolute = golden(chosen, compute, [&](double v) {
        return ThroughputScales{s.compute, s.memory, v / s.compute};
      });
      s.gpu_compute = gpu_absolute / s.compute;
    }
    if (!gpu_runs) s.gpu_compute = 1;
    return s;
  }

  const KernelEfficiency& start() const { return start_; }
  long evaluations = 0;

 private:
  // The value in `bounds` of the scale that `scales_at` places, by golden-section search in log space.
  template <typename Chosen, typename ScalesAt>
  double golden(const Chosen& chosen, std::pair<double, double> bounds, const ScalesAt& scales_at) {
    double a = std::log(bounds.first), b = std::log(bounds.second);
    const auto loss = [&](double x) { return log_loss(replay(chosen, scales_at(std::exp(x)))); };
    double c = b - kRatio * (b - a), d = a + kRatio * (b - a), fc = loss(c), fd = loss(d);
    while (b - a > kTolerance) {
      if (fc < fd) {
        b = d, d = c, fd = fc, c = b - kRatio * (b - a), fc = loss(c);
      } else {
        a = c, c = d, fc = fd, d = a + kRatio * (b - a), fd = loss(d);
      }
    }
    return std::exp((a + b) / 2);
  }

  const std::vector<DatasetRow>& rows_;
  std::string generation_, gpu_;
  const SimParams& base_;
  KernelEfficiency start_;
  Progress* progress_ = nullptr;
};

}  // namespace

ThroughputScales gpu_scales(const ThroughputScales& s) { return {s.compute * s.gpu_compute, s.memory, 1}; }

KernelEfficiency scaled_efficiency(const KernelEfficiency& start, const ThroughputScales& scales) {
  KernelEfficiency e = start;
  for (const auto& [fields, scale] : {std::pair{&kComputeFields, scales.compute}, {&kMemoryFields, scales.memory}})
    for (const auto& [name, field] : *fields) {
      const ParamRange& range = kernel_param_range(name);
      e.*field = std::clamp(start.*field * scale, range.lo, range.hi);
    }
  return e;
}

ThroughputFit fit_generation_on_throughput(const std::vector<DatasetRow>& rows, const std::string& source,
                                           const std::string& generation, const std::string& gpu, const SimParams& base,
                                           bool progress) {
  ThroughputFit out;
  out.generation = generation, out.source = source, out.gpu = gpu;
  Fitter fitter(rows, generation, gpu, base);
  out.start = fitter.start();
  const auto of_source = [&](const DatasetRow& r) {
    return r.source == source && !r.has_caveat("run_settings_unknown");
  };
  std::vector<std::string> rounds;
  for (const DatasetRow& r : rows)
    if (of_source(r) && std::find(rounds.begin(), rounds.end(), r.note("round")) == rounds.end())
      rounds.push_back(r.note("round"));
  if (rounds.empty()) fail("{}: no node-scope run with its settings to fit {} on", source, generation);
  if (rounds.size() < 2) rounds.clear();  // one round: nothing to fit without it
  const auto without = [&](const std::string& round) {
    return std::function<bool(const DatasetRow&)>(
        [&, round](const DatasetRow& r) { return of_source(r) && r.note("round") != round; });
  };
  long planned = fitter.evaluations_of(fitter.searches_gpu(of_source));
  for (const std::string& round : rounds) planned += fitter.evaluations_of(fitter.searches_gpu(without(round)));
  Progress bar(fmt::format("fitting {} on {} runs", generation, source), planned, progress);
  fitter.show_progress(&bar);
  for (const std::string& round : rounds) {
    const ThroughputScales s = fitter.fit(without(round));
    out.round_scales.emplace_back(round, s);
    NodeValidation v = fitter.replay([&](const DatasetRow& r) { return of_source(r) && r.note("round") == round; }, s);
    out.round_scores.push_back({round, node_throughput_accuracy(v.rows), node_tpot_accuracy(v.rows)});
    out.held_out.rows.insert(out.held_out.rows.end(), v.rows.begin(), v.rows.end());
    out.held_out.skipped.insert(out.held_out.skipped.end(), v.skipped.begin(), v.skipped.end());
  }
  out.scales = fitter.fit(of_source);
  out.efficiency = scaled_efficiency(out.start, out.scales);
  if (!gpu.empty()) out.gpu_efficiency = scaled_efficiency(out.start, gpu_scales(out.scales));
  out.fitted = fitter.replay(of_source, out.scales);
  out.evaluations = fitter.evaluations;
  bar.finish();
  return out;
}

std::string throughput_fit_markdown(const ThroughputFit& fit) {
  const std::string gpu = fit.gpu.empty() ? "-" : fit.gpu;
  std::string out = fmt::format(
      "## {} from whole-node throughput ({})\n\n"
      "No kernel table covers this generation. Its matrix-core efficiencies (GEMM, fused attention, MLA: one scale) "
      "and its DRAM streaming efficiency (a second scale) are fitted, from the NVIDIA generations' mean entry, to the "
      "throughput of the source's Offline runs, replayed at node scope as they ran (docs/node-energy.md); {} has a "
      "compute scale of its own on top (kernels.json \"gpus\"). Every scale stays where each field it moves is inside "
      "its range. Server and Interactive runs are not fitted (their throughput is the rate offered; their time per "
      "output token turns on how close to saturation the submitter ran them) but scored. Held out: each round's runs "
      "under the scales fitted without that round. {} replays in all.\n\n"
      "| fitted on | compute scale | memory scale | {} compute scale | gemm_efficiency | attention_efficiency | "
      "memory_efficiency | {} gemm_efficiency |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
      fit.generation, fit.source, gpu, fit.evaluations, gpu, gpu);
  const auto line = [&](const std::string& what, const ThroughputScales& s) {
    const KernelEfficiency e = scaled_efficiency(fit.start, s), g = scaled_efficiency(fit.start, gpu_scales(s));
    return fmt::format("| {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n", what, s.compute,
                       s.memory, s.gpu_compute, e.gemm_efficiency, e.attention_efficiency, e.memory_efficiency,
                       g.gemm_efficiency);
  };
  out += line("start (NVIDIA mean)", ThroughputScales{});
  for (const auto& [round, s] : fit.round_scales) out += line("every round but " + round, s);
  out += line("every round (kernels.json)", fit.scales);
  out +=
      "\n| round held out | Offline runs | throughput MAPE | bias | Server and Interactive runs | TPOT MAPE | bias |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : fit.round_scores)
    out += fmt::format("| {} | {} | {:.1f} | x{:.2f} | {} | {:.1f} | x{:.2f} |\n", r.round, r.throughput.n,
                       100 * r.throughput.mape, r.throughput.bias, r.tpot.n, 100 * r.tpot.mape, r.tpot.bias);
  out += "\n### Each round held out\n\n" +
         node_validation_markdown(fit.held_out, fit.source, "the scales fitted without the run's round") +
         "\n### Fitted on every round\n\n" +
         node_validation_markdown(fit.fitted, fit.source, "the scales fitted on every round");
  return out;
}

}  // namespace llmco2::research
