// calibration/kernel_profiles.cc - Vidur's operator profiles to kernel samples; the bounded fit of KernelParams.
#include "calibration/kernel_profiles.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "core/accuracy.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/paths.h"
#include "core/plot.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::calibration {

namespace {

constexpr double kFp16Bytes = 2;

// A GEMM of M rows, K inner and N output columns on one GPU: 2 M K N operations; it reads the K x N weight and the
// M x K input and writes the M x N output once each (fp16): bytes = 2 (K N + M K + M N).
KernelWork gemm_work(double m, double k, double n, const Gpu& gpu) {
  KernelWork w;
  w.kind = KernelClass::matrix;
  w.ops = 2 * m * k * n;
  w.mem_bytes = kFp16Bytes * (k * n + m * k + m * n);
  w.rows = m;
  w.peak_ops_per_s = gpu.matrix_peak(DType::fp16).ops_per_s;
  return w;
}

// An element-wise kernel: `ops` on the fp32 CUDA cores and `bytes` of DRAM traffic.
KernelWork vector_work(double ops, double bytes, double rows, const Gpu& gpu) {
  KernelWork w;
  w.kind = KernelClass::vector;
  w.ops = ops;
  w.mem_bytes = bytes;
  w.rows = rows;
  w.peak_ops_per_s = gpu.vector_peak_ops_per_s();
  return w;
}

int cell_int(const CsvTable& table, const CsvTable::Record& record, std::string_view column) {
  const double value = cell_number(table, record, column);
  if (value != std::floor(value) || value < 0)
    fail("{}:{}: column '{}' = {} is not a whole number", table.source, record.line, column, value);
  return static_cast<int>(value);
}

VidurModelShape read_shape(const CsvTable& table, const CsvTable::Record& r) {
  VidurModelShape s;
  s.n_head = cell_int(table, r, "n_head");
  s.n_kv_head = cell_int(table, r, "n_kv_head");
  s.n_embd = cell_int(table, r, "n_embd");
  s.n_expanded_embd = cell_int(table, r, "n_expanded_embd");
  const std::string gated = r.cells.at(table.column("use_gated_mlp"));
  if (gated != "True" && gated != "False")
    fail("{}:{}: use_gated_mlp = '{}' (expected True or False)", table.source, r.line, gated);
  s.gated_mlp = gated == "True";
  if (s.n_head <= 0 || s.n_kv_head <= 0 || s.n_embd % s.n_head != 0)
    fail("{}:{}: n_embd {} is not a multiple of n_head {}", table.source, r.line, s.n_embd, s.n_head);
  return s;
}

}  // namespace

const std::vector<std::string>& vidur_compute_ops() {
  static const std::vector<std::string> ops = {
      "emb",         "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj", "post_attention_layernorm",
      "mlp_up_proj", "mlp_act",         "mlp_down_proj", "add"};
  return ops;
}

// M = tokens, h = n_embd, d = h / n_head, t = TP degree, f = n_expanded_embd; every tensor fp16 (2 bytes).
KernelWork vidur_op_work(const std::string& op, const VidurModelShape& s, int tokens, int tp, const Gpu& gpu) {
  const double m = tokens, h = s.n_embd, t = tp, f = s.n_expanded_embd;
  const double d = h / s.n_head;
  // Column-parallel fused QKV: K = h, N = (n_head + 2 n_kv_head) d / t.
  if (op == "attn_pre_proj") return gemm_work(m, h, (s.n_head + 2.0 * s.n_kv_head) * d / t, gpu);
  // Row-parallel output projection: K = n_head d / t, N = h.
  if (op == "attn_post_proj") return gemm_work(m, s.n_head * d / t, h, gpu);
  // Column-parallel up projection (gate and up fused when gated): K = h, N = (gated ? 2 : 1) f / t.
  if (op == "mlp_up_proj") return gemm_work(m, h, (s.gated_mlp ? 2.0 : 1.0) * f / t, gpu);
  // Row-parallel down projection: K = f / t, N = h.
  if (op == "mlp_down_proj") return gemm_work(m, f / t, h, gpu);
  // Element-wise kernels compute in fp32 on fp16 tensors: operation counts include one conversion per element read
  // and one per element written.
  // RMSNorm over the full hidden state (not split by TP): reads M h and the h weights, writes M h; 7 operations per
  // element (convert, square-accumulate = 2, scale by the reciprocal root, convert and multiply the weight, convert).
  if (op == "input_layernorm" || op == "post_attention_layernorm")
    return vector_work(7 * m * h, kFp16Bytes * (2 * m * h + h), m, gpu);
  // Rotary embedding of this GPU's q and k heads, in place: E = M (n_head + n_kv_head) d / t elements read and
  // written, plus the cos/sin cache rows (d per token, fp16) and the int64 positions; 5 operations per element
  // (convert, multiply by cos, fused multiply-add with the partner times sin = 2, convert).
  if (op == "attn_rope") {
    const double elements = m * (s.n_head + s.n_kv_head) * d / t;
    return vector_work(5 * elements, kFp16Bytes * (2 * elements + m * d) + 8 * m, m, gpu);
  }
  // Activation of this GPU's f / t columns. Gated, SiLU(gate) x up: reads 2 M f / t, writes M f / t; 8 operations
  // per output (2 converts, exp, add, reciprocal, 2 multiplies, convert). Plain GELU (tanh form): reads and writes
  // M f / t; 10 operations per element (convert, cube, 2 fused multiply-adds, tanh, add, 2 multiplies, convert).
  if (op == "mlp_act") {
    const double out = m * f / t;
    return s.gated_mlp ? vector_work(8 * out, kFp16Bytes * 3 * out, m, gpu)
                       : vector_work(10 * out, kFp16Bytes * 2 * out, m, gpu);
  }
  // Residual add over the full hidden state: reads 2 M h, writes M h; 4 operations per output (2 converts, add,
  // convert).
  if (op == "add") return vector_work(4 * m * h, kFp16Bytes * 3 * m * h, m, gpu);
  // Embedding as a gather (no arithmetic): reads M int64 token ids and M rows of h, writes M h.
  if (op == "emb") return vector_work(0, 8 * m + kFp16Bytes * 2 * m * h, m, gpu);
  fail("vidur: unknown operator '{}'", op);
}

