// calibration/collective_tables.cc - AIConfigurator's all-reduce tables as samples, and the engines' own all-reduce
// fit.
#include "calibration/collective_tables.h"

#include <cmath>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/csv.h"
#include "core/error.h"

namespace llmco2::calibration {

namespace {

KernelSample table_allreduce(const Gpu& gpu, const CsvTable& t, const CsvTable::Record& r) {
  const double gpus = cell_positive(t, r, "gpus");
  if (gpus < 2 || gpus != std::floor(gpus)) fail("{}:{}: gpus = {} (expected an integer >= 2)", t.source, r.line, gpus);
  KernelSample s = allreduce_sample(gpu, static_cast<int>(gpus), cell_positive(t, r, "bytes"),
                                    cell_positive(t, r, "latency_ms") * 1e-3);
  s.engine = cell_text(t, r, "engine");
  return s;
}

}  // namespace

AllReduceTableSet read_allreduce_tables(const std::filesystem::path& csv) {
  const CsvTable t = read_csv_file(csv);
  AllReduceTableSet set;
  SystemGpus gpus(set.skipped);
  std::set<std::string> pcie;
  for (const auto& r : t.records) {
    check_record_width(t, r);
    const Gpu* gpu = gpus.of(t, r);
    if (!gpu) continue;
    KernelSample s = table_allreduce(*gpu, t, r);
    if (s.group != "nvswitch") {
      pcie.insert(cell_text(t, r, "system"));
      continue;
    }
    const std::string& engine = s.engine;
    if (engine != "nccl" && engine != "vllm" && engine != "sglang" && engine != "trtllm")
      fail("{}:{}: engine '{}' (expected nccl, vllm, sglang or trtllm)", t.source, r.line, engine);
    (engine == "nccl" ? set.nccl : set.direct).push_back(std::move(s));
  }
  for (const auto& system : pcie)
    set.skipped.push_back(
        fmt::format("{} (PCIe between its GPUs: the engines' own all-reduces need NVLink, and the "
                    "tables' one PCIe host per GPU type is no link class of its own)",
                    system));
  if (set.nccl.empty() || set.direct.empty()) fail("{}: no NCCL or engine all-reduce over NVSwitch", csv.string());
  return set;
}

KernelProfileSet read_kernel_profiles(const std::filesystem::path& vidur_dir, const std::filesystem::path& tables_dir) {
  KernelProfileSet set = read_vidur_profiles(vidur_dir);
  for (KernelSample& s : set.network) {  // eager calls (see the header)
    if (s.group != "nvswitch") continue;
    s.group = engine_link_class(s.group, false);
    s.op += " eager";  // its own line beside the tables' rows of the same GPU and count in the report
  }
  const AllReduceTableSet tables = read_allreduce_tables(tables_dir / "allreduce.csv");
  set.network.insert(set.network.end(), tables.nccl.begin(), tables.nccl.end());
  return set;
}

namespace {

template <typename Key>
std::vector<size_t> members_where(const std::vector<KernelSample>& samples, Key key) {
  std::vector<size_t> out;
  for (size_t i = 0; i < samples.size(); ++i)
    if (key(samples[i])) out.push_back(i);
  return out;
}

void predict_into(const std::vector<KernelSample>& samples, const std::vector<size_t>& targets,
                  const KernelParams& params, const DirectAllReduceEfficiency& d, std::vector<double>& out) {
  for (size_t i : targets)
    out[i] =
        allreduce_s(samples[i].work, samples[i].roofs, params.network(samples[i].generation, samples[i].group), &d);
}

// Each group of `members` that `key` (of a sample index) tells apart, predicted by the entry fitted on the other
// groups; nothing when all share one group.
template <typename Key>
void leave_each_out(const std::vector<KernelSample>& samples, const std::vector<size_t>& members,
                    const KernelParams& params, Key key, std::vector<double>& out) {
  std::set<std::invoke_result_t<Key, size_t>> groups;
  for (size_t i : members) groups.insert(key(i));
  if (groups.size() < 2) return;
  for (const auto& group : groups) {
    std::vector<size_t> kept, left;
    for (size_t i : members) (key(i) == group ? left : kept).push_back(i);
    predict_into(samples, left, params, fit_direct_allreduce_efficiency(samples, kept, params), out);
  }
}

// Fits one engine's entry on `members`, with its fitted, size-decade-out and GPU-out predictions.
DirectAllReduceEfficiency fit_engine_entry(const std::vector<KernelSample>& samples, const std::vector<size_t>& members,
                                           const KernelParams& params, DirectAllReduceFit& fit) {
  const DirectAllReduceEfficiency fitted = fit_direct_allreduce_efficiency(samples, members, params);
  predict_into(samples, members, params, fitted, fit.fitted_s);
  leave_each_out(
      samples, members, params, [&](size_t i) { return size_decade(samples[i]); }, fit.held_out_size_s);
  leave_each_out(
      samples, members, params, [&](size_t i) { return samples[i].gpu_id; }, fit.held_out_gpu_s);
  return fitted;
}

}  // namespace

DirectAllReduceFit fit_direct_allreduce(const std::vector<KernelSample>& samples, KernelParams& params) {
  DirectAllReduceFit fit;
  fit.fitted_s.assign(samples.size(), 0.0);
  fit.held_out_size_s.assign(samples.size(), 0.0);
  fit.held_out_gpu_s.assign(samples.size(), 0.0);
  std::set<std::string> generations, engines;
  for (const auto& s : samples) {
    generations.insert(s.generation);
    engines.insert(s.engine);
  }
  std::map<std::string, DirectAllReduceEfficiency> pooled;
  for (const auto& generation : generations) {
    const auto all = members_where(samples, [&](const KernelSample& s) { return s.generation == generation; });
    pooled[generation] = fit_direct_allreduce_efficiency(samples, all, params);
    for (const auto& engine : engines) {
      const auto members = members_where(
          samples, [&](const KernelSample& s) { return s.generation == generation && s.engine == engine; });
      if (!members.empty()) fit.entries[generation + "/" + engine] = fit_engine_entry(samples, members, params, fit);
    }
  }
  fit.entries.insert(pooled.begin(), pooled.end());
  fit.entries["default"] = mean_of(pooled, direct_allreduce_fields());
  params.direct = fit.entries;
  return fit;
}

std::vector<TableScore> score_direct_allreduce(const std::vector<KernelSample>& samples,
                                               const DirectAllReduceFit& fit) {
  return score_tables(samples, fit.fitted_s, fit.held_out_size_s, fit.held_out_gpu_s);
}

std::string allreduce_tables_markdown(const AllReduceTableSet& set, const DirectAllReduceFit& fit) {
  std::string md = fmt::format(
      "## All-reduce: NCCL and the engines' own kernels (AIConfigurator's tables)\n\n"
      "Data: `data/measured/aiconfigurator/allreduce.csv`: {} NCCL all-reduces (nccl-tests `all_reduce_perf`, eager, "
      "out-of-place, bf16-sized messages of 512 B to 512 MiB; NCCL 2.29.2, A100: 2.27.3) and {} all-reduces of the "
      "engines' own kernels replayed in CUDA graphs (vLLM 0.24, SGLang 0.5.14, TensorRT-LLM 1.3; A100: 0.14, 0.5.10, "
      "1.0) on 2, 4 and 8 GPUs of one NVSwitch node (GB200 and GB300: 2 and 4). Not read: {}. The tables count "
      "messages in bf16 elements (AIConfigurator's collect_nccl.py and collect_all_reduce.py); bytes here are twice "
      "that. Study: [docs/history/aiconfigurator-comm-study.md](history/aiconfigurator-comm-study.md).\n\n",
      set.nccl.size(), set.direct.size(),
      set.skipped.empty() ? std::string("-") : fmt::format("{}", fmt::join(set.skipped, "; ")));
  md +=
      "- NCCL over NVSwitch: these rows are the class `nvswitch` of the network fit above (`<generation>/nvswitch` "
      "and the pooled `nvswitch`): what an engine replaying CUDA graphs pays per NCCL all-reduce. An engine launching "
      "eagerly takes `nvswitch-eager`, fitted on Vidur's DGX rows (eager calls from one process per GPU, each waiting "
      "for the last rank's launch). The fixed `call_latency_s` is what a ring of 2(n-1) steps alone missed: "
      "nccl-tests' small-message time grows 2.2-2.6x from 2 to 8 GPUs, not the 7x of the steps.\n"
      "- The engines' own all-reduces (`direct`): `direct_latency_s + bytes / (link x direct_bus_efficiency)`, or "
      "NCCL's ring time where that is shorter (each engine hands messages beyond its size limit to NCCL), fitted per "
      "generation and engine (`<generation>/<engine>`; an engine profile's `allreduce_kernel` names its kernel) and "
      "pooled over the engines (`<generation>`, for an engine profile that names none); `default`: the mean of the "
      "pooled entries. Held out: leave one decade of message sizes out; leave one GPU of the generation out (the NCCL "
      "ring they are bounded by is fitted on every GPU).\n"
      "- What the fit does not describe: the one-shot to two-stage switches inside a kernel (vLLM at 8 GPUs on "
      "Blackwell: 9 us at 128 KiB, 26 us at 256-512 KiB, 17 us at 1 MiB on torch symm-mem), and vLLM on GB200 at "
      "2 GPUs, whose large messages take 2.7x B200's (eager too: a path of that build, not the link).\n\n";
  md += "| entry | `direct_latency_s` | `direct_bus_efficiency` |\n|---|---:|---:|\n";
  for (const auto& [name, d] : fit.entries)
    md += fmt::format("| {} | {:.4g} | {:.4g} |\n", name, d.direct_latency_s, d.direct_bus_efficiency);
  md +=
      "\n| GPU | engine | all-reduce | samples | fitted MAPE | held-out MAPE, size decade out | median predicted / "
      "measured, decade out | held-out MAPE, GPU out |\n|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& s : score_direct_allreduce(set.direct, fit))
    md += fmt::format("| {} | {} | {} | {} | {:.1f}% | {:.1f}% | {:.2f} | {} |\n", s.gpu_id, s.engine, s.op, s.samples,
                      100 * s.fitted_mape, 100 * s.held_out_shape_mape, s.held_out_shape_ratio,
                      s.held_out_gpu_mape < 0 ? std::string("-") : fmt::format("{:.1f}%", 100 * s.held_out_gpu_mape));
  return md;
}

}  // namespace llmco2::calibration
