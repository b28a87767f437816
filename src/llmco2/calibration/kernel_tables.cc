// calibration/kernel_tables.cc - AIConfigurator's kernel tables as samples; the fit of the generations they add.
#include "calibration/kernel_tables.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibration/kernel_campaign.h"
#include "core/accuracy.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/paths.h"
#include "core/progress.h"
#include "core/statistics.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::calibration {

const std::map<std::string, std::string>& kernel_table_gpus() {
  static const std::map<std::string, std::string> gpus = {{"a100_sxm", "a100-80gb-sxm"},
                                                          {"h100_sxm", "h100-sxm"},
                                                          {"h200_sxm", "h200"},
                                                          {"b200_sxm", "b200"},
                                                          {"gb200", "gb200"},
                                                          {"b300_sxm", "b300"},
                                                          {"gb300", "gb300"},
                                                          {"l40s", "l40s"},
                                                          {"rtx_pro_6000_server", "rtx-pro-6000-server"}};
  return gpus;
}

std::filesystem::path default_kernel_tables_dir() { return data_dir() / "measured" / "aiconfigurator"; }

const Gpu* SystemGpus::of(const CsvTable& table, const CsvTable::Record& record) {
  const std::string& system = cell_text(table, record, "system");
  const auto found = gpus_.find(system);
  if (found != gpus_.end()) return found->second ? &*found->second : nullptr;
  const auto id = kernel_table_gpus().find(system);
  if (id == kernel_table_gpus().end())
    fail("{}:{}: system '{}' is not an AIConfigurator system llmco2 knows (kernel_table_gpus)", table.source,
         record.line, system);
  std::optional<Gpu>& gpu = gpus_[system];
  for (const Gpu& candidate : GpuCatalog::bundled().gpus())
    if (candidate.id == id->second) gpu = candidate;
  if (!gpu) skipped_.push_back(fmt::format("{} (no catalog GPU '{}')", system, id->second));
  return gpu ? &*gpu : nullptr;
}