std::vector<KernelSample> read_vidur_mlp(const std::filesystem::path& csv, const Gpu& gpu, const std::string& model) {
  const CsvTable table = read_csv_file(csv);
  std::vector<KernelSample> out;
  for (const auto& record : table.records) {
    check_record_width(table, record);
    const VidurModelShape shape = read_shape(table, record);
    const int tokens = cell_int(table, record, "num_tokens");
    const int tp = cell_int(table, record, "num_tensor_parallel_workers");
    if (tokens < 1 || tp < 1) fail("{}:{}: num_tokens and the TP degree must be >= 1", table.source, record.line);
    for (const auto& op : vidur_compute_ops()) {
      KernelSample s;
      s.gpu_id = gpu.id;
      s.generation = gpu_generation(gpu);
      s.group = model;
      s.op = op;
      s.tokens = tokens;
      s.gpus = tp;
      s.work = vidur_op_work(op, shape, tokens, tp, gpu);
      s.roofs = {gpu.memory_bandwidth_bytes_per_s, 0, 1};
      s.measured_s = cell_number(table, record, "time_stats." + op + ".median") * 1e-3;  // ms -> s
      if (s.measured_s <= 0) fail("{}:{}: {} median is not positive", table.source, record.line, op);
      out.push_back(s);
    }
  }
  return out;
}

KernelSample allreduce_sample(const Gpu& gpu, int gpus, double bytes, double measured_s) {
  KernelSample s;
  s.gpu_id = gpu.id;
  s.generation = gpu_generation(gpu);
  s.group = link_class(gpu, gpus);
  s.op = fmt::format("all_reduce x{}", gpus);
  s.gpus = gpus;
  s.size_bytes = bytes;
  s.work.kind = KernelClass::network;
  s.work.net_bytes = 2.0 * (gpus - 1) / gpus * bytes;  // ring: what each GPU sends
  s.roofs = {gpu.memory_bandwidth_bytes_per_s, gpu.network_link(gpus).bandwidth_bytes_per_s, gpus};
  s.measured_s = measured_s;
  return s;
}

std::vector<KernelSample> read_vidur_all_reduce(const std::filesystem::path& csv, const Gpu& gpu) {
  const CsvTable table = read_csv_file(csv);
  std::vector<KernelSample> out;
  for (const auto& record : table.records) {
    check_record_width(table, record);
    const int workers = cell_int(table, record, "num_workers");
    // Rows with fewer devices per node than workers span nodes (an inter-node link we do not model).
    if (workers < 2 || cell_int(table, record, "devices_per_node") != workers) continue;
    // Vidur's `size` is bytes: its collectives profiler writes size = elements x 2 for its fp16 buffer.
    const double measured_s = cell_number(table, record, "time_stats.all_reduce.median") * 1e-3;
    if (measured_s <= 0) fail("{}:{}: all_reduce median is not positive", table.source, record.line);
    out.push_back(allreduce_sample(gpu, workers, cell_number(table, record, "size"), measured_s));
  }
  return out;
}

