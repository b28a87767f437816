// core/atomic_file.cc - unique temporary file, fsync, rename.
#include "core/atomic_file.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "core/checksum.h"
#include "core/error.h"
#include "core/output_manifest.h"

namespace llmco2 {
namespace {

void fsync_file(const std::filesystem::path& path) {
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    ::fsync(fileno(f));
    std::fclose(f);
  }
}

// The process id in "<name>.tmp-<pid>-<hex>", or 0 when `file_name` is not a temporary file of `name`.
long temporary_owner(const std::string& file_name, const std::string& name) {
  const std::string prefix = name + ".tmp-";
  if (!file_name.starts_with(prefix)) return 0;
  const size_t dash = file_name.find('-', prefix.size());
  if (dash == std::string::npos || dash == prefix.size()) return 0;
  const std::string pid = file_name.substr(prefix.size(), dash - prefix.size());
  if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) return 0;
  return std::stol(pid);
}

// Removes the temporary files of `path` left by processes that no longer exist (runs killed before their rename);
// those of a live process, another run still writing, stay.
void remove_abandoned_temporaries(const std::filesystem::path& path) {
  std::error_code ec;
  const auto folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const long owner = temporary_owner(entry.path().filename().string(), path.filename().string());
    if (owner > 0 && ::kill(static_cast<pid_t>(owner), 0) != 0 && errno == ESRCH)
      std::filesystem::remove(entry.path(), ec);
  }
}

}  // namespace

std::filesystem::path unique_temporary_path(const std::filesystem::path& path) {
  std::random_device device;
  const unsigned long long salt = (static_cast<unsigned long long>(device()) << 32) ^ device();
  return path.string() + fmt::format(".tmp-{}-{:x}", static_cast<long>(::getpid()), salt);
}

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)), tmp_(unique_temporary_path(path_)) {
  remove_abandoned_temporaries(path_);
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
  if (out_.is_open()) {
    out_.flush();
    if (!out_) fail("{}: write failed", path_.string());
    out_.close();
  }
  fsync_file(tmp_);
  // What this run wrote, read before the rename, when no other run can have replaced it.
  const bool recording = recording_outputs();
  const FileDigest digest = recording ? digest_file(tmp_) : FileDigest{};
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) fail("{}: cannot rename temporary file: {}", path_.string(), ec.message());
  committed_ = true;
  if (recording) record_output(path_, digest);
}

}  // namespace llmco2
