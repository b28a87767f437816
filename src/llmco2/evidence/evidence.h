// evidence/evidence.h - how close a request is to what was measured: its setup's key (GPU, its generation and vendor,
// engine, precision path, model family, batch and context regime), the index of the measured rows' keys
// (data/evidence/index.csv, written by `llmco2 validate`), and a label with the nearest measured sources:
// `calibrated` (rows of the same GPU, engine version, precision path and regime), `interpolated` (the same generation,
// engine and precision path within one regime band, any version of the engine) or `extrapolated` (nothing that close).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "evidence/module.h"
#include "hardware/gpu.h"

namespace llmco2::evidence {

enum class EvidenceLabel { calibrated, interpolated, extrapolated };
inline constexpr EvidenceLabel kEvidenceLabels[] = {EvidenceLabel::calibrated, EvidenceLabel::interpolated,
                                                    EvidenceLabel::extrapolated};
std::string_view label_name(EvidenceLabel label);
std::optional<EvidenceLabel> parse_label(std::string_view text);

// Regime bands, each a factor of 4 wide: requests in flight (the batch, or the mean running batch under load)
// 1-3 -> 0, 4-15 -> 1, 16-63 -> 2, 64-255 -> 3, 256 and more -> 4; tokens of context (prompt + generated)
// below 1024 -> 0, 1024-4095 -> 1, 4096-16383 -> 2, 16384-65535 -> 3, 65536 and more -> 4.
inline constexpr int kBands = 5;
int batch_band(double batch);
int context_band(double tokens);
std::string batch_band_name(int band);    // "batch 16-63"
std::string context_band_name(int band);  // "context 1k-4k"

// The GPU's architecture generation as its vendor names it ("ampere", "ada", "hopper", "blackwell", "cdna3", ...),
// from the catalog's architecture text (its die names count: "GA102" is Ampere, "GH100" Hopper).
std::string evidence_generation(const Gpu& gpu);

// The precision path, i.e. which units and bytes the matrix products run on: "16-bit" (bf16, fp16, fp32),
// "w8a16" / "w4a16" (narrow weights dequantised to 16 bits), else the tensor type of 1-byte or 4-bit GEMMs
// ("fp8", "int8", "fp4").
std::string precision_path(const Precision& precision);

// The engine without its version or mode ("vllm-v0", "vllm-0.2", "vllm-eager" -> "vllm";
// "hf-transformers-no-kv-cache" -> "hf-transformers"): versions of one engine share its scheduler and kernels.
std::string_view engine_family(std::string_view engine);

struct EvidenceKey {
  std::string gpu, generation, vendor, engine, precision, family;
  int batch_band = 0, context_band = 0;
};
// The key of a setup: `gpu` resolved from the catalog, the rest as the request or row states them.
EvidenceKey evidence_key(const Gpu& gpu, const std::string& engine, const Precision& precision,
                         const std::string& family, double batch, double context_tokens);
// "h100-sxm, vllm, 16-bit, batch 16-63, context 1k-4k"
std::string describe(const EvidenceKey& key);

// Measured rows of one source that share a key.
struct EvidenceEntry {
  std::string source;
  EvidenceKey key;
  long rows = 0;
  std::string engine_family;  // engine_family(key.engine), worked out once: assess compares it for every entry
};

struct NearSource {
  std::string source, setup;  // the source and its nearest setup (describe())
  long rows = 0;              // its rows of that setup
  double distance = 0;
};

struct Evidence {
  EvidenceLabel label = EvidenceLabel::extrapolated;
  std::string reason;               // one sentence: what was measured that close, or what is missing
  std::vector<NearSource> nearest;  // up to three sources, nearest first
};

// How far a measured setup is from a request's: 4 for another vendor, 2 for another generation, 1 for another GPU of
// it; 2 for another engine (0.5 for another version of it), 1 for another precision path, 0.5 for another model
// family; plus the regime bands apart.
double evidence_distance(const EvidenceKey& a, const EvidenceKey& b);

class EvidenceIndex {
 public:
  // Adds `rows` rows of `source` with `key` (merged with an equal key of the same source).
  void add(const std::string& source, const EvidenceKey& key, long rows = 1);
  const std::vector<EvidenceEntry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  // The evidence for `key` from the entries `excluded` does not reject (all when it is empty): a held-out study
  // excludes the held-out source's or GPU's rows.
  Evidence assess(const EvidenceKey& key, const std::function<bool(const EvidenceEntry&)>& excluded = {}) const;

 private:
  std::vector<EvidenceEntry> entries_;
};

// data/evidence/index.csv: source, gpu, generation, vendor, engine, precision, family, batch_band, context_band, rows.
// Reading throws Error naming the file, line and column; writing is atomic.
EvidenceIndex read_evidence_index(const std::filesystem::path& path);
void write_evidence_index(const std::filesystem::path& path, const EvidenceIndex& index);
std::filesystem::path default_evidence_index_path();  // data_dir()/evidence/index.csv

}  // namespace llmco2::evidence