namespace {

KernelSample table_sample(const Gpu& gpu, const CsvTable& t, const CsvTable::Record& r, std::string op,
                          std::string group, double tokens, const KernelWork& work) {
  KernelSample s;
  s.gpu_id = gpu.id;
  s.generation = gpu_generation(gpu);
  s.engine = cell_text(t, r, "engine");
  s.group = std::move(group);
  s.op = std::move(op);
  s.tokens = static_cast<int>(std::min(tokens, 2e9));
  s.work = work;
  s.roofs = {gpu.memory_bandwidth_bytes_per_s, 0, 1};
  s.measured_s = cell_positive(t, r, "latency_ms") * 1e-3;
  return s;
}

void read_gemms(const std::filesystem::path& path, SystemGpus& gpus, std::vector<KernelSample>& out) {
  const CsvTable t = read_csv_file(path);
  for (const auto& r : t.records) {
    check_record_width(t, r);
    const Gpu* gpu = gpus.of(t, r);
    if (!gpu) continue;
    std::string dtype = cell_text(t, r, "dtype");
    const double m = cell_positive(t, r, "m"), n = cell_positive(t, r, "n"), k = cell_positive(t, r, "k");
    if (dtype == "bfloat16") dtype = "bf16";
    const KernelWork work = campaign_gemm_work(m, n, k, dtype, *gpu);
    out.push_back(table_sample(*gpu, t, r, "gemm " + dtype, fmt::format("n={} k={}", n, k), m, work));
  }
}

double kv_bytes_of(const CsvTable& t, const CsvTable::Record& r) {
  const std::string& kv = cell_text(t, r, "kv_dtype");
  if (kv == "bfloat16") return 2.0;
  if (kv == "fp8") return 1.0;
  fail("{}:{}: kv_dtype '{}' (expected bfloat16 or fp8)", t.source, r.line, kv);
}

void read_attention(const std::filesystem::path& path, bool decode, SystemGpus& gpus, std::vector<KernelSample>& out) {
  const CsvTable t = read_csv_file(path);
  for (const auto& r : t.records) {
    check_record_width(t, r);
    const Gpu* gpu = gpus.of(t, r);
    if (!gpu) continue;
    const double batch = cell_positive(t, r, "batch"), isl = cell_positive(t, r, "isl"), kv_bytes = kv_bytes_of(t, r);
    const int heads = static_cast<int>(cell_positive(t, r, "heads")),
              kv_heads = static_cast<int>(cell_positive(t, r, "kv_heads"));
    const int head_dim = static_cast<int>(cell_positive(t, r, "head_dim"));
    const std::string group = fmt::format("heads={} kv={}", heads, kv_heads);
    const std::string suffix = kv_bytes == 1.0 ? " fp8-kv" : "";
    if (decode) {  // the step's query attends to the isl + step tokens cached before it and itself
      const double context = isl + cell_number(t, r, "step");
      const KernelWork work = campaign_decode_attention_work(batch, context, kv_bytes, *gpu, heads, kv_heads, head_dim);
      out.push_back(table_sample(*gpu, t, r, "decode attention" + suffix, group, batch, work));
    } else {
      const KernelWork work = campaign_prefill_attention_work(isl, *gpu, heads, kv_heads, head_dim, batch, kv_bytes);
      out.push_back(table_sample(*gpu, t, r, "prefill attention" + suffix, group, batch * isl, work));
    }
  }
}

// DeepSeek-V3's MLA (mla.csv): prefill in the expanded form, decode absorbed over the latent cache; group: the local
// head count (16-128: DeepSeek-V3 at TP 8 to 1).
void read_mla(const std::filesystem::path& path, SystemGpus& gpus, std::vector<KernelSample>& out) {
  const CsvTable t = read_csv_file(path);
  for (const auto& r : t.records) {
    check_record_width(t, r);
    const Gpu* gpu = gpus.of(t, r);
    if (!gpu) continue;
    const double batch = cell_positive(t, r, "batch"), kv_bytes = kv_bytes_of(t, r);
    const int heads = static_cast<int>(cell_positive(t, r, "heads"));
    const std::string& phase = cell_text(t, r, "phase");
    const std::string suffix = kv_bytes == 1.0 ? " fp8-kv" : "", group = fmt::format("heads={}", heads);
    if (phase == "prefill") {
      const long isl = static_cast<long>(cell_positive(t, r, "isl"));
      const KernelWork work = mla_attention_work(Phase::prefill, batch, isl, heads, kv_bytes, *gpu);
      out.push_back(table_sample(*gpu, t, r, "prefill mla" + suffix, group, batch * static_cast<double>(isl), work));
    } else if (phase == "decode") {  // `step` tokens cached; the query is the next one
      const long context = static_cast<long>(cell_positive(t, r, "step")) + 1;
      const KernelWork work = mla_attention_work(Phase::decode, batch, context, heads, kv_bytes, *gpu);
      out.push_back(table_sample(*gpu, t, r, "decode mla" + suffix, group, batch, work));
    } else {
      fail("{}:{}: phase '{}' (expected prefill or decode)", t.source, r.line, phase);
    }
  }
}

}  // namespace

KernelTableSet read_kernel_tables(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) fail("{}: not a folder", dir.string());
  KernelTableSet set;
  SystemGpus gpus(set.skipped_systems);
  read_gemms(dir / "gemm.csv", gpus, set.samples);
  read_attention(dir / "context_attention.csv", false, gpus, set.samples);
  read_attention(dir / "generation_attention.csv", true, gpus, set.samples);
  read_mla(dir / "mla.csv", gpus, set.samples);
  if (set.samples.empty()) fail("{}: no AIConfigurator kernel samples of a catalog GPU", dir.string());
  return set;
}

double predict_table_s(const KernelSample& s, const KernelParams& params, const SharedKernelValues& shared) {
  KernelEfficiency e = params.efficiency(s.generation, s.gpu_id);
  e.block_scaled_efficiency = shared.block_scaled_efficiency;
  return kernel_time_s(s.work, s.roofs, e, {});
}

TableFamily table_family(const KernelSample& s) {
  if (s.op == "gemm bf16") return TableFamily::gemm;
  if (s.op == "prefill attention" || s.op == "decode attention") return TableFamily::attention;
  if (s.op == "decode mla") return TableFamily::mla;
  return TableFamily::scored_only;
}

