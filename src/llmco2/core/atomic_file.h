// core/atomic_file.h - an output file that appears whole or not at all: written to a unique temporary file in the same
// folder, flushed to disk, then renamed over the target; dropped (temporary removed) when not committed.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace llmco2 {

class AtomicFile {
 public:
  // Throws Error when `path` exists and is not a regular file (a symlink, FIFO, device or folder: replacing it with a
  // regular file would lose what it is) or when the temporary file cannot be created. Removes the temporary files of
  // `path` that killed runs left (their process no longer exists).
  explicit AtomicFile(std::filesystem::path path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file unless committed
  std::ofstream& stream() { return out_; }
  // The unique temporary file, for a writer that is another process (gnuplot): close stream() first.
  const std::filesystem::path& temporary_path() const { return tmp_; }
  // Flush, fsync, rename; the output is recorded for the run's manifest (core/output_manifest.h). Throws Error naming
  // the file.
  void commit();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Throws Error "<output>: is also this run's <input_role> (<input>): refusing to overwrite an input" when the two name
// the same file (any spelling, links followed); nothing when `output` or `input` is empty.
void refuse_output_over_input(const std::filesystem::path& output, const std::string& output_flag,
                              const std::filesystem::path& input, const std::string& input_role);

// "<path>.tmp-<pid>-<random>": a temporary name no other run picks, beside `path`.
std::filesystem::path unique_temporary_path(const std::filesystem::path& path);

}  // namespace llmco2
