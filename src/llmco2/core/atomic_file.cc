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

// What a path that is not a regular file is, for the message refusing to replace it.
const char* file_kind(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::symlink:
      return "a symbolic link";
    case std::filesystem::file_type::directory:
      return "a folder";
    case std::filesystem::file_type::fifo:
      return "a FIFO";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

void refuse_non_regular(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(status) && status.type() != std::filesystem::file_type::regular)
    fail("{}: exists and is {}: refusing to replace it with an output (give a new file name)", path.string(),
         file_kind(status.type()));
}

// The path with links and ".." resolved as far as it exists; empty when that fails.
std::filesystem::path resolved(const std::filesystem::path& path) {
  std::error_code ec;
  auto out = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? std::filesystem::path() : out;
}

}  // namespace

std::filesystem::path unique_temporary_path(const std::filesystem::path& path) {
  std::random_device device;
  const unsigned long long salt = (static_cast<unsigned long long>(device()) << 32) ^ device();
  return path.string() + fmt::format(".tmp-{}-{:x}", static_cast<long>(::getpid()), salt);
}

void refuse_output_over_input(const std::filesystem::path& output, const std::string& output_flag,
                              const std::filesystem::path& input, const std::string& input_role) {
  if (output.empty() || input.empty()) return;
  std::error_code ec;
  const std::filesystem::path a = resolved(output), b = resolved(input);
  if (std::filesystem::equivalent(output, input, ec) || (!a.empty() && a == b))
    fail("{} {}: is also this run's {} ({}): refusing to overwrite an input", output_flag, output.string(), input_role,
         input.string());
}

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)), tmp_(unique_temporary_path(path_)) {
  refuse_non_regular(path_);
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
