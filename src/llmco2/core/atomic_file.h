// core/atomic_file.h - an output file that appears whole or not at all: written to a unique temporary file in the same
// folder, flushed to disk, then renamed over the target; dropped (temporary removed) when not committed.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace llmco2 {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);  // throws Error when the temporary file cannot be created
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();                                    // removes the temporary file unless committed
  std::ofstream& stream() { return out_; }
  void commit();                                    // flush, fsync, rename; throws Error naming the file
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace llmco2
