// core/atomic_file.cc - unique temporary file, fsync, rename.
#include "core/atomic_file.h"

#include <unistd.h>

#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "core/error.h"

namespace llmco2 {
namespace {

std::filesystem::path unique_temporary(const std::filesystem::path& path) {
  std::random_device device;
  const unsigned long long salt = (static_cast<unsigned long long>(device()) << 32) ^ device();
  return path.string() + fmt::format(".tmp-{}-{:x}", static_cast<long>(::getpid()), salt);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)), tmp_(unique_temporary(path_)) {
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) fail("{}: cannot write file", path_.string());
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) fail("{}: write failed", path_.string());
  out_.close();
  if (FILE* f = std::fopen(tmp_.c_str(), "rb")) {
    ::fsync(fileno(f));
    std::fclose(f);
  }
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) fail("{}: cannot rename temporary file: {}", path_.string(), ec.message());
  committed_ = true;
}

}  // namespace llmco2
