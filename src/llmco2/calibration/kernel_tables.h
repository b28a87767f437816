// calibration/kernel_tables.h - NVIDIA's AIConfigurator kernel tables (GEMMs per dtype, prefill and decode attention,
// timed inside vLLM, SGLang and TensorRT-LLM on Ampere, Ada, Hopper and Blackwell GPUs; data/measured/aiconfigurator)
// as kernel samples with the simulator's work, and the fit of the generations Vidur's profiles do not cover.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/kernel_profiles.h"
#include "calibration/module.h"
#include "core/csv.h"
#include "core/json_io.h"
#include "hardware/gpu.h"

namespace llmco2::calibration {

// The tables read: every sample (KernelSample::engine "vllm", "sglang" or "trtllm"; op "gemm bf16", "gemm fp8",
// "gemm fp8_block", "gemm nvfp4", "prefill attention", "prefill attention fp8-kv", "decode attention",
// "decode attention fp8-kv", "prefill mla", "decode mla" and their "fp8-kv" kin; group: the shape a
// leave-one-shape-out fold leaves out, "n=4096 k=8192", "heads=64 kv=8" or (MLA) "heads=16"), and the systems whose GPU
// the catalog lacks (their rows are not read).
struct KernelTableSet {
  std::vector<KernelSample> samples;
  std::vector<std::string> skipped_systems;  // "b300_sxm (no catalog GPU 'b300')"
};

// The catalog GPU of each AIConfigurator system folder ("h100_sxm" -> "h100-sxm"); data/measured/aiconfigurator's
// README gives the device name each table names.
const std::map<std::string, std::string>& kernel_table_gpus();

// The catalog GPUs of the tables' systems, looked up once per system; a system whose GPU the catalog lacks is recorded
// in `skipped` ("b300_sxm (no catalog GPU 'b300')").
class SystemGpus {
 public:
  explicit SystemGpus(std::vector<std::string>& skipped) : skipped_(skipped) {}
  // The GPU of the record's "system" cell, or nullptr when the catalog lacks it; throws Error (file:line) for a
  // system kernel_table_gpus does not name.
  const Gpu* of(const CsvTable& table, const CsvTable::Record& record);

 private:
  std::map<std::string, std::optional<Gpu>> gpus_;
  std::vector<std::string>& skipped_;
};

// Reads dir/gemm.csv, dir/context_attention.csv, dir/generation_attention.csv and dir/mla.csv
// (scripts/import_aiconfigurator.py).
// Throws Error naming file:line for a malformed row, an unknown system or dtype.
KernelTableSet read_kernel_tables(const std::filesystem::path& dir);
// data_dir()/measured/aiconfigurator.
std::filesystem::path default_kernel_tables_dir();

// The shared simulator parameter the kernel-time model takes beside a generation's curve (params.json's
// block_scaled_efficiency): what the simulator runs a table's kernel with.
struct SharedKernelValues {
  double block_scaled_efficiency = 0.7;
};

// Seconds of a table sample under `params` with the shared values, as the simulator would time it.
double predict_table_s(const KernelSample& sample, const KernelParams& params, const SharedKernelValues& shared);

// What a sample's family fits: the GEMM fields (bf16 GEMMs, generations without Vidur profiles only), the
// attention fields (prefill and decode attention over a bf16 KV cache) and the MLA fields (DeepSeek-V3's latent
// attention over a bf16 cache); the rest (fp8, block-scaled fp8 and NVFP4
// GEMMs, whose tables time the engine's whole quantised layer, and fp8 KV caches) is scored only.
enum class TableFamily { gemm, attention, mla, scored_only };
TableFamily table_family(const KernelSample& sample);

// The fit of every generation the tables cover, family by family (TableFamily), engines pooled; written into
// `params` (the Vidur fit: its generations keep their Vidur-fitted fields; Blackwell and Ada get their GEMM fields
// here, the rest of theirs from "default"). The default entry's table-fitted fields become the mean over the
// generations that fitted them. Held out: leave one shape out ((n, k) of a GEMM, (heads, KV heads) of attention);
// leave one GPU of the generation out (fitted on its other GPUs). In a generation of 3+ GPUs, a GPU that the others'
// curve misses by more than 35% (leave-one-GPU-out MAPE) gets an entry of its own (KernelParams::gpus), fitted on its
// own tables from the curve of the others; its GPU-out predictions are that curve's.
struct KernelTableFit {
  std::map<std::string, KernelEfficiency> generations;  // fitted here
  std::map<std::string, KernelEfficiency> gpus;         // GPUs with an entry of their own (KernelParams::gpus)
  KernelEfficiency default_entry;
  std::vector<double> fitted_s;          // per sample
  std::vector<double> held_out_shape_s;  // the generation's fit without the sample's shape
  std::vector<double> held_out_gpu_s;    // generations with 2+ GPUs: the fit without the sample's GPU; else 0
};
// With `show_progress`, a progress line per generation fitted on stderr (the whole fit takes ~40 s).
KernelTableFit fit_kernel_tables(const std::vector<KernelSample>& samples, KernelParams& params,
                                 const SharedKernelValues& shared, bool show_progress = false);

// One (GPU, engine, op) group of the tables: samples, MAPE and median predicted / measured after the fit, held out by
// shape and by GPU.
struct TableScore {
  std::string gpu_id, engine, op;
  size_t samples = 0;
  double fitted_mape = 0, held_out_shape_mape = 0, held_out_shape_ratio = 0;  // ratio: median predicted / measured
  double held_out_gpu_mape = -1;  // -1: no other GPU of the generation to fit on
};
// The groups of any table fit from its per-sample predictions (held_out_gpu_s 0: no GPU-out prediction).
std::vector<TableScore> score_tables(const std::vector<KernelSample>& samples, const std::vector<double>& fitted_s,
                                     const std::vector<double>& held_out_shape_s,
                                     const std::vector<double>& held_out_gpu_s);
std::vector<TableScore> score_kernel_tables(const std::vector<KernelSample>& samples, const KernelTableFit& fit);

// The scores as kernels.json's "fit.tables" records (gpu, engine, op, samples, fitted_mape, held_out_shape_mape,
// held_out_gpu_mape or null), read back by the tests.
Json kernel_tables_json(const std::vector<TableScore>& scores);

// The report section on the tables (Markdown), for docs/kernel-fit.md.
std::string kernel_tables_markdown(const KernelTableSet& set, const KernelTableFit& fit);

}  // namespace llmco2::calibration