namespace {

std::vector<std::filesystem::path> sorted_children(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  if (!std::filesystem::is_directory(dir)) fail("{}: not a folder", dir.string());
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_directory()) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The SKU behind each of Vidur's device and node folders (docs/profiling.md of the Vidur repository).
const std::map<std::string, std::string>& vidur_skus() {
  static const std::map<std::string, std::string> skus = {{"a100", "a100-80gb-sxm"},
                                                          {"h100", "h100-sxm"},
                                                          {"a100_dgx", "a100-80gb-sxm"},
                                                          {"h100_dgx", "h100-sxm"},
                                                          {"a100_pairwise_nvlink", "a100-80gb-pcie"},
                                                          {"h100_pairwise_nvlink", "h100-nvl"}};
  return skus;
}

const std::string& sku_of(const std::filesystem::path& folder) {
  const auto it = vidur_skus().find(folder.filename().string());
  if (it == vidur_skus().end()) fail("{}: unknown Vidur device folder", folder.string());
  return it->second;
}

}  // namespace

KernelProfileSet read_vidur_profiles(const std::filesystem::path& dir) {
  KernelProfileSet set;
  const auto& catalog = GpuCatalog::bundled();
  for (const auto& device : sorted_children(dir / "compute")) {
    const Gpu gpu = catalog.resolve(sku_of(device));
    for (const auto& org : sorted_children(device))
      for (const auto& model : sorted_children(org)) {
        auto samples =
            read_vidur_mlp(model / "mlp.csv", gpu, org.filename().string() + "/" + model.filename().string());
        set.compute.insert(set.compute.end(), samples.begin(), samples.end());
      }
  }
  for (const auto& node : sorted_children(dir / "network")) {
    auto samples = read_vidur_all_reduce(node / "all_reduce.csv", catalog.resolve(sku_of(node)));
    set.network.insert(set.network.end(), samples.begin(), samples.end());
  }
  if (set.compute.empty() || set.network.empty()) fail("{}: no Vidur compute or network profiles", dir.string());
  return set;
}

std::filesystem::path default_vidur_dir() { return data_dir() / "measured" / "vidur"; }

bool fitted_compute_op(const std::string& op) { return op != "emb"; }

double predict_sample_s(const KernelSample& s, const KernelParams& params) {
  if (s.work.kind == KernelClass::network)
    return kernel_time_s(s.work, s.roofs, KernelEfficiency{}, params.network(s.generation, s.group));
  return kernel_time_s(s.work, s.roofs, params.generation(s.generation), NetworkEfficiency{});
}

// ---- the bounded pattern search ----

