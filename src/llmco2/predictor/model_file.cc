// predictor/model_file.cc - writing and checking model files.
#include "predictor/model_file.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/checksum.h"
#include "core/csv.h"
#include "core/error.h"

namespace llmco2 {
namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'C', 'O', '2', 'P', 'M'};
static_assert(std::endian::native == std::endian::little, "model files are little-endian");

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
T get(const std::string& bytes, size_t& at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  at += sizeof value;
  return value;
}

long element_count(const std::vector<long>& shape) {
  return std::accumulate(shape.begin(), shape.end(), 1L, std::multiplies<>());
}

}  // namespace

std::string serialize_model_file(const ModelFile& file) {
  Json header = file.header;
  Json entries = Json::array();
  for (const auto& [name, t] : file.tensors) {
    if (element_count(t.shape) != static_cast<long>(t.values.size()))
      fail("model tensor '{}' has {} values for shape of {}", name, t.values.size(), element_count(t.shape));
    entries.push_back({{"name", name}, {"type", "f32"}, {"shape", t.shape}});
  }
  for (const auto& [name, blob] : file.blobs) entries.push_back({{"name", name}, {"type", "bytes"}, {"size", blob.size()}});
  header["entries"] = entries;
  const std::string text = header.dump();
  std::string out(kMagic, sizeof kMagic);
  put<uint32_t>(out, kModelFileVersion);
  put<uint64_t>(out, text.size());
  out += text;
  for (const auto& [name, t] : file.tensors)
    out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  for (const auto& [name, blob] : file.blobs) out += blob;
  put<uint64_t>(out, fnv1a64(out));
  return out;
}

ModelFile parse_model_file(const std::string& bytes, const std::string& source) {
  const size_t fixed = sizeof kMagic + sizeof(uint32_t) + sizeof(uint64_t);
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    fail("{}: not an llmco2 model file (expected it to start with 'LLMCO2PM')", source);
  if (bytes.size() < fixed + sizeof(uint64_t)) fail("{}: truncated model file ({} bytes)", source, bytes.size());
  size_t at = sizeof kMagic;
  const auto version = get<uint32_t>(bytes, at);
  if (version != kModelFileVersion)
    fail("{}: model file format version {}, this build reads version {} (retrain with llmco2 train)", source, version,
         kModelFileVersion);
  const size_t body = bytes.size() - sizeof(uint64_t);
  size_t checksum_at = body;
  if (get<uint64_t>(bytes, checksum_at) != fnv1a64(std::string_view(bytes).substr(0, body)))
    fail("{}: checksum mismatch: the model file is corrupt or truncated", source);
  const auto header_size = get<uint64_t>(bytes, at);
  if (header_size > body - at) fail("{}: truncated model file (header of {} bytes)", source, header_size);
  ModelFile file;
  try {
    file.header = Json::parse(bytes.substr(at, header_size));
  } catch (const Json::exception& e) {
    fail("{}: model header is not JSON: {}", source, e.what());
  }
  at += header_size;
  if (!file.header.contains("kind") || !file.header.contains("entries"))
    fail("{}: model header lacks 'kind' or 'entries'", source);
  for (const auto& entry : file.header["entries"]) {
    const std::string name = entry.value("name", "");
    if (entry.value("type", "") == "f32") {
      Tensor t;
      t.shape = entry.at("shape").get<std::vector<long>>();
      const size_t size = static_cast<size_t>(element_count(t.shape)) * sizeof(float);
      if (size > body - at) fail("{}: truncated model file (tensor '{}')", source, name);
      t.values.resize(size / sizeof(float));
      std::memcpy(t.values.data(), bytes.data() + at, size);
      at += size;
      file.tensors[name] = std::move(t);
    } else {
      const size_t size = entry.at("size").get<size_t>();
      if (size > body - at) fail("{}: truncated model file (blob '{}')", source, name);
      file.blobs[name] = bytes.substr(at, size);
      at += size;
    }
  }
  if (at != body) fail("{}: {} unexpected bytes after the last entry", source, body - at);
  file.header.erase("entries");
  return file;
}

void write_model_file(const std::filesystem::path& path, const ModelFile& file) {
  write_file_atomic(path, serialize_model_file(file));
}

ModelFile read_model_file(const std::filesystem::path& path) {
  return parse_model_file(read_text_file(path), path.string());
}

const Tensor& expect_tensor(const ModelFile& file, const std::string& name, const std::vector<long>& shape,
                            const std::string& source) {
  const auto it = file.tensors.find(name);
  if (it == file.tensors.end()) fail("{}: model file lacks tensor '{}'", source, name);
  if (it->second.shape != shape)
    fail("{}: tensor '{}' has shape [{}], expected [{}] (model built for other features?)", source, name,
         fmt::join(it->second.shape, ","), fmt::join(shape, ","));
  return it->second;
}

}  // namespace llmco2
