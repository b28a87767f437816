// training/training_set.cc - rows to examples.
#include "training/training_set.h"

#include <cmath>
#include <iostream>

#include "core/error.h"
#include "core/progress.h"
#include "sim/label.h"

namespace llmco2::training {
namespace {

void set_phase(Targets& t, int output, const std::optional<double>& value) {
  if (value && *value > 0) {
    t.log_phase[output] = static_cast<float>(std::log(*value));
    t.phase_known[output] = true;
  }
}

Targets targets_of(const DatasetRow& row, bool has_decode) {
  Targets t;
  set_phase(t, energy_prefill, row.energy_j.prefill);
  set_phase(t, latency_prefill, row.latency_s.prefill);
  if (has_decode) {
    set_phase(t, energy_decode, row.energy_j.decode);
    set_phase(t, latency_decode, row.latency_s.decode);
  }
  if (const auto e = row.energy_j.total_or_sum(); e && *e > 0) {
    t.log_energy_total = static_cast<float>(std::log(*e));
    t.energy_total_known = true;
  }
  if (const auto l = row.latency_s.total_or_sum(); l && *l > 0) {
    t.log_latency_total = static_cast<float>(std::log(*l));
    t.latency_total_known = true;
  }
  return t;
}

}  // namespace

ExampleSet make_examples(const std::vector<DatasetRow>& rows, FeatureSet features, const SimParams& params,
                         bool progress) {
  ExampleSet set;
  set.features = features;
  CatalogCache catalogs;
  Progress bar("encode", static_cast<long>(rows.size()), progress);
  for (size_t i = 0; i < rows.size(); ++i) {
    const DatasetRow& row = rows[i];
    bar.update(static_cast<long>(i + 1));
    if (const std::string why = row.why_not_a_label(); !why.empty()) {
      set.skipped.push_back({row.source_ref, 0, why});
      continue;
    }
    try {
      Example ex;
      ex.config = predictor_input(config_for_row(row, catalogs));
      ex.graph = encode_graph(ex.config, features, params);
      ex.targets = targets_of(row, ex.graph.has_decode);
      if (!ex.targets.energy_total_known) {
        set.skipped.push_back({row.source_ref, 0, "no energy"});
        continue;
      }
      ex.row = &row;
      set.examples.push_back(std::move(ex));
    } catch (const Error& e) {
      set.skipped.push_back({row.source_ref, 0, e.what()});
    }
  }
  bar.finish();
  return set;
}

std::vector<DatasetRow> read_datasets(const std::vector<std::string>& paths) {
  std::vector<DatasetRow> rows;
  for (const auto& path : paths) {
    DatasetReadResult result = read_dataset(path);
    for (const auto& reject : result.rejects) std::cerr << "rejected " << reject.message() << "\n";
    rows.insert(rows.end(), std::make_move_iterator(result.rows.begin()), std::make_move_iterator(result.rows.end()));
  }
  return rows;
}

}  // namespace llmco2::training