namespace {

// One fitted parameter: its range, searched on a log scale when it spans more than a decade.
struct Axis {
  double lo = 0, hi = 0;
  bool log_scale = false;
  double value(double u) const { return log_scale ? lo * std::pow(hi / lo, u) : lo + (hi - lo) * u; }
  double unit(double v) const {
    const double u = log_scale ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
    return std::clamp(u, 0.0, 1.0);
  }
};

Axis axis_of(const std::string& name) {
  const ParamRange& r = kernel_param_range(name);
  return {r.lo, r.hi, r.lo > 0 && r.hi / r.lo > 10};  // a range from 0 is searched linearly
}

// Coordinate pattern search on the unit cube: tries +-step on each coordinate and keeps the first improvement, doubling
// the step after a success (to crawl along valleys) and halving it after a sweep without one, until the step is 1e-4
// of the range or 3000 sweeps. Deterministic; every point it evaluates is inside the bounds. Stops between sweeps when
// an interrupt is requested (core/interrupt.h: a whole fit takes ~20 s).
std::vector<double> pattern_search(const std::function<double(const std::vector<double>&)>& loss, std::vector<double> u,
                                   double& best) {
  best = loss(u);
  int sweeps = 0;
  for (double step = 0.25; step > 1e-4 && sweeps < 3000; ++sweeps) {
    check_interrupt();
    bool improved = false;
    for (size_t i = 0; i < u.size(); ++i)
      for (double sign : {1.0, -1.0}) {
        std::vector<double> trial = u;
        trial[i] = std::clamp(u[i] + sign * step, 0.0, 1.0);
        if (trial[i] == u[i]) continue;
        const double value = loss(trial);
        if (value < best) {
          best = value;
          u = std::move(trial);
          improved = true;
          break;
        }
      }
    step = improved ? std::min(0.25, 2 * step) : step / 2;
  }
  return u;
}

// Fits the fields `names` of `Struct` (starting from `start`) by the squared log error of `predict` over indices;
// two starts (the given values and the middle of every range), the better one kept. Samples are octave-weighted.
// Weights that give every octave of the sweep variable (tokens for compute, message bytes for the network) the same
// total weight per (GPU, operator): Vidur's token grid is 8 apart up to 32k, so unweighted, the prefill sizes would
// outvote the decode regime (1-16 tokens) that dominates inference time.
std::vector<double> octave_weights(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices) {
  auto octave_key = [&](size_t i) {
    const KernelSample& s = samples[i];
    const double x = s.work.kind == KernelClass::network ? s.size_bytes : s.tokens;
    return fmt::format("{}|{}|{}", s.gpu_id, s.op, static_cast<int>(std::floor(std::log2(std::max(1.0, x)))));
  };
  std::map<std::string, double> counts;
  for (size_t i : indices) counts[octave_key(i)] += 1;
  std::vector<double> weights;
  for (size_t i : indices) weights.push_back(1 / counts[octave_key(i)]);
  return weights;
}

template <typename Struct>
Struct fit_fields(const std::vector<std::pair<const char*, double Struct::*>>& fields, const Struct& start,
                  const std::function<double(const Struct&, const KernelSample&)>& predict,
                  const std::vector<KernelSample>& samples, const std::vector<size_t>& indices) {
  if (indices.empty()) fail("kernel fit: no samples to fit");
  const std::vector<double> weights = octave_weights(samples, indices);
  std::vector<Axis> axes;
  for (auto [name, field] : fields) axes.push_back(axis_of(name));
  auto to_struct = [&](const std::vector<double>& u) {
    Struct value = start;
    for (size_t i = 0; i < fields.size(); ++i) value.*(fields[i].second) = axes[i].value(u[i]);
    return value;
  };
  auto loss = [&](const std::vector<double>& u) {
    const Struct value = to_struct(u);
    double sum = 0;
    for (size_t k = 0; k < indices.size(); ++k) {
      const KernelSample& s = samples[indices[k]];
      const double error = std::log(predict(value, s) / s.measured_s);
      sum += weights[k] * error * error;
    }
    return sum;
  };
  std::vector<double> from_start, middle(fields.size(), 0.5);
  for (size_t i = 0; i < fields.size(); ++i) from_start.push_back(axes[i].unit(start.*(fields[i].second)));
  double loss_start = 0, loss_middle = 0;
  const auto u_start = pattern_search(loss, from_start, loss_start);
  const auto u_middle = pattern_search(loss, middle, loss_middle);
  return to_struct(loss_start <= loss_middle ? u_start : u_middle);
}

}  // namespace

const std::vector<std::string>& vidur_fitted_fields() {
  static const std::vector<std::string> fields = {"gemm_efficiency",   "gemm_tile_rows",    "memory_efficiency",
                                                  "memory_half_bytes", "vector_efficiency", "kernel_floor_s"};
  return fields;
}

KernelEfficiency fit_kernel_efficiency(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices) {
  return fit_kernel_efficiency(samples, indices, KernelEfficiency{}, vidur_fitted_fields());
}

KernelEfficiency fit_kernel_efficiency(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices,
                                       const KernelEfficiency& start, const std::vector<std::string>& names) {
  const auto fields = kernel_efficiency_fields(names);
  const std::function<double(const KernelEfficiency&, const KernelSample&)> predict =
      [](const KernelEfficiency& e, const KernelSample& s) { return kernel_time_s(s.work, s.roofs, e, {}); };
  return fit_fields(fields, start, predict, samples, indices);
}

NetworkEfficiency fit_network_efficiency(const std::vector<KernelSample>& samples, const std::vector<size_t>& indices) {
  const std::function<double(const NetworkEfficiency&, const KernelSample&)> predict =
      [](const NetworkEfficiency& n, const KernelSample& s) { return kernel_time_s(s.work, s.roofs, {}, n); };
  auto fields = network_efficiency_fields();
  const bool gpu_timed =
      std::all_of(indices.begin(), indices.end(), [&](size_t i) { return samples[i].engine == "nccl"; });
  if (!gpu_timed) std::erase_if(fields, [](const auto& f) { return std::string_view(f.first) == "call_latency_s"; });
  return fit_fields(fields, NetworkEfficiency{}, predict, samples, indices);
}

DirectAllReduceEfficiency fit_direct_allreduce_efficiency(const std::vector<KernelSample>& samples,
                                                          const std::vector<size_t>& indices,
                                                          const KernelParams& params) {
  const std::function<double(const DirectAllReduceEfficiency&, const KernelSample&)> predict =
      [&params](const DirectAllReduceEfficiency& d, const KernelSample& s) {
        return allreduce_s(s.work, s.roofs, params.network(s.generation, s.group), &d);
      };
  return fit_fields(direct_allreduce_fields(), DirectAllReduceEfficiency{}, predict, samples, indices);
}

// ---- the whole fit with held-out predictions ----

int size_decade(const KernelSample& s) { return static_cast<int>(std::floor(std::log10(s.size_bytes))); }

