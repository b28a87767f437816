// research/datasets.cc - plans and datasets (`llmco2 sample`, `llmco2 simulate --plan`, `llmco2 import`): focused
// sampling, labelling a plan with the reference simulator, importing public measurements.
#include <algorithm>
#include <map>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_manifest.h"
#include "core/paths.h"
#include "dataset/dataset_csv.h"
#include "dataset/plan.h"
#include "llmco2/research.h"
#include "measured/bench_results.h"
#include "measured/importer.h"
#include "research/module.h"
#include "sampling/azure_trace.h"
#include "sampling/focused_sampling.h"
#include "sim/label.h"

namespace llmco2::research {
namespace {

std::vector<std::string> model_list(const std::vector<std::string>& spec) {
  if (spec.size() == 1 && spec[0] == "paper") return paper_models();
  if (spec.size() == 1 && spec[0] == "all") return bundled_model_ids();
  return spec;
}

// Reasons grouped into classes with their counts, most frequent first.
std::vector<std::pair<std::string, long>> reason_counts(const std::vector<RowReject>& rejects) {
  std::map<std::string, long> counts;
  for (const auto& r : rejects) ++counts[reason_class(r.reason)];
  std::vector<std::pair<std::string, long>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

}  // namespace

long sample(const SampleOptions& o) {
  if (o.out.empty()) fail("sample: no output file (--out)");
  if (o.count < 1) fail("sample: count {} (expected at least 1)", o.count);
  if (o.max_gpus < 1 || o.max_gpus > 64) fail("sample: max_gpus {} (expected 1 to 64)", o.max_gpus);
  if (!(o.int8_share >= 0 && o.int8_share <= 1)) fail("sample: int8_share {} (expected 0 to 1)", o.int8_share);
  SamplingSpace space;
  space.models = model_list(o.models);
  space.gpus = o.gpus;
  space.max_gpus = o.max_gpus;
  space.batch_weights = o.batch_weights;
  space.int8_share = o.int8_share;
  space.requests = bundled_azure_requests();
  const auto plan = sample_plan(space, o.count, o.seed);
  write_plan(o.out, plan);
  return static_cast<long>(plan.size());
}

LabelSummary label_plan(const LabelOptions& o) {
  if (o.out.empty()) fail("simulate --plan needs --out FILE for the labelled dataset");
  if (o.repeats < 1 || o.repeats > 1000) fail("simulate --plan: repeats {} (expected 1 to 1000)", o.repeats);
  refuse_output_over_input(o.out, "--out", o.plan, "plan");
  const SimParams params = load_sim_params_or_default(o.params);
  PlanReadResult plan = read_plan(o.plan);
  const bool progress = o.progress || plan.rows.size() >= 5000;
  LabelledPlan labelled = sim::label_plan(plan.rows, params, {o.repeats, o.seed, o.plan, progress});
  RunManifest manifest(manifest_beside(o.out));
  write_dataset(o.out, labelled.rows);
  manifest.commit();
  LabelSummary summary;
  summary.rows_written = static_cast<long>(labelled.rows.size());
  for (const auto& r : plan.rejects) summary.rejects.push_back(r.message());
  for (const auto& r : labelled.rejects) summary.rejects.push_back(r.message());
  return summary;
}

std::vector<SourceInfo> measurement_sources() {
  std::vector<SourceInfo> out;
  for (const Importer& i : importers()) out.push_back({i.id, i.folder, i.summary, static_cast<bool>(i.run)});
  return out;
}

ImportSummary import_source(const std::string& id, const ImportOptions& o) {
  const Importer& importer = find_importer(id);
  ImportSummary summary;
  summary.id = importer.id;
  if (!importer.run) return summary;
  const std::filesystem::path folder = std::filesystem::path(o.from) / importer.folder;
  if (!std::filesystem::is_directory(folder))
    fail("{}: source folder {} not found (set --from to ../shared/data/measured)", importer.id, folder.string());
  const ImportResult result = importer.run(folder);
  const std::filesystem::path out_dir = measured_dir(o.out_dir);
  std::filesystem::create_directories(out_dir);
  write_dataset(out_dir / (importer.id + ".csv"), result.rows);
  write_import_rejects(out_dir / (importer.id + ".rejects.csv"), result.rejects);
  summary.written = (out_dir / (importer.id + ".csv")).string();
  summary.rows = static_cast<long>(result.rows.size());
  summary.rejected = static_cast<long>(result.rejects.size());
  summary.reject_reasons = reason_counts(result.rejects);
  return summary;
}

ImportBenchSummary import_bench(const ImportBenchOptions& o) {
  if (o.out.empty()) fail("import-bench: give --out (the dataset CSV to write)");
  if (o.files.empty()) fail("import-bench: no result file given");
  const BenchSetup setup{
      .gpu = o.gpu, .gpus = o.gpus, .engine = o.engine, .model = o.model, .dtype = o.dtype, .source = o.source};
  const ImportResult result =
      import_bench_results(std::vector<std::filesystem::path>(o.files.begin(), o.files.end()), o.format, setup);
  ImportBenchSummary summary;
  for (const RowReject& r : result.rejects) summary.rejects.push_back(r.message());
  if (result.rows.empty())
    fail("import-bench: no result could be imported ({})", summary.rejects.empty() ? "none" : summary.rejects.front());
  write_dataset(o.out, result.rows);
  summary.rows = static_cast<long>(result.rows.size());
  return summary;
}

}  // namespace llmco2::research
