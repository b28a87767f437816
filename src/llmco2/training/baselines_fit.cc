// training/baselines_fit.cc - LLMCarbon's utilisation and DeepEn's forests.
#include "training/baselines_fit.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "predictor/deepen.h"
#include "predictor/predictor.h"
#include "predictor/xgboost_library.h"

namespace llmco2::training {
namespace {

struct KernelTable {
  std::vector<float> features, labels;
  long rows() const { return static_cast<long>(labels.size()); }
};

// Adds the example's kernels with labels log(share of `phase_values` or of `total`).
void add_kernels(KernelTable& table, const std::vector<KernelRow>& kernels, const Targets& t, int prefill_output,
                 int decode_output, bool total_known, float log_total) {
  const bool phases = t.phase_known[prefill_output] && (t.phase_known[decode_output] || kernels.back().prefill);
  if (!phases && !total_known) return;
  double time[2] = {0, 0};
  for (const auto& k : kernels) time[k.prefill ? 0 : 1] += k.repeats * k.roofline_time_s;
  for (const auto& k : kernels) {
    const int p = k.prefill ? 0 : 1;
    double value, share_of;
    if (phases) {
      value = std::exp(static_cast<double>(t.log_phase[p == 0 ? prefill_output : decode_output]));
      share_of = time[p];
    } else {
      value = std::exp(static_cast<double>(log_total));
      share_of = time[0] + time[1];
    }
    const double share = std::max(k.roofline_time_s / std::max(share_of, 1e-30), 1e-12);
    table.features.insert(table.features.end(), k.features.begin(), k.features.end());
    table.labels.push_back(static_cast<float>(std::log(value * share)));
  }
}

std::string train_forest(const KernelTable& table, const DeepEnOptions& o) {
  if (table.rows() == 0) fail("DeepEn: no kernel rows to train on");
  const XgboostApi& xgb = xgboost_api();
  DMatrixHandle matrix = nullptr;
  check_xgboost(xgb.dmatrix_create_from_mat(table.features.data(), static_cast<bst_ulong>(table.rows()),
                                            static_cast<bst_ulong>(deepen_feature_count()), std::nanf(""), &matrix),
                "matrix");
  check_xgboost(xgb.dmatrix_set_float_info(matrix, "label", table.labels.data(), static_cast<bst_ulong>(table.rows())),
                "labels");
  BoosterHandle booster = nullptr;
  check_xgboost(xgb.booster_create(&matrix, 1, &booster), "booster");
  const std::vector<std::pair<std::string, std::string>> params = {{"booster", "gbtree"},
                                                                   {"objective", "reg:squarederror"},
                                                                   {"tree_method", "hist"},
                                                                   {"num_parallel_tree", std::to_string(o.trees)},
                                                                   {"max_depth", std::to_string(o.max_depth)},
                                                                   {"subsample", fmt::format("{}", o.subsample)},
                                                                   {"colsample_bynode", fmt::format("{}", o.colsample)},
                                                                   {"learning_rate", "1"},
                                                                   {"seed", std::to_string(o.seed)},
                                                                   {"nthread", std::to_string(o.threads)},
                                                                   {"verbosity", "0"}};
  for (const auto& [key, value] : params)
    check_xgboost(xgb.booster_set_param(booster, key.c_str(), value.c_str()), "param");
  check_xgboost(xgb.booster_update_one_iter(booster, 0, matrix), "train");
  bst_ulong length = 0;
  const char* raw = nullptr;
  check_xgboost(xgb.booster_save_model_to_buffer(booster, R"({"format": "ubj"})", &length, &raw), "save");
  std::string model(raw, length);
  xgb.booster_free(booster);
  xgb.dmatrix_free(matrix);
  return model;
}

}  // namespace

double fit_llmcarbon_utilisation(const std::vector<const Example*>& examples) {
  if (examples.empty()) fail("LLMCarbon: no examples to fit its utilisation on");
  const auto at_full = make_llmcarbon_predictor(1.0);
  double log_sum = 0;
  long count = 0;
  for (const auto* e : examples) {
    const double predicted = *at_full->predict(e->config).energy_j.total;
    if (predicted <= 0) continue;
    log_sum += std::log(predicted) - e->targets.log_energy_total;
    ++count;
  }
  return std::clamp(std::exp(log_sum / static_cast<double>(std::max(count, 1L))), 1e-4, 1.0);
}

ModelFile llmcarbon_model_file(double utilisation) {
  ModelFile f;
  f.header = {{"kind", "llmcarbon"}, {"utilisation", utilisation}};
  return f;
}

ModelFile fit_deepen(const std::vector<const Example*>& examples, const DeepEnOptions& o) {
  KernelTable energy, latency;
  for (const auto* e : examples) {
    const auto kernels = deepen_kernel_rows(e->config);
    const Targets& t = e->targets;
    add_kernels(energy, kernels, t, energy_prefill, energy_decode, t.energy_total_known, t.log_energy_total);
    add_kernels(latency, kernels, t, latency_prefill, latency_decode, t.latency_total_known, t.log_latency_total);
  }
  ModelFile f;
  f.header = {{"kind", "deepen"},
              {"feature_count", deepen_feature_count()},
              {"trees", o.trees},
              {"max_depth", o.max_depth},
              {"examples", examples.size()},
              {"kernel_rows", energy.rows()}};
  f.blobs["energy_forest"] = train_forest(energy, o);
  f.blobs["latency_forest"] = train_forest(latency, o);
  return f;
}

}  // namespace llmco2::training