namespace {

std::set<std::string> distinct(const std::vector<KernelSample>& samples, std::string KernelSample::*field) {
  std::set<std::string> out;
  for (const auto& s : samples) out.insert(s.*field);
  return out;
}

void fit_compute(const std::vector<KernelSample>& samples, KernelFit& fit) {
  fit.compute_fitted_s.assign(samples.size(), 0);
  fit.compute_held_out_s.assign(samples.size(), 0);
  for (const auto& generation : distinct(samples, &KernelSample::generation)) {
    std::vector<size_t> all;
    for (size_t i = 0; i < samples.size(); ++i)
      if (samples[i].generation == generation && fitted_compute_op(samples[i].op)) all.push_back(i);
    const KernelEfficiency fitted = fit_kernel_efficiency(samples, all);
    fit.params.generations[generation] = fitted;
    std::set<std::string> models;
    for (size_t i = 0; i < samples.size(); ++i)
      if (samples[i].generation == generation) {
        models.insert(samples[i].group);
        fit.compute_fitted_s[i] = kernel_time_s(samples[i].work, samples[i].roofs, fitted, {});
      }
    for (const auto& model : models) {  // leave one model out
      std::vector<size_t> train;
      for (size_t i : all)
        if (samples[i].group != model) train.push_back(i);
      const KernelEfficiency held = fit_kernel_efficiency(samples, train);
      for (size_t i = 0; i < samples.size(); ++i)
        if (samples[i].generation == generation && samples[i].group == model)
          fit.compute_held_out_s[i] = kernel_time_s(samples[i].work, samples[i].roofs, held, {});
    }
  }
  // The mean of the fitted fields; the others (fitted on kernel tables by fit_kernel_tables) keep neutral values.
  const KernelEfficiency fitted_mean = mean_of(fit.params.generations, kernel_efficiency_fields());
  KernelEfficiency mean;
  for (auto [key, field] : kernel_efficiency_fields(vidur_fitted_fields())) mean.*field = fitted_mean.*field;
  fit.params.generations["default"] = mean;
}

// Fits one network entry on `all`, filling the fitted and leave-one-decade-out predictions of those samples.
NetworkEfficiency fit_network_entry(const std::vector<KernelSample>& samples, const std::vector<size_t>& all,
                                    std::vector<double>& fitted_s, std::vector<double>& held_out_s) {
  const NetworkEfficiency fitted = fit_network_efficiency(samples, all);
  for (size_t i : all) fitted_s[i] = kernel_time_s(samples[i].work, samples[i].roofs, {}, fitted);
  std::set<int> decades;
  for (size_t i : all) decades.insert(size_decade(samples[i]));
  for (int decade : decades) {  // leave one decade of message sizes out
    std::vector<size_t> train, test;
    for (size_t i : all) (size_decade(samples[i]) == decade ? test : train).push_back(i);
    const NetworkEfficiency held = fit_network_efficiency(samples, train);
    for (size_t i : test) held_out_s[i] = kernel_time_s(samples[i].work, samples[i].roofs, {}, held);
  }
  return fitted;
}

void fit_network(const std::vector<KernelSample>& samples, KernelFit& fit) {
  fit.network_fitted_s.assign(samples.size(), 0);
  fit.network_held_out_s.assign(samples.size(), 0);
  fit.network_other_gpu_s.assign(samples.size(), 0);
  std::map<std::string, NetworkEfficiency> pooled;
  for (const auto& link : distinct(samples, &KernelSample::group)) {
    std::vector<size_t> all;
    for (size_t i = 0; i < samples.size(); ++i)
      if (samples[i].group == link) all.push_back(i);
    pooled[link] = fit_network_efficiency(samples, all);
    for (const auto& generation : distinct(samples, &KernelSample::generation)) {
      std::vector<size_t> own, others;
      for (size_t i : all) (samples[i].generation == generation ? own : others).push_back(i);
      if (own.empty()) continue;
      fit.params.networks[generation + "/" + link] =
          fit_network_entry(samples, own, fit.network_fitted_s, fit.network_held_out_s);
      if (others.empty()) continue;
      const NetworkEfficiency other = fit_network_efficiency(samples, others);  // as a generation without profiles
      for (size_t i : own) fit.network_other_gpu_s[i] = kernel_time_s(samples[i].work, samples[i].roofs, {}, other);
    }
  }
  fit.params.networks.insert(pooled.begin(), pooled.end());
  fit.params.networks["default"] = mean_of(pooled, network_efficiency_fields());
}

}  // namespace

KernelFit fit_kernel_params(const KernelProfileSet& set) {
  KernelFit fit;
  fit_compute(set.compute, fit);
  fit_network(set.network, fit);
  return fit;
}

