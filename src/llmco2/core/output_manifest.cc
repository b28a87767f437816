// core/output_manifest.cc - recording committed outputs and writing, reading and checking manifests.
#include "core/output_manifest.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_io.h"

namespace llmco2 {
namespace {

constexpr const char* kSchema = "llmco2-run-manifest/1";

std::mutex active_mutex;
RunManifest* active = nullptr;

std::vector<std::string>& command_line() {
  static std::vector<std::string> args;
  return args;
}

std::string utc_stamp(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

std::string new_run_id() {
  std::random_device device;
  return fmt::format("{}-{}-{:08x}", utc_stamp("%Y%m%dT%H%M%SZ"), static_cast<long>(::getpid()), device());
}

std::filesystem::path absolute_path(const std::filesystem::path& path) {
  return std::filesystem::absolute(path).lexically_normal();
}

// The name an output has in its manifest: relative to the manifest's folder ("../requests.csv" for a sibling folder).
std::string listed_name(const std::filesystem::path& output, const std::filesystem::path& manifest) {
  return output.lexically_relative(manifest.parent_path()).generic_string();
}

}  // namespace

void set_run_command_line(std::vector<std::string> args) { command_line() = std::move(args); }

RunManifest::RunManifest(const std::filesystem::path& manifest_path)
    : path_(absolute_path(manifest_path)), run_id_(new_run_id()) {
  std::lock_guard lock(active_mutex);
  if (active)
    fail("{}: another output manifest ({}) is already open in this run", path_.string(), active->path_.string());
  active = this;
}

RunManifest::~RunManifest() {
  std::lock_guard lock(active_mutex);
  if (active == this) active = nullptr;
}

bool recording_outputs() {
  std::lock_guard lock(active_mutex);
  return active != nullptr;
}

void record_output(const std::filesystem::path& path, const FileDigest& digest) {
  std::lock_guard lock(active_mutex);
  if (!active) return;
  const std::filesystem::path absolute = absolute_path(path);
  std::lock_guard entries_lock(active->mutex_);
  if (absolute == active->path_) return;  // the manifest itself
  auto& entries = active->entries_;
  const auto same = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.path == absolute; });
  if (same != entries.end()) entries.erase(same);
  entries.push_back({absolute, digest});
}

void record_existing_output(const std::filesystem::path& path) {
  if (recording_outputs() && std::filesystem::exists(path)) record_output(path, digest_file(path));
}

void RunManifest::commit() {
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  {
    std::lock_guard lock(mutex_);
    for (const Entry& e : entries_) {
      if (!std::filesystem::exists(e.path)) continue;
      outputs.push_back(nlohmann::ordered_json{{"name", listed_name(e.path, path_)},
                                               {"size_bytes", e.digest.size_bytes},
                                               {"fnv1a64", checksum_hex(e.digest.fnv1a64)}});
    }
  }
  const nlohmann::ordered_json manifest = {{"schema", kSchema},
                                           {"run_id", run_id_},
                                           {"command", command_line()},
                                           {"written_utc", utc_stamp("%Y-%m-%dT%H:%M:%SZ")},
                                           {"outputs", outputs}};
  write_file_atomic(path_, manifest.dump(2) + "\n");
}

std::filesystem::path manifest_in_folder(const std::filesystem::path& dir) { return dir / "manifest.json"; }

std::filesystem::path manifest_beside(const std::filesystem::path& file) {
  return file.parent_path() / (file.filename().string() + ".manifest.json");
}

std::vector<std::string> stale_outputs(const std::filesystem::path& manifest_path) {
  const Json manifest = read_json_file(manifest_path);
  // value("schema", "") would throw nlohmann's type_error for a schema that is not a string (found by fuzzing).
  const bool ours = manifest.is_object() && manifest.contains("schema") && manifest["schema"].is_string() &&
                    manifest["schema"].get<std::string>() == kSchema;
  if (!ours || !manifest.contains("outputs") || !manifest["outputs"].is_array())
    fail("{}: not an llmco2 run manifest (expected schema '{}' and an outputs list)", manifest_path.string(), kSchema);
  std::vector<std::string> stale;
  for (const Json& output : manifest["outputs"]) {
    JsonReader entry(output, manifest_path.string() + ": outputs");
    const std::string name = entry.string("name");
    // Only regular files named relative to the manifest's folder are read (a run's outputs may sit beside its
    // folder: trace's --by-request CSV next to its report folder is "../requests.csv"): an absolute name, or one
    // naming a device, FIFO, folder or link (which could never end, or lead anywhere), is stale, not opened.
    const std::filesystem::path relative = std::filesystem::path(name).lexically_normal();
    if (name.empty() || relative.is_absolute()) {
      stale.push_back(name + ": not a name relative to the manifest's folder (not read)");
      continue;
    }
    const std::filesystem::path file = manifest_path.parent_path() / relative;
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(file, ec);
    if (ec || !std::filesystem::exists(status)) {
      stale.push_back(name + ": missing");
      continue;
    }
    if (status.type() != std::filesystem::file_type::regular) {
      stale.push_back(name + ": not a regular file (not read)");
      continue;
    }
    // The size first, then at most one byte more than the manifest says is read: a name that leads to a file of
    // another size, or to one that never ends (/proc/self/pagemap, size 0 on disk), is stale without being read.
    const double size = entry.number("size_bytes");
    std::error_code size_error;
    const uintmax_t on_disk = std::filesystem::file_size(file, size_error);
    const bool same_size = !size_error && size >= 0 && size < 1e18 && static_cast<double>(on_disk) == size;
    const FileDigest digest = same_size ? digest_file(file, on_disk + 1) : FileDigest{};
    if (!same_size || digest.size_bytes != on_disk || checksum_hex(digest.fnv1a64) != entry.string("fnv1a64"))
      stale.push_back(name + ": differs from the manifest (written by another run)");
  }
  return stale;
}

}  // namespace llmco2
