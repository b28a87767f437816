// research/throughput_fit.h - an architecture generation's kernel efficiencies fitted to whole-node runs where no
// kernel table exists (AMD CDNA 3: MLPerf's MI300X and MI325X results, docs/kernel-fit.md), scored leave one round
// out.
#pragma once

#include <string>
#include <vector>

#include "evaluation/node_validation.h"
#include "research/module.h"

namespace llmco2::research {

// Two scales over the generation's starting entry (the NVIDIA generations' mean, "default"): `compute` multiplies
// the matrix cores' efficiencies (GEMM, fused attention, MLA), `memory` the DRAM streaming efficiency. Each scale is
// kept so that every field it moves stays inside its documented range (sim/kernel_time.h kernel_param_ranges).
struct ThroughputScales {
  double compute = 1, memory = 1;
  double gpu_compute = 1;  // the corrected GPU's compute scale over the generation's (ThroughputFit::gpu)
};
// The corrected GPU's own scales: compute x gpu_compute, the generation's memory scale.
ThroughputScales gpu_scales(const ThroughputScales& s);

struct ThroughputFit {
  std::string generation, source;
  std::string gpu;                  // a GPU with its own compute scale ("" for none)
  KernelEfficiency start;           // the entry the scales multiply
  ThroughputScales scales;          // fitted on every round
  KernelEfficiency efficiency;      // start x scales: what kernels.json gets
  KernelEfficiency gpu_efficiency;  // start x gpu_scales(scales): kernels.json's entry for `gpu`
  NodeValidation fitted;            // every round under the fit on every round
  NodeValidation held_out;          // each round under the fit without it
  std::vector<std::pair<std::string, ThroughputScales>> round_scales;  // the fit without each round
  struct RoundScore {
    std::string round;
    Accuracy throughput, tpot;  // its Offline runs' throughput and its Server/Interactive runs' mean TPOT, held out
  };
  std::vector<RoundScore> round_scores;
  long evaluations = 0;  // replays of the whole training set, all fits
};

// The efficiency `start` scaled, each field clamped to its range.
KernelEfficiency scaled_efficiency(const KernelEfficiency& start, const ThroughputScales& scales);

// Fits `generation`'s entry of base.kernels to the rows of `source` (node-scope throughput rows: the throughput of its
// Offline runs, in log space), with a compute scale of its own for `gpu` (unless empty), and again without each round
// (the note "round") to score every run, Server and Interactive TPOT included, when there are two rounds or more.
ThroughputFit fit_generation_on_throughput(const std::vector<DatasetRow>& rows, const std::string& source,
                                           const std::string& generation, const std::string& gpu, const SimParams& base,
                                           bool progress);

// The report section for docs/kernel-fit.md.
std::string throughput_fit_markdown(const ThroughputFit& fit);

}  // namespace llmco2::research