std::vector<OpScore> score_by_op(const std::vector<KernelSample>& samples, const std::vector<double>& fitted_s,
                                 const std::vector<double>& held_out_s, const std::vector<double>& other_gpu_s) {
  std::map<std::pair<std::string, std::string>, OpScore> scores;
  for (size_t i = 0; i < samples.size(); ++i) {
    const KernelSample& s = samples[i];
    OpScore& score = scores[{s.gpu_id, s.op}];
    score.gpu_id = s.gpu_id;
    score.op = s.op;
    ++score.samples;
    score.fitted_mape += std::abs(fitted_s[i] / s.measured_s - 1);
    score.held_out_mape += std::abs(held_out_s[i] / s.measured_s - 1);
    if (!other_gpu_s.empty()) score.other_gpu_mape += std::abs(other_gpu_s[i] / s.measured_s - 1);
    if (s.measured_s >= kLongKernelS) {
      ++score.long_samples;
      score.held_out_mape_long += std::abs(held_out_s[i] / s.measured_s - 1);
    }
  }
  std::vector<OpScore> out;
  for (auto& [key, score] : scores) {
    score.fitted_mape /= static_cast<double>(score.samples);
    score.held_out_mape /= static_cast<double>(score.samples);
    score.other_gpu_mape /= static_cast<double>(score.samples);
    if (score.long_samples) score.held_out_mape_long /= static_cast<double>(score.long_samples);
    out.push_back(score);
  }
  return out;
}

}  // namespace llmco2::calibration

// ---- report ----

namespace llmco2::calibration {

namespace {

// "at lower bound" / "at upper bound" / "" for a fitted value (within 0.5% of the range's width, log scale for wide
// ranges).
std::string bound_note(const std::string& name, double value) {
  const ParamRange& r = kernel_param_range(name);
  const bool wide = r.lo > 0 && r.hi / r.lo > 10;
  const double u = wide ? std::log(value / r.lo) / std::log(r.hi / r.lo) : (value - r.lo) / (r.hi - r.lo);
  if (u <= 0.005) return "lower bound";
  if (u >= 0.995) return "upper bound";
  return "";
}

std::string value_text(double value) { return fmt::format("{:.4g}", value); }

std::string compute_table(const std::vector<OpScore>& scores) {
  std::string md =
      "| GPU | operator | samples | fitted MAPE | held-out MAPE | held-out MAPE, kernels >= 10 us (samples) |\n"
      "|---|---|---:|---:|---:|---:|\n";
  for (const auto& s : scores)
    md += fmt::format("| {} | {}{} | {} | {} | {} | {} ({}) |\n", s.gpu_id, s.op,
                      fitted_compute_op(s.op) ? "" : " (not fitted)", s.samples, percent(s.fitted_mape),
                      percent(s.held_out_mape), s.long_samples ? percent(s.held_out_mape_long) : "-", s.long_samples);
  return md;
}

std::string network_table(const KernelProfileSet& set, const std::vector<OpScore>& scores) {
  std::map<std::pair<std::string, std::string>, std::string> link_of;
  for (const auto& s : set.network) link_of[{s.gpu_id, s.op}] = s.group;
  std::string md =
      "| GPU | collective | link class | samples | fitted MAPE | held-out MAPE (size decade out) | held-out MAPE, >= "
      "10 us "
      "(samples) | pooled class fitted on the other generation |\n"
      "|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& s : scores)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} ({}) | {} |\n", s.gpu_id, s.op, link_of[{s.gpu_id, s.op}],
                      s.samples, percent(s.fitted_mape), percent(s.held_out_mape),
                      s.long_samples ? percent(s.held_out_mape_long) : "-", s.long_samples, percent(s.other_gpu_mape));
  return md;
}

template <typename Struct>
std::string values_table(const std::map<std::string, Struct>& entries,
                         const std::vector<std::pair<const char*, double Struct::*>>& fields) {
  std::string md = "| parameter | range |";
  std::string rule = "|---|---|";
  for (const auto& [name, value] : entries) {
    md += " " + name + " |";
    rule += "---:|";
  }
  md += "\n" + rule + "\n";
  for (auto [name, field] : fields) {
    const ParamRange& r = kernel_param_range(name);
    md += fmt::format("| `{}` | [{:g}, {:g}] |", name, r.lo, r.hi);
    for (const auto& [entry, value] : entries) {
      // A value left at its built-in default was not fitted (fp8 and fp4 shares of GPUs without those units).
      const bool fitted = !(value.*field == Struct{}.*field);
      const std::string note = entry == "default" ? "" : fitted ? bound_note(name, value.*field) : "not fitted";
      const bool noted = !note.empty();
      md += fmt::format(" {}{}{}{} |", value_text(value.*field), noted ? " (" : "", note, noted ? ")" : "");
    }
    md += "\n";
  }
  return md;
}

std::string ranges_table() {
  std::string md = "| parameter | range | physical source |\n|---|---|---|\n";
  for (const auto& r : kernel_param_ranges())
    md += fmt::format("| `{}` | [{:g}, {:g}] | {} |\n", r.name, r.lo, r.hi, r.why);
  return md;
}

Json scores_json(const std::vector<OpScore>& scores) {
  Json out = Json::array();
  for (const auto& s : scores)
    out.push_back({{"gpu", s.gpu_id},
                   {"op", s.op},
                   {"samples", s.samples},
                   {"fitted_mape", s.fitted_mape},
                   {"held_out_mape", s.held_out_mape},
                   {"held_out_mape_long", s.held_out_mape_long}});
  return out;
}

}  // namespace

