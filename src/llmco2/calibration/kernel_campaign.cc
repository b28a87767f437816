// calibration/kernel_campaign.cc - our own kernel campaign's CSVs as kernel samples with the simulator's work.
#include "calibration/kernel_campaign.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/json_io.h"
#include "graph/layer_kernels.h"
#include "hardware/gpu_catalog.h"

namespace llmco2::calibration {

namespace {

constexpr double kActivationBytes = 2;  // bf16 queries, outputs and GEMM outputs

// One step of a phase of `batch` sequences of `prompt` tokens with a `kv_bytes` cache, as the graph's cost functions
// see it: the whole prompt in prefill, one generated token in decode.
graph::PhaseShape attention_phase(Phase phase, double batch, long prompt, double kv_bytes) {
  graph::PhaseShape s;
  s.phase = phase;
  s.batch = batch;
  s.tokens = phase == Phase::prefill ? batch * static_cast<double>(prompt) : batch;
  s.steps = 1;
  s.act_bytes = kActivationBytes;
  s.kv_bytes = kv_bytes;
  s.prompt_tokens = prompt;
  s.gen_tokens = 2;  // decode: one step, whose query is token prompt + 1
  return s;
}

// One attention launch of cost `c` in step `s` on the bf16 tensor peak, as the simulator turns a graph node into
// KernelWork (one step: the phase's cost is the launch's).
KernelWork kernel_work(const graph::KernelCost& c, const graph::PhaseShape& s, const Gpu& gpu) {
  KernelWork w;
  w.kind = KernelClass::attention;
  w.ops = c.ops;
  w.mem_bytes = c.mem_bytes();
  w.rows = s.tokens;
  w.keys_per_query = c.keys_per_query();
  w.peak_ops_per_s = gpu.matrix_peak(DType::bf16).ops_per_s;
  return w;
}

// The fused attention launch of `heads` query heads over `kv_heads` KV heads of `head_dim` on the bf16 tensor peak:
// the simulator's own work (graph::fused_attention_cost), so a table is scored against what a prediction runs.
KernelWork attention_work(const graph::PhaseShape& s, int heads, int kv_heads, int head_dim, const Gpu& gpu) {
  graph::AttentionShape shape{heads, kv_heads, head_dim,
                              graph::attention_span(s.phase, s.prompt_tokens, s.gen_tokens, true, LayerAttention{})};
  return kernel_work(graph::fused_attention_cost(s, shape), s, gpu);
}

KernelSample sample_of(const Gpu& gpu, std::string op, std::string group, double tokens, const KernelWork& work,
                       double measured_s) {
  KernelSample s;
  s.gpu_id = gpu.id;
  s.generation = gpu_generation(gpu);
  s.group = std::move(group);
  s.op = std::move(op);
  s.tokens = static_cast<int>(tokens);
  s.work = work;
  s.roofs = {gpu.memory_bandwidth_bytes_per_s, 0, 1};
  s.measured_s = measured_s;
  return s;
}

// Rows of `file` that ran (an empty error cell), each checked for width; the others counted in `skipped`.
std::vector<const CsvTable::Record*> ran(const CsvTable& table, int* skipped) {
  std::vector<const CsvTable::Record*> out;
  for (const auto& record : table.records) {
    check_record_width(table, record);
    if (!cell_text(table, record, "error").empty()) {
      if (skipped) ++*skipped;
      continue;
    }
    out.push_back(&record);
  }
  return out;
}

void read_gemms(const CsvTable& t, const Gpu& gpu, std::vector<KernelSample>& out, int* skipped) {
  for (const auto* r : ran(t, skipped)) {
    const std::string& dtype = cell_text(t, *r, "dtype");
    if (dtype != "bf16" && dtype != "fp8") fail("{}:{}: dtype '{}' (expected bf16 or fp8)", t.source, r->line, dtype);
    const double m = cell_positive(t, *r, "m"), n = cell_positive(t, *r, "n"), k = cell_positive(t, *r, "k");
    out.push_back(sample_of(gpu, "gemm " + dtype, cell_text(t, *r, "name"), m, campaign_gemm_work(m, n, k, dtype, gpu),
                            cell_positive(t, *r, "time_s")));
  }
}

void read_attention(const CsvTable& t, const Gpu& gpu, std::vector<KernelSample>& out, int* skipped) {
  for (const auto* r : ran(t, skipped)) {
    const std::string& phase = cell_text(t, *r, "phase");
    const std::string& kv = cell_text(t, *r, "kv_dtype");
    if (kv != "bf16" && kv != "fp8") fail("{}:{}: kv_dtype '{}' (expected bf16 or fp8)", t.source, r->line, kv);
    const double batch = cell_positive(t, *r, "batch"), context = cell_positive(t, *r, "context");
    const std::string group = fmt::format("b={} ctx={}", batch, context);
    const double time_s = cell_positive(t, *r, "time_s");
    if (phase == "decode") {
      const std::string op = kv == "bf16" ? "decode attention bf16" : "decode attention fp8 via bf16 copy";
      out.push_back(sample_of(gpu, op, group, batch,
                              campaign_decode_attention_work(batch, context, kv == "fp8" ? 1.0 : 2.0, gpu), time_s));
    } else if (phase == "prefill") {
      out.push_back(sample_of(gpu, "prefill attention bf16", group, context,
                              campaign_prefill_attention_work(context, gpu), time_s));
    } else {
      fail("{}:{}: phase '{}' (expected decode or prefill)", t.source, r->line, phase);
    }
  }
}

}  // namespace

KernelWork campaign_gemm_work(double m, double n, double k, const std::string& dtype, const Gpu& gpu) {
  constexpr double kScaleBlock = 128, kFp32Bytes = 4;  // DeepSeek-style block scaling: 1 x 128 and 128 x 128 blocks
  constexpr double kFp4ScaleBytes = 1.0 / 16;          // NVFP4: one fp8 (E4M3) scale per 16 elements
  double input_bytes = 2, scale_bytes = 0;
  DType peak = DType::bf16;
  KernelWork w;
  if (dtype == "fp8" || dtype == "fp8_block") {
    input_bytes = 1, peak = DType::fp8;
    w.block_scaled = dtype == "fp8_block";
    if (!w.block_scaled) w.narrow = NarrowGemm::fp8;
    if (w.block_scaled) scale_bytes = kFp32Bytes * (m * k / kScaleBlock + n * k / (kScaleBlock * kScaleBlock));
  } else if (dtype == "nvfp4") {
    input_bytes = 0.5 + kFp4ScaleBytes, peak = DType::fp4;
    w.narrow = NarrowGemm::fp4;
  } else if (dtype != "bf16") {
    fail("GEMM dtype '{}' (expected bf16, fp8, fp8_block or nvfp4)", dtype);
  }
  w.kind = KernelClass::matrix;
  w.ops = 2 * m * n * k;
  w.mem_bytes = (m * k + n * k) * input_bytes + scale_bytes + m * n * kActivationBytes;
  w.rows = m;
  w.peak_ops_per_s = gpu.matrix_peak(peak).ops_per_s;
  return w;
}

KernelWork campaign_decode_attention_work(double batch, double context, double kv_bytes, const Gpu& gpu, int heads,
                                          int kv_heads, int head_dim) {
  // One decode step of `batch` sequences whose prompts hold context - 1 tokens: the query is token `context`.
  return attention_work(attention_phase(Phase::decode, batch, static_cast<long>(context) - 1, kv_bytes), heads,
                        kv_heads, head_dim, gpu);
}

KernelWork campaign_prefill_attention_work(double tokens, const Gpu& gpu, int heads, int kv_heads, int head_dim,
                                           double batch, double kv_bytes) {
  return attention_work(attention_phase(Phase::prefill, batch, static_cast<long>(tokens), kv_bytes), heads, kv_heads,
                        head_dim, gpu);
}

KernelWork mla_attention_work(graph::Phase phase, double batch, long tokens, int heads, double kv_bytes,
                              const Gpu& gpu) {
  constexpr long kLatent = 512, kRope = 64, kNope = 128, kValue = 128;  // DeepSeek-V3's config.json
  // Decode: one step whose query is token `tokens` (tokens - 1 cached before it).
  const long prompt = phase == Phase::prefill ? tokens : tokens - 1;
  const graph::PhaseShape s = attention_phase(phase, batch, prompt, kv_bytes);
  const graph::MlaShape shape{
      heads,   kNope + kRope, kValue,
      kLatent, kRope,         graph::attention_span(phase, s.prompt_tokens, s.gen_tokens, true, LayerAttention{})};
  KernelWork w = kernel_work(graph::mla_attention_cost(s, shape), s, gpu);
  w.latent = phase == Phase::decode;  // as the simulator marks a latent-attention model's decode (set_sim_kernel)
  return w;
}

Gpu campaign_gpu(const std::filesystem::path& dir) {
  const auto path = dir / "env.json";
  const Json env = read_json_file(path);
  if (!env.is_object() || !env.contains("device") || !env["device"].is_string())
    fail("{}: expected an object with \"device\" (the GPU's name as nvidia-smi prints it)", path.string());
  return GpuCatalog::bundled().resolve(env["device"].get<std::string>(), false);
}

std::vector<KernelSample> read_campaign_kernels(const std::filesystem::path& dir, const Gpu& gpu, int* skipped) {
  std::vector<KernelSample> out;
  read_gemms(read_csv_file(dir / "gemm.csv"), gpu, out, skipped);
  read_attention(read_csv_file(dir / "attention.csv"), gpu, out, skipped);
  return out;
}

std::vector<CampaignClosedLoop> read_campaign_closed_loop(const std::filesystem::path& dir) {
  const CsvTable t = read_csv_file(dir / "closed_loop.csv");
  std::map<std::pair<std::string, int>, CampaignClosedLoop> by_setup;
  const auto dtype_column = t.find_column("dtype");
  for (const auto* r : ran(t, nullptr)) {
    if (cell_number(t, *r, "warmup") != 0) continue;
    const int clients = static_cast<int>(cell_positive(t, *r, "clients"));
    const std::string dtype = dtype_column ? r->cells.at(*dtype_column) : "bf16";
    if (dtype != "bf16" && dtype != "fp8") fail("{}:{}: dtype '{}' (expected bf16 or fp8)", t.source, r->line, dtype);
    CampaignClosedLoop& c = by_setup[{dtype, clients}];
    c.dtype = dtype;
    const long isl = static_cast<long>(cell_positive(t, *r, "isl")),
               osl = static_cast<long>(cell_positive(t, *r, "osl"));
    if (c.rounds > 0 && (c.isl != isl || c.osl != osl))
      fail("{}:{}: {} clients with other lengths than its earlier rounds", t.source, r->line, clients);
    if (osl < 2) fail("{}:{}: osl {} (expected >= 2: one prefill token and decode steps)", t.source, r->line, osl);
    c.clients = clients, c.isl = isl, c.osl = osl;
    ++c.rounds;
    c.prefill_s += cell_positive(t, *r, "prefill_s");
    c.itl_s += cell_positive(t, *r, "itl_s");
    c.energy_j += cell_positive(t, *r, "energy_j");
    c.avg_power_w += cell_positive(t, *r, "avg_power_w");
  }
  std::vector<CampaignClosedLoop> out;
  for (auto& [setup, c] : by_setup) {
    const double n = c.rounds;
    c.prefill_s /= n, c.itl_s /= n, c.energy_j /= n, c.avg_power_w /= n;
    out.push_back(c);
  }
  if (out.empty()) fail("{}: no timed round (every row is a warm-up or failed)", t.source);
  return out;
}

}  // namespace llmco2::calibration