// ---- the fit ----

namespace {

// A GPU gets an entry of its own when the curve of its generation's other GPUs misses its tables by more than this
// (leave-one-GPU-out MAPE over the fitted families; the data-center boards of a generation stay within ~10-25%).
constexpr double kOwnEntryMape = 0.35;
const std::vector<std::string> kGemmFields = {"gemm_efficiency", "gemm_tile_rows", "memory_efficiency",
                                              "kernel_floor_s"};
const std::vector<std::string> kAttentionFields = {"attention_efficiency", "attention_half_keys", "attention_floor_s"};
const std::vector<std::string> kMlaFields = {"mla_efficiency", "mla_half_keys", "mla_floor_s", "mla_key_s"};
// The families every generation fits where it has samples (the GEMM fields only where Vidur did not profile it), each
// with its fields; the default entry takes each one's mean over the generations that fitted it.
const std::vector<std::pair<TableFamily, std::vector<std::string>>> kEveryGenerationFamilies = {
    {TableFamily::attention, kAttentionFields}, {TableFamily::mla, kMlaFields}};

// A generation's entry fitted on `indices` (of that generation), family by family from `start`: the GEMM fields on
// bf16 GEMMs when `fit_gemm` (a generation without Vidur profiles), then kEveryGenerationFamilies' (attention and MLA
// decode over a bf16 cache), each family where it has samples.
KernelEfficiency fit_entry(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices,
                           KernelEfficiency entry, bool fit_gemm) {
  auto of = [&](TableFamily family) {
    std::vector<size_t> out;
    for (size_t i : indices)
      if (table_family(samples[i]) == family) out.push_back(i);
    return out;
  };
  if (const auto gemm = of(TableFamily::gemm); fit_gemm && !gemm.empty())
    entry = fit_kernel_efficiency(samples, gemm, entry, kGemmFields);
  for (const auto& [family, fields] : kEveryGenerationFamilies)
    if (const auto members = of(family); !members.empty())
      entry = fit_kernel_efficiency(samples, members, entry, fields);
  return entry;
}

// Where an entry goes in KernelParams: a generation's, or one GPU's own.
struct EntryKey {
  std::string name;
  bool gpu = false;
  KernelEfficiency& in(KernelParams& params) const { return gpu ? params.gpus[name] : params.generations[name]; }
};

// Predictions of `samples[i]` for i in `targets` with the entry `key` set to `e`.
void predict_with(const std::vector<KernelSample>& samples, const std::vector<size_t>& targets, KernelParams params,
                  const EntryKey& key, const KernelEfficiency& e, const SharedKernelValues& shared,
                  std::vector<double>& out) {
  key.in(params) = e;
  for (size_t i : targets) out[i] = predict_table_s(samples[i], params, shared);
}

// The indices of `members` whose `key` differs from (kept) or equals (left) `value`.
template <typename Key>
std::pair<std::vector<size_t>, std::vector<size_t>> split(const std::vector<size_t>& members, Key key,
                                                          const std::string& value) {
  std::pair<std::vector<size_t>, std::vector<size_t>> out;
  for (size_t i : members) (key(i) == value ? out.second : out.first).push_back(i);
  return out;
}

std::set<std::string> distinct_of(const std::vector<KernelSample>& samples, const std::vector<size_t>& members,
                                  std::string KernelSample::*field) {
  std::set<std::string> out;
  for (size_t i : members) out.insert(samples[i].*field);
  return out;
}

// Fits the entry `key` on `members` from `start`, with its fitted and leave-one-shape-out predictions; returns it.
KernelEfficiency fit_and_score(const std::vector<KernelSample>& samples, const std::vector<size_t>& members,
                               const KernelEfficiency& start, bool fit_gemm, const EntryKey& key,
                               const KernelParams& base, const SharedKernelValues& shared, KernelTableFit& fit) {
  const KernelEfficiency fitted = fit_entry(samples, members, start, fit_gemm);
  predict_with(samples, members, base, key, fitted, shared, fit.fitted_s);
  for (const auto& shape : distinct_of(samples, members, &KernelSample::group)) {
    const auto [kept, left] = split(
        members, [&](size_t i) { return samples[i].group; }, shape);
    predict_with(samples, left, base, key, fit_entry(samples, kept, start, fit_gemm), shared, fit.held_out_shape_s);
  }
  return fitted;
}

// Leave one GPU out of `members` (2+ GPUs): each GPU's samples predicted by the entry fitted on the others.
void gpu_out(const std::vector<KernelSample>& samples, const std::vector<size_t>& members,
             const KernelEfficiency& start, bool fit_gemm, const EntryKey& key, const KernelParams& base,
             const SharedKernelValues& shared, KernelTableFit& fit) {
  const auto gpus = distinct_of(samples, members, &KernelSample::gpu_id);
  if (gpus.size() < 2) return;
  for (const auto& gpu : gpus) {
    const auto [kept, left] = split(
        members, [&](size_t i) { return samples[i].gpu_id; }, gpu);
    predict_with(samples, left, base, key, fit_entry(samples, kept, start, fit_gemm), shared, fit.held_out_gpu_s);
  }
}

// The GPUs of a generation of 3+ GPUs that its other GPUs' curve does not describe: leave-one-GPU-out MAPE over
// their fitted families above kOwnEntryMape.
std::set<std::string> outlying_gpus(const std::vector<KernelSample>& samples, const std::vector<size_t>& members,
                                    const KernelTableFit& fit) {
  std::map<std::string, std::pair<double, double>> error;  // gpu -> (sum of |ratio - 1|, samples)
  for (size_t i : members)
    if (table_family(samples[i]) != TableFamily::scored_only && fit.held_out_gpu_s[i] > 0) {
      auto& [sum, count] = error[samples[i].gpu_id];
      sum += std::abs(fit.held_out_gpu_s[i] / samples[i].measured_s - 1), count += 1;
    }
  std::set<std::string> out;
  if (error.size() < 3) return out;
  for (const auto& [gpu, e] : error)
    if (e.first / e.second > kOwnEntryMape) out.insert(gpu);
  return out;
}

// The default entry's fields of `family`: the mean over the generations that fitted them (those with samples of the
// family besides their GPUs of their own).
void set_default_fields(const std::vector<KernelSample>& samples, const KernelTableFit& fit, TableFamily family,
                        const std::vector<std::string>& names, KernelEfficiency& d) {
  std::set<std::string> with_family;
  for (const auto& s : samples)
    if (table_family(s) == family && !fit.gpus.count(s.gpu_id)) with_family.insert(s.generation);
  for (auto [key, field] : kernel_efficiency_fields(names)) {
    double sum = 0, count = 0;
    for (const auto& [generation, e] : fit.generations)
      if (with_family.count(generation)) sum += e.*field, count += 1;
    if (count > 0) d.*field = sum / count;
  }
}

void set_default_entry(const std::vector<KernelSample>& samples, KernelTableFit& fit, KernelParams& params) {
  KernelEfficiency& d = params.generations.at("default");
  for (const auto& [family, fields] : kEveryGenerationFamilies) set_default_fields(samples, fit, family, fields, d);
  // A GPU without MLA tables runs a split-KV decode kernel, as every engine's current MLA backend does (FlashMLA,
  // FlashInfer, vLLM's Triton MLA with its KV splits): the least per-key chain fitted, not the mean with the
  // unsplit kernels of older builds.
  for (const auto& [generation, e] : fit.generations) d.mla_key_s = std::min(d.mla_key_s, e.mla_key_s);
  fit.default_entry = d;
}

}  // namespace

