// dataset/log_scanner.h - a request log read in blocks of whole lines by a zero-copy scanner (cells are views into
// the block, no string per field), each block handed to one of several workers: memory is a few blocks, whatever the
// log's length. Records mean what RequestLogReader reads them as; a log with a quoted field is left to that reader.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "dataset/module.h"
#include "dataset/request_log.h"

namespace llmco2::dataset {

// What a worker does with the records of a block, in file order within the block.
class LogRecordSink {
 public:
  virtual ~LogRecordSink() = default;
  virtual void request(const LoggedRequest& q) = 0;
  virtual void skipped(long line, const std::string& reason) = 0;
};

inline constexpr size_t kLogBlockBytes = 1u << 20;  // a block: 1 MiB of whole lines (~28,000 Azure requests)

class LogScanner {
 public:
  // Opens the log and reads its header; throws Error when it cannot be read or has neither format's columns.
  explicit LogScanner(std::filesystem::path path);
  const LogLayout& layout() const { return layout_; }
  // How many workers `threads` asks for (worker_count), but no more than the log has blocks: none stays idle.
  int workers(int threads) const;

  // Visits every record once: each round gives one block to each of sinks.size() workers (threads; the first on this
  // thread), then calls after_round(k) here, k = the workers that had a block, whose blocks follow each other in the
  // file in worker order. Returns false, having stopped, at the first block holding a '"' (a quoted field may span
  // lines): such a log is read with RequestLogReader. Throws Error for a line over kMaxCsvRecordBytes.
  bool scan(const std::vector<LogRecordSink*>& sinks, const std::function<void(size_t)>& after_round,
            bool progress) const;

  // Visits every record with RequestLogReader (one thread, any CSV), into one sink.
  void scan_general(LogRecordSink& sink) const;

 private:
  std::filesystem::path path_;
  LogLayout layout_;
  uintmax_t data_offset_ = 0;  // the byte after the header
  long first_line_ = 2;        // the line at data_offset_
};

// How many workers `threads` asks for: itself when positive, else every core.
int worker_count(int threads);

}  // namespace llmco2::dataset
