// core/checksum.h - FNV-1a 64-bit checksums of byte strings and files (model files, output manifests).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace llmco2 {

// FNV-1a, 64 bits (Fowler, Noll, Vo; offset basis 14695981039346656037, prime 1099511628211), fed in pieces.
class Fnv1a64 {
 public:
  void update(std::string_view bytes);
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

uint64_t fnv1a64(std::string_view bytes);

// The size in bytes and the FNV-1a checksum of a file's contents; throws Error naming the file when unreadable.
struct FileDigest {
  uint64_t size_bytes = 0;
  uint64_t fnv1a64 = 0;
};
// Reads at most `max_bytes` (then size_bytes tells how many were read).
FileDigest digest_file(const std::filesystem::path& path, uint64_t max_bytes = UINT64_MAX);

// 16 lower-case hex digits, as manifests write a checksum.
std::string checksum_hex(uint64_t checksum);

}  // namespace llmco2