KernelTableFit fit_kernel_tables(const std::vector<KernelSample>& samples, KernelParams& params,
                                 const SharedKernelValues& shared, bool show_progress) {
  KernelTableFit fit;
  const size_t n = samples.size();
  fit.fitted_s.assign(n, 0.0);
  fit.held_out_shape_s.assign(n, 0.0);
  fit.held_out_gpu_s.assign(n, 0.0);
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  const KernelParams base = params;
  const std::set<std::string> generations = distinct_of(samples, all, &KernelSample::generation);
  Progress progress("calibrate --kernels: kernel-table generations", static_cast<long>(generations.size()),
                    show_progress);
  long done = 0;
  for (const auto& generation : generations) {
    const bool profiled = base.generations.count(generation) > 0;
    const KernelEfficiency start = base.generation(generation);
    const EntryKey key{generation};
    std::vector<size_t> members = split(
                                      all, [&](size_t i) { return samples[i].generation; }, generation)
                                      .second;
    gpu_out(samples, members, start, !profiled, key, base, shared, fit);
    const std::set<std::string> own = outlying_gpus(samples, members, fit);
    std::erase_if(members, [&](size_t i) { return own.count(samples[i].gpu_id) > 0; });
    if (!own.empty()) gpu_out(samples, members, start, !profiled, key, base, shared, fit);
    const KernelEfficiency curve = fit_and_score(samples, members, start, !profiled, key, base, shared, fit);
    fit.generations[generation] = curve;
    params.generations[generation] = curve;
    for (const auto& gpu : own) {  // its own entry, all fields refitted from the generation's curve
      const auto mine = split(
                            all, [&](size_t i) { return samples[i].gpu_id; }, gpu)
                            .second;
      KernelParams with_curve = base;
      with_curve.generations[generation] = curve;
      const KernelEfficiency entry = fit_and_score(samples, mine, curve, true, {gpu, true}, with_curve, shared, fit);
      fit.gpus[gpu] = entry;
      params.gpus[gpu] = entry;
    }
    progress.update(++done);
  }
  progress.finish();
  set_default_entry(samples, fit, params);
  return fit;
}

