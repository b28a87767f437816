// core/output_manifest.h - the outputs of one run listed last: a JSON manifest (run id, command line, each output's
// name, size and FNV-1a checksum) written atomically after every output, so a reader can tell which files belong to
// one finished run (docs/reliability.md, "Outputs that survive being killed").
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "core/checksum.h"

namespace llmco2 {

// The command line manifests record; set once by the CLI's main (empty until then).
void set_run_command_line(std::vector<std::string> args);

// Whether a RunManifest is open (AtomicFile checksums what it commits only then).
bool recording_outputs();

// Called by AtomicFile::commit: adds the output to the open RunManifest, if there is one (else does nothing).
void record_output(const std::filesystem::path& path, const FileDigest& digest);

// Adds a file already on disk that the run keeps as one of its outputs (a campaign resumed on its dataset), when it
// exists and a RunManifest is open.
void record_existing_output(const std::filesystem::path& path);

// While alive, records every output this process commits through AtomicFile (one RunManifest at a time); commit()
// writes the list. An output committed twice (a campaign rewriting its CSV) is listed once, as last written.
class RunManifest {
 public:
  explicit RunManifest(const std::filesystem::path& manifest_path);  // throws Error when another one is open
  RunManifest(const RunManifest&) = delete;
  RunManifest& operator=(const RunManifest&) = delete;
  ~RunManifest();
  // Writes the manifest atomically, listing the outputs recorded so far that still exist (a run's scratch files,
  // removed before the end, are not outputs). May be called again as more outputs are written.
  void commit();
  const std::string& run_id() const { return run_id_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  friend void record_output(const std::filesystem::path&, const FileDigest&);
  struct Entry {
    std::filesystem::path path;  // absolute
    FileDigest digest;
  };
  std::filesystem::path path_;
  std::string run_id_;
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

// Where a run's manifest goes: "<dir>/manifest.json" for outputs in a folder, "<file>.manifest.json" beside a file.
std::filesystem::path manifest_in_folder(const std::filesystem::path& dir);
std::filesystem::path manifest_beside(const std::filesystem::path& file);

// The outputs a manifest lists that are missing, or whose size or checksum differ from the listing (files of another,
// unfinished run), as "name: why". Only regular files named relative to the manifest's folder are read: an absolute
// name, or one naming anything but a regular file (a device, FIFO, folder or link), is listed, unread. Throws Error
// naming the manifest when it is not one.
std::vector<std::string> stale_outputs(const std::filesystem::path& manifest_path);

}  // namespace llmco2
