// core/checksum.cc - FNV-1a over strings and files.
#include "core/checksum.h"

#include <algorithm>

#include <fstream>

#include <fmt/format.h>

#include "core/error.h"

namespace llmco2 {

void Fnv1a64::update(std::string_view bytes) {
  for (const char c : bytes) {
    hash_ ^= static_cast<unsigned char>(c);
    hash_ *= 1099511628211ull;
  }
}

uint64_t fnv1a64(std::string_view bytes) {
  Fnv1a64 hash;
  hash.update(bytes);
  return hash.value();
}

FileDigest digest_file(const std::filesystem::path& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot read file", path.string());
  Fnv1a64 hash;
  FileDigest digest;
  char buffer[1 << 16];
  while (digest.size_bytes < max_bytes) {
    const auto want = static_cast<std::streamsize>(std::min<uint64_t>(sizeof buffer, max_bytes - digest.size_bytes));
    in.read(buffer, want);
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    hash.update({buffer, n});
    digest.size_bytes += n;
  }
  digest.fnv1a64 = hash.value();
  return digest;
}

std::string checksum_hex(uint64_t checksum) { return fmt::format("{:016x}", checksum); }

}  // namespace llmco2