std::vector<TableScore> score_tables(const std::vector<KernelSample>& samples, const std::vector<double>& fitted_s,
                                     const std::vector<double>& held_out_shape_s,
                                     const std::vector<double>& held_out_gpu_s) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < samples.size(); ++i)
    groups[{samples[i].gpu_id, samples[i].engine, samples[i].op}].push_back(i);
  auto mape = [&](const std::vector<size_t>& idx, const std::vector<double>& predicted) {
    double sum = 0;
    for (size_t i : idx) sum += std::abs(predicted[i] / samples[i].measured_s - 1);
    return sum / static_cast<double>(idx.size());
  };
  std::vector<TableScore> out;
  for (const auto& [key, idx] : groups) {
    TableScore s;
    std::tie(s.gpu_id, s.engine, s.op) = key;
    s.samples = idx.size();
    std::vector<double> ratios;
    for (size_t i : idx) ratios.push_back(held_out_shape_s[i] / samples[i].measured_s);
    s.held_out_shape_ratio = percentile(ratios, 0.5);
    s.fitted_mape = mape(idx, fitted_s);
    s.held_out_shape_mape = mape(idx, held_out_shape_s);
    if (held_out_gpu_s[idx.front()] > 0) s.held_out_gpu_mape = mape(idx, held_out_gpu_s);
    out.push_back(s);
  }
  return out;
}

std::vector<TableScore> score_kernel_tables(const std::vector<KernelSample>& samples, const KernelTableFit& fit) {
  return score_tables(samples, fit.fitted_s, fit.held_out_shape_s, fit.held_out_gpu_s);
}

Json kernel_tables_json(const std::vector<TableScore>& scores) {
  Json out = Json::array();
  for (const auto& s : scores)
    out.push_back({{"gpu", s.gpu_id},
                   {"engine", s.engine},
                   {"op", s.op},
                   {"samples", s.samples},
                   {"fitted_mape", s.fitted_mape},
                   {"held_out_shape_mape", s.held_out_shape_mape},
                   {"held_out_gpu_mape", s.held_out_gpu_mape < 0 ? Json() : Json(s.held_out_gpu_mape)}});
  return out;
}

}  // namespace llmco2::calibration

// ---- report ----

