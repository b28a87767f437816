// predictor/model_file.h - the versioned, checksummed container of a trained predictor: a JSON header (kind,
// features, normalisation, training facts), float tensors and opaque byte blobs (e.g. an XGBoost model).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "predictor/module.h"

namespace llmco2::predictor {

inline constexpr int kModelFileVersion = 1;

struct Tensor {
  std::vector<long> shape;
  std::vector<float> values;  // row-major
};

struct ModelFile {
  Json header;  // at least "kind"
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> blobs;
};

// Layout: "LLMCO2PM" | u32 version | u64 header length | header JSON | payload (tensors as little-endian f32, then
// blobs, in the order the header's "entries" list them) | u64 FNV-1a checksum of everything before it.
std::string serialize_model_file(const ModelFile& file);
// The checksum a model file ends with: 64-bit FNV-1a of every byte before it.
uint64_t model_file_checksum(std::string_view bytes);
ModelFile parse_model_file(const std::string& bytes, const std::string& source);

void write_model_file(const std::filesystem::path& path, const ModelFile& file);  // atomic
// Throws Error naming the file: not a model file, another format version, truncated, checksum mismatch, bad header.
ModelFile read_model_file(const std::filesystem::path& path);

// The tensor `name` with exactly `shape`; throws Error naming the file otherwise.
const Tensor& expect_tensor(const ModelFile& file, const std::string& name, const std::vector<long>& shape,
                            const std::string& source);

}  // namespace llmco2::predictor
