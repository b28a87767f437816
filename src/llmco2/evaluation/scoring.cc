// evaluation/scoring.cc - per-family accuracy.
#include "evaluation/scoring.h"

#include "core/csv.h"
#include "core/paths.h"

namespace llmco2::evaluation {
namespace {

const std::map<std::string, std::string>& family_table() {
  static const std::map<std::string, std::string> table = [] {
    std::map<std::string, std::string> out;
    const CsvTable csv = read_csv_file(data_dir() / "eval" / "families.csv");
    const size_t model = csv.column("model"), family = csv.column("family");
    for (const auto& r : csv.records)
      if (r.cells.size() == csv.header.size()) out[r.cells[model]] = r.cells[family];
    return out;
  }();
  return table;
}

void add_if_both(AccuracyCounter& counter, const std::optional<double>& predicted,
                 const std::optional<double>& measured) {
  if (predicted && measured && *measured > 0) counter.add(*predicted, *measured);
}

}  // namespace

const std::vector<std::string>& paper_families() {
  static const std::vector<std::string> families = {"Gemma", "Bloom", "Gemma2", "Qwen2", "Mixtral", "Llama3.1"};
  return families;
}

std::string family_of(const std::string& model) {
  const auto it = family_table().find(model);
  return it == family_table().end() ? "other" : it->second;
}

Score score(const std::vector<const DatasetRow*>& rows, const std::vector<Prediction>& predictions) {
  std::map<std::string, AccuracyCounter> by_family;
  AccuracyCounter all, latency, prefill, decode;
  for (size_t i = 0; i < rows.size(); ++i) {
    const DatasetRow& row = *rows[i];
    const Prediction& p = predictions[i];
    const auto measured = row.energy_j.total_or_sum();
    if (measured && *measured > 0 && p.energy_j.total) {
      by_family[family_of(row.model)].add(*p.energy_j.total, *measured);
      all.add(*p.energy_j.total, *measured);
    }
    add_if_both(latency, p.latency_s.total, row.latency_s.total_or_sum());
    add_if_both(prefill, p.energy_j.prefill, row.energy_j.prefill);
    add_if_both(decode, p.energy_j.decode, row.energy_j.decode);
  }
  Score s;
  for (const auto& [family, counter] : by_family) s.energy_by_family[family] = counter.result();
  double families = 0;
  for (const auto& family : paper_families()) {
    const auto it = s.energy_by_family.find(family);
    if (it == s.energy_by_family.end()) continue;
    const Accuracy& a = it->second;
    s.energy_family_mean.n += a.n;
    s.energy_family_mean.mape += a.mape;
    s.energy_family_mean.eba5 += a.eba5;
    s.energy_family_mean.eba10 += a.eba10;
    s.energy_family_mean.eba30 += a.eba30;
    ++families;
  }
  if (families > 0) {
    auto& m = s.energy_family_mean;
    m.mape /= families, m.eba5 /= families, m.eba10 /= families, m.eba30 /= families;
  }
  s.energy_all = all.result();
  s.latency_all = latency.result();
  s.prefill_energy = prefill.result();
  s.decode_energy = decode.result();
  return s;
}

}  // namespace llmco2::evaluation