std::string plot_kernel_fit(const KernelProfileSet& set, const KernelFit& fit, const std::filesystem::path& png) {
  std::map<std::string, std::string> blocks;  // GPU -> "measured predicted" lines
  auto add = [&](const std::vector<KernelSample>& samples, const std::vector<double>& predicted) {
    for (size_t i = 0; i < samples.size(); ++i)
      if (fitted_compute_op(samples[i].op) || samples[i].work.kind == KernelClass::network)
        blocks[samples[i].gpu_id] += fmt::format("{:.4g} {:.4g}\n", samples[i].measured_s * 1e6, predicted[i] * 1e6);
  };
  add(set.compute, fit.compute_held_out_s);
  add(set.network, fit.network_held_out_s);
  std::string script, plot = "plot x notitle lc rgb 'black' dt 2";
  int k = 0;
  for (const auto& [gpu, lines] : blocks) {
    script += gnuplot_datablock(fmt::format("d{}", k), lines);
    plot += fmt::format(", $d{} using 1:2 with points pt 7 ps 0.25 title \"{}\"", k++, gnuplot_text(gpu));
  }
  script +=
      "set logscale xy\nset xlabel 'measured (us)'\nset ylabel 'predicted, held out (us)'\n"
      "set title 'Vidur operators and all-reduces: held-out kernel-time predictions'\n"
      "set key top left\nset grid\n" +
      plot + "\n";
  return plot_to_file(script, png, 900, 700);
}

Json kernel_fit_json(const KernelProfileSet& set, const KernelFit& fit) {
  Json j = kernel_params_to_json(fit.params);
  j["fit"] = {{"source", "data/measured/vidur (Vidur operator profiles, microsoft/vidur 7d47513); docs/kernel-fit.md"},
              {"compute", scores_json(score_by_op(set.compute, fit.compute_fitted_s, fit.compute_held_out_s))},
              {"network", scores_json(score_by_op(set.network, fit.network_fitted_s, fit.network_held_out_s,
                                                  fit.network_other_gpu_s))}};
  return j;
}

