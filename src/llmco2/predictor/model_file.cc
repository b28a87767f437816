// predictor/model_file.cc - writing and checking model files.
#include "predictor/model_file.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/checksum.h"
#include "core/csv.h"
#include "core/error.h"

namespace llmco2::predictor {
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

// A tensor's shape from its entry: whole numbers whose product fits in `bytes_left` as f32 values (so a crafted
// shape can neither overflow the count nor ask for more memory than the file holds).
std::vector<long> entry_shape(const Json& entry, const std::string& name, size_t bytes_left,
                              const std::string& source) {
  const auto it = entry.find("shape");
  if (it == entry.end() || !it->is_array() || it->size() > 8)
    fail("{}: tensor '{}' lacks a 'shape' list of at most 8 dimensions", source, name);
  std::vector<long> shape;
  size_t elements = 1;
  for (const Json& dim : *it) {
    if (!dim.is_number_integer() || dim.get<long>() < 0 ||
        static_cast<size_t>(dim.get<long>()) > bytes_left / sizeof(float))
      fail("{}: tensor '{}' has a dimension {} (expected a whole number the file has room for)", source, name,
           dim.dump());
    elements *= dim.get<size_t>();
    if (elements > bytes_left / sizeof(float)) fail("{}: truncated model file (tensor '{}')", source, name);
    shape.push_back(dim.get<long>());
  }
  return shape;
}

// One entry of the header: a tensor (finite f32 values) or a blob, read from `bytes` at `at`.
void read_entry(const Json& entry, const std::string& bytes, size_t body, size_t& at, ModelFile& file,
                const std::string& source) {
  if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() || !entry.contains("type"))
    fail("{}: model header entry {} lacks a 'name' or a 'type'", source, entry.dump().substr(0, 80));
  const std::string name = entry["name"].get<std::string>();
  if (file.tensors.count(name) || file.blobs.count(name)) fail("{}: model file holds '{}' twice", source, name);
  if (entry["type"] == "f32") {
    Tensor t;
    t.shape = entry_shape(entry, name, body - at, source);
    t.values.resize(static_cast<size_t>(element_count(t.shape)));
    if (!t.values.empty()) std::memcpy(t.values.data(), bytes.data() + at, t.values.size() * sizeof(float));
    at += t.values.size() * sizeof(float);
    for (const float v : t.values)
      if (!std::isfinite(v)) fail("{}: tensor '{}' holds a value that is not finite ({})", source, name, v);
    file.tensors[name] = std::move(t);
  } else if (entry["type"] == "bytes") {
    const auto size = entry.find("size");
    if (size == entry.end() || !size->is_number_integer() || size->get<long>() < 0 ||
        static_cast<size_t>(size->get<long>()) > body - at)
      fail("{}: truncated model file (blob '{}')", source, name);
    file.blobs[name] = bytes.substr(at, size->get<size_t>());
    at += size->get<size_t>();
  } else {
    fail("{}: entry '{}' has type {} (expected \"f32\" or \"bytes\")", source, name, entry["type"].dump());
  }
}

}  // namespace

uint64_t model_file_checksum(std::string_view bytes) { return fnv1a64(bytes); }

std::string serialize_model_file(const ModelFile& file) {
  Json header = file.header;
  Json entries = Json::array();
  for (const auto& [name, t] : file.tensors) {
    if (element_count(t.shape) != static_cast<long>(t.values.size()))
      fail("model tensor '{}' has {} values for shape of {}", name, t.values.size(), element_count(t.shape));
    entries.push_back({{"name", name}, {"type", "f32"}, {"shape", t.shape}});
  }
  for (const auto& [name, blob] : file.blobs)
    entries.push_back({{"name", name}, {"type", "bytes"}, {"size", blob.size()}});
  header["entries"] = entries;
  const std::string text = header.dump();
  std::string out(kMagic, sizeof kMagic);
  put<uint32_t>(out, kModelFileVersion);
  put<uint64_t>(out, text.size());
  out += text;
  for (const auto& [name, t] : file.tensors)
    out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  for (const auto& [name, blob] : file.blobs) out += blob;
  put<uint64_t>(out, model_file_checksum(out));
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
  if (get<uint64_t>(bytes, checksum_at) != model_file_checksum(std::string_view(bytes).substr(0, body)))
    fail("{}: checksum mismatch: the model file is corrupt or truncated", source);
  const auto header_size = get<uint64_t>(bytes, at);
  if (header_size > body - at) fail("{}: truncated model file (header of {} bytes)", source, header_size);
  ModelFile file;
  file.header = parse_json_text(std::string_view(bytes).substr(at, header_size), source + " header");
  at += header_size;
  if (!file.header.is_object() || !file.header.contains("kind") || !file.header["kind"].is_string() ||
      !file.header.contains("entries") || !file.header["entries"].is_array())
    fail("{}: model header lacks a string 'kind' or an 'entries' list", source);
  for (const auto& entry : file.header["entries"]) read_entry(entry, bytes, body, at, file, source);
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

}  // namespace llmco2::predictor