namespace llmco2::calibration {

namespace {

std::string percent_or_dash(double fraction) { return fraction < 0 ? "-" : percent(fraction); }

std::string fitted_values(const KernelTableFit& fit) {
  std::map<std::string, KernelEfficiency> entries = fit.generations;
  entries["default"] = fit.default_entry;
  for (const auto& [gpu, e] : fit.gpus) entries["GPU " + gpu] = e;
  std::string md = "| parameter | range |", rule = "|---|---|";
  for (const auto& [name, e] : entries) md += " " + name + " |", rule += "---:|";
  md += "\n" + rule + "\n";
  for (auto [name, field] : kernel_efficiency_fields()) {
    const ParamRange& r = kernel_param_range(name);
    md += fmt::format("| `{}` | [{:g}, {:g}] |", name, r.lo, r.hi);
    for (const auto& [entry, e] : entries) md += fmt::format(" {:.4g} |", e.*field);
    md += "\n";
  }
  return md;
}

}  // namespace

namespace {

// Sample-weighted MAPEs of one (family, GPU) cell over its engines' groups.
struct FamilyCell {
  double samples = 0, fitted = 0, shape_out = 0, gpu_out = 0, gpu_out_samples = 0;
};

// Per fitted family and GPU, pooled over engines: what item 1 of issue 37 targets (GEMM and attention <= 10% held
// out by shape on every GPU with tables; a GPU predicted from its generation's other GPUs within 15%).
std::string family_summary(const std::vector<TableScore>& scores) {
  static const std::vector<std::string> families = {"gemm bf16", "prefill attention", "decode attention", "decode mla"};
  std::map<std::pair<std::string, std::string>, FamilyCell> cells;
  for (const auto& s : scores) {
    if (std::find(families.begin(), families.end(), s.op) == families.end()) continue;
    FamilyCell& c = cells[{s.op, s.gpu_id}];
    const double n = static_cast<double>(s.samples);
    c.samples += n, c.fitted += n * s.fitted_mape, c.shape_out += n * s.held_out_shape_mape;
    if (s.held_out_gpu_mape >= 0) c.gpu_out += n * s.held_out_gpu_mape, c.gpu_out_samples += n;
  }
  std::string md =
      "### Per family and GPU (engines pooled)\n\nThe targets of issue 37, item 1: GEMM and attention <= 10% MAPE on "
      "every GPU with tables (held out by shape), and a GPU without tables predicted from its generation's curve "
      "within 15% (held out by GPU). Sample-weighted over the engines' rows of the table below.\n\n"
      "| family | GPU | samples | fitted | shape out | <= 10% | GPU out | <= 15% |\n"
      "|---|---|---:|---:|---:|:-:|---:|:-:|\n";
  for (const auto& family : families)
    for (const auto& [key, c] : cells) {
      if (key.first != family) continue;
      const double shape_out = c.shape_out / c.samples;
      const bool has_gpu_out = c.gpu_out_samples > 0;
      const double gpu_out = has_gpu_out ? c.gpu_out / c.gpu_out_samples : -1;
      md += fmt::format("| {} | {} | {:.0f} | {} | {} | {} | {} | {} |\n", family, key.second, c.samples,
                        percent_or_dash(c.fitted / c.samples), percent_or_dash(shape_out),
                        shape_out <= 0.10 ? "yes" : "no", percent_or_dash(gpu_out),
                        !has_gpu_out      ? "-"
                        : gpu_out <= 0.15 ? "yes"
                                          : "no");
    }
  return md + "\n";
}

}  // namespace

std::string kernel_tables_markdown(const KernelTableSet& set, const KernelTableFit& fit) {
  std::string md = fmt::format(
      "## NVIDIA's AIConfigurator kernel tables\n\n"
      "Data: [data/measured/aiconfigurator](../data/measured/aiconfigurator/README.md): {} kernel samples, GEMMs per "
      "dtype, prefill and decode attention and DeepSeek-V3's multi-head latent attention (MLA) timed inside vLLM, "
      "SGLang and TensorRT-LLM (engine versions in the README).{}\n\n",
      set.samples.size(),
      set.skipped_systems.empty()
          ? std::string()
          : fmt::format(" Not read (GPU not in the catalog): {}.", fmt::join(set.skipped_systems, ", ")));
  md +=
      "- Work: the simulator's own formulas (`calibration/kernel_campaign.h`); roofs: each GPU's catalog peaks at the "
      "GEMM's input type (bf16, fp8, fp4) and its HBM bandwidth.\n"
      "- Fit, per generation, engines pooled (one curve per generation; an engine's own kernels differ, see the "
      "table), family by family: Blackwell and Ada (no Vidur profiles) get `gemm_efficiency`, `gemm_tile_rows`, "
      "`memory_efficiency` and `kernel_floor_s` from their bf16 GEMMs (their `memory_half_bytes` and "
      "`vector_efficiency`, which GEMMs do not identify, are the `default` entry's); every generation gets "
      "`attention_efficiency`, `attention_half_keys` and `attention_floor_s` from its prefill and decode attention "
      "over a bf16 KV cache, and `mla_efficiency`, `mla_half_keys`, `mla_floor_s` and `mla_key_s` from its MLA "
      "decode (absorbed: "
      "every head over the 576-wide latent cache, heads computed in tiles of 64; TensorRT-LLM's and SGLang's "
      "kernels, vLLM has no MLA kernel table of its own here) over a bf16 cache. MLA prefill runs the expanded form "
      "(multi-head attention of 192/128-wide heads through the engine's FMHA kernels) and is scored with the "
      "generation's attention fields. `default` (GPUs of other generations): the mean of the generations that "
      "fitted them.\n"
      "- Scored only, not fitted: fp8 and NVFP4 GEMMs, whose `fp8_efficiency` and `fp4_efficiency` stay 1. The tables "
      "time the engine's whole linear layer, the activations' quantisation included (TensorRT-LLM's fp8 layer at "
      "4096 x 4096 and 1-16 rows takes ~14 us where bf16 takes ~7.5 on an H100), and vLLM's CUTLASS fp8 GEMMs reach "
      "~0.78 of bf16's share of the peak at large shapes; fitted on them, the share (Hopper 0.67-0.73, Blackwell "
      "0.51-0.55) "
      "made the simulator's fp8 rows slower than measured on data it never saw: our own H200 campaign's cuBLASLt "
      "fp8 GEMMs (4.5% MAPE at share 1, docs/gpu-campaign.md) and ML.ENERGY v3's per-tensor fp8 rows (median "
      "predicted / measured latency 0.88 -> 1.14 on H100, 0.87 -> 1.35 on B200, leave one source out). An fp8 "
      "share is an engine build's (kernel library) figure: it belongs to an engine version's profile. Block-scaled "
      "fp8 GEMMs are scored only too (their share, `block_scaled_efficiency`, is fitted end to end by `llmco2 "
      "calibrate`; the tables show vLLM's far slower at small M on Blackwell), and so is attention over an fp8 KV "
      "cache (MLA's too).\n"
      "- Held out: leave one shape out ((n, k) of a GEMM, (heads, KV heads) of attention, the head count of MLA: "
      "the generation refitted "
      "without it); leave one GPU out (refitted on the generation's other GPUs: how a GPU of that generation without "
      "tables fares). MAPE = mean |predicted / measured - 1|.\n";
  std::vector<std::string> own;
  for (const auto& [gpu, e] : fit.gpus) own.push_back("`" + gpu + "`");
  md += fmt::format(
      "- A GPU that its generation's other GPUs' curve misses by more than {:.0f}% (leave-one-GPU-out MAPE over the "
      "fitted families) gets an entry of its own, fitted on its tables from that curve: {}. Its GPU-out column is "
      "that curve's.\n\n",
      100 * kOwnEntryMape, own.empty() ? std::string("none") : fmt::format("{}", fmt::join(own, ", ")));
  md += "Fitted values (the Vidur-fitted fields of ampere and hopper as above):\n\n" + fitted_values(fit) + "\n";
  const std::vector<TableScore> scores = score_kernel_tables(set.samples, fit);
  md += family_summary(scores);
  md +=
      "| GPU | engine | kernel | samples | fitted MAPE | held-out MAPE, shape out | median predicted / measured, "
      "shape out | held-out MAPE, GPU out |\n|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& s : scores)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {:.2f} | {} |\n", s.gpu_id, s.engine, s.op, s.samples,
                      percent_or_dash(s.fitted_mape), percent_or_dash(s.held_out_shape_mape), s.held_out_shape_ratio,
                      percent_or_dash(s.held_out_gpu_mape));
  return md;
}

}  // namespace llmco2::calibration