std::string kernel_fit_markdown(const KernelProfileSet& set, const KernelFit& fit, const std::string& plot,
                                const std::string& command) {
  std::string md = "# Kernel-time fit on measured kernel profiles\n\n";
  md += fmt::format(
      "Generated by `{}`; do not edit. Parameters: [data/sim/kernels.json](../data/sim/kernels.json); "
      "data: [data/measured/vidur](../data/measured/vidur/README.md) ({} operator samples) and all-reduces ({}: "
      "Vidur's over NVLink pairs, PCIe and, eager, NVSwitch; NVIDIA AIConfigurator's nccl-tests rows over NVSwitch, "
      "last section). "
      "Model: `sim/kernel_time.h` (`kernel_time_s`).\n\n",
      command, set.compute.size(), set.network.size());
  md +=
      "## Method\n\n"
      "- Measured: the median of Vidur's repeated CUDA timings of each operator (fp16, Sarathi-Serve/vLLM kernels, "
      "torch profiler kernel durations at 1 us resolution), per num_tokens (the GEMM rows) and TP degree.\n"
      "- Work: operations and DRAM bytes counted from the shapes (formulas in "
      "`calibration/kernel_profiles.cc`); roofs from the GPU catalog: A100 -> `a100-80gb-sxm` (312 TFLOP/s fp16, "
      "2,039 GB/s), H100 -> `h100-sxm` (989 TFLOP/s, 3,350 GB/s); Vidur's all-reduce links: pairwise -> "
      "`a100-80gb-pcie` / `h100-nvl` (NVLink bridge for 2 GPUs, PCIe for 4), DGX -> the SXM boards' NVSwitch as class "
      "`nvswitch-eager`: Vidur times eager torch.distributed calls, one process per GPU (small messages a median 21-46 "
      "us "
      "where nccl-tests measures 6-22 us on the same GPUs; 1-16 MiB on its A100 DGX 4-12x nccl-tests'), which is "
      "what an engine without CUDA graphs pays per all-reduce; AIConfigurator's nccl-tests rows (A100 to GB300) are "
      "class `nvswitch`, what CUDA-graph engines pay.\n"
      "- Fit: per generation (ampere, hopper) the KernelEfficiency fields the operators identify (GEMM, memory, "
      "element-wise and floor terms; the attention terms and fp8/fp4 shares come from the kernel tables below), and "
      "per "
      "generation and link class the NetworkEfficiency fields (`call_latency_s` on the nccl-tests rows only), "
      "minimising the squared log error by a bounded "
      "deterministic pattern "
      "search inside the ranges below. Every octave of tokens (message bytes) gets the same weight per GPU and "
      "operator, so the decode regime (1-16 tokens) is not outvoted by the dense prefill grid.\n"
      "- Held out: compute, leave one model out (fit on the other models of that GPU, predict this one); network, "
      "leave one decade of message sizes out (per generation and link class), and the pooled class fitted on the "
      "other generations only (how a GPU without profiles fares). MAPE = mean |predicted / measured - 1|.\n"
      "- Vidur's attention profiles are not bundled: the attention terms are fitted on NVIDIA's AIConfigurator "
      "tables (last section).\n"
      "- `emb` (the embedding gather) is scored but not fitted: PyTorch's gather reaches only 0.15-0.18 of the HBM "
      "bandwidth on both GPUs, which a shared memory efficiency cannot express without distorting every other "
      "kernel.\n\n";
  md +=
      "## Fitted values\n\nKernel efficiency per generation (`default` = mean of the fitted generations, used for "
      "GPUs of other generations with their own datasheet peaks; ada and blackwell, and every attention and fp8/fp4 "
      "term, from the kernel tables below):\n\n";
  md += values_table(fit.params.generations, kernel_efficiency_fields()) + "\n";
  md +=
      "Network (NCCL's ring: `call_latency_s + 2 (n - 1) step_latency_s + bytes / (link x bus_efficiency)`) per "
      "generation and link class (what that generation's GPUs use), per link class pooled over the generations (what "
      "GPUs of other generations use), `default` = mean of the pooled classes:\n\n";
  md += values_table(fit.params.networks, network_efficiency_fields()) + "\n";
  md += "## Compute operators\n\n" +
        compute_table(score_by_op(set.compute, fit.compute_fitted_s, fit.compute_held_out_s)) + "\n";
  md += "## All-reduce\n\n" +
        network_table(set,
                      score_by_op(set.network, fit.network_fitted_s, fit.network_held_out_s, fit.network_other_gpu_s)) +
        "\n";
  if (!plot.empty()) md += fmt::format("![held-out predicted vs measured]({})\n\n", plot);
  md +=
      "## What limits the fit\n\n"
      "- GEMMs (`*_proj`): see the table for their held-out error. What remains is tile and wave "
      "quantisation (times step at row counts that fill another tile wave) and, at 1-16 rows, weight streaming "
      "that reaches only ~0.7-0.8 of HBM while the largest element-wise adds reach ~0.9-1.0 (L2 hits on a tensor "
      "just written): one memory efficiency serves both.\n"
      "- Element-wise kernels below ~10 us are launch-bound: the profiler's 1 us resolution alone is 10-100% of a "
      "1-4 us kernel, and their fixed cost differs by kernel (residual add ~1-2 us, RMSNorm ~4-6 us, SiLU x up "
      "~2-7 us) while the model has one `kernel_floor_s`. The column for kernels >= 10 us shows the part the model "
      "can be asked to get right.\n"
      "- `memory_half_bytes` ends at its lower bound: with a fixed floor already in every kernel, the data want no "
      "separate bandwidth ramp (the floor plays that role).\n"
      "- All-reduce: Vidur's small messages (< ~1 MB) take 7-60 us without a trend in size (host timing of an "
      "eager call, rank skew), so its classes (`nvlink-pair`, `pcie`, `nvswitch-eager`) keep the two-field ring "
      "(`call_latency_s` 0) and no single `step_latency_s` fits 2, 4 and 8 GPUs there; over NVSwitch nccl-tests' "
      "time grows 2.2-2.6x from 2 to 8 GPUs, which the fixed `call_latency_s` carries beside the ring steps; mid sizes "
      "(1-64 MiB) reach less of the link than 512 MiB "
      "does (protocol switches), which one `bus_efficiency` averages.\n\n";
  md += "## Parameter ranges\n\n" + ranges_table();
  return md;
}

}  // namespace llmco2::calibration
