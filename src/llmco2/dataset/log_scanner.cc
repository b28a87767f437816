// dataset/log_scanner.cc - blocks of whole lines, split into cells in place, spread over worker threads.
#include "dataset/log_scanner.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <thread>

#include "core/csv.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/progress.h"

namespace llmco2::dataset {
namespace {

// A block of whole lines and the line it starts on.
struct Block {
  std::string bytes;
  long first_line = 0;
};

// Splits the lines of one block into cells (views) and hands each record to the sink.
class BlockParser {
 public:
  explicit BlockParser(const LogLayout& layout) : layout_(layout) {}

  void parse(const Block& block, LogRecordSink& sink) {
    const char* p = block.bytes.data();
    const char* const end = p + block.bytes.size();
    for (long line = block.first_line; p < end; ++line) {
      const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (!eol) eol = end;
      record(std::string_view(p, static_cast<size_t>(eol - p)), line, sink);
      p = eol + 1;
    }
  }

 private:
  // As CsvReader reads an unquoted line: every '\r' dropped, a blank line is no record.
  void record(std::string_view text, long line, LogRecordSink& sink) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find('\r') != std::string_view::npos) {
      scratch_.assign(text);
      std::erase(scratch_, '\r');
      text = scratch_;
    }
    if (text.empty()) return;
    cells_.clear();
    for (size_t start = 0;;) {
      const size_t comma = text.find(',', start);
      cells_.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (auto q = parse_log_record(layout_, cells_, line, reason_)) sink.request(*q);
    else sink.skipped(line, reason_);
  }

  const LogLayout& layout_;
  std::vector<std::string_view> cells_;
  std::string scratch_, reason_;
};

// Reads the file's blocks in order: each ends after its last '\n' (the rest opens the next block).
class BlockReader {
 public:
  BlockReader(std::ifstream& in, std::string source, long first_line)
      : in_(in), source_(std::move(source)), line_(first_line) {}

  // Fills `block`; false at the end of the file.
  bool next(Block& block) {
    block.bytes.swap(carry_);
    carry_.clear();
    block.first_line = line_;
    size_t last_newline = std::string::npos;
    while (!eof_ && (last_newline = block.bytes.rfind('\n')) == std::string::npos) read_more(block.bytes);
    if (block.bytes.empty()) return false;
    if (last_newline == std::string::npos) last_newline = block.bytes.size() - 1;  // the last line, unterminated
    carry_.assign(block.bytes, last_newline + 1);
    block.bytes.resize(last_newline + 1);
    line_ += std::count(block.bytes.begin(), block.bytes.end(), '\n');
    bytes_read_ += block.bytes.size();
    return true;
  }
  uintmax_t bytes_read() const { return bytes_read_; }

 private:
  void read_more(std::string& bytes) {
    const size_t before = bytes.size();
    if (before > kMaxCsvRecordBytes)
      fail("{}:{}: a line longer than {} bytes (expected CSV lines)", source_, line_, kMaxCsvRecordBytes);
    bytes.resize(before + kLogBlockBytes);
    in_.read(bytes.data() + before, static_cast<std::streamsize>(kLogBlockBytes));
    bytes.resize(before + static_cast<size_t>(in_.gcount()));
    if (in_.gcount() < static_cast<std::streamsize>(kLogBlockBytes)) eof_ = true;
  }

  std::ifstream& in_;
  std::string source_, carry_;
  long line_;
  bool eof_ = false;
  uintmax_t bytes_read_ = 0;
};

bool has_quote(const Block& b) { return b.bytes.find('"') != std::string::npos; }

}  // namespace

int worker_count(int threads) {
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int LogScanner::workers(int threads) const {
  const uintmax_t bytes = std::filesystem::file_size(path_) - std::min(data_offset_, std::filesystem::file_size(path_));
  const auto blocks = static_cast<int>(std::min<uintmax_t>(1024, bytes / kLogBlockBytes + 1));
  return std::min(worker_count(threads), blocks);
}

LogScanner::LogScanner(std::filesystem::path path) : path_(std::move(path)) {
  std::ifstream in = open_input_file(path_, std::numeric_limits<uintmax_t>::max(), "request log (CSV)");
  CsvReader reader(in, path_.string());
  auto header = reader.next();
  if (!header) fail("{}: empty CSV file (expected a header line)", path_.string());
  layout_ = detect_log_layout(std::move(header->cells), path_.string());
  in.clear();
  const auto offset = in.tellg();
  data_offset_ = offset < 0 ? 0 : static_cast<uintmax_t>(offset);
  std::string head(static_cast<size_t>(data_offset_), '\0');
  in.seekg(0);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  first_line_ = 1 + std::count(head.begin(), head.end(), '\n');
}

bool LogScanner::scan(const std::vector<LogRecordSink*>& sinks, const std::function<void(size_t)>& after_round,
                      bool progress) const {
  std::ifstream in = open_input_file(path_, std::numeric_limits<uintmax_t>::max(), "request log (CSV)");
  in.seekg(static_cast<std::streamoff>(data_offset_));
  BlockReader reader(in, path_.string(), first_line_);
  const auto file_bytes = static_cast<long>(std::filesystem::file_size(path_) - data_offset_);
  Progress bar("scanning " + path_.filename().string(), file_bytes, progress && file_bytes > (64L << 20));
  std::vector<Block> blocks(sinks.size());
  std::vector<BlockParser> parsers(sinks.size(), BlockParser(layout_));
  for (;;) {
    size_t filled = 0;
    while (filled < blocks.size() && reader.next(blocks[filled])) ++filled;
    if (filled == 0) break;
    for (size_t k = 0; k < filled; ++k)
      if (has_quote(blocks[k])) return false;
    std::vector<std::exception_ptr> errors(filled);
    const auto work = [&](size_t k) {
      try {
        parsers[k].parse(blocks[k], *sinks[k]);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    };
    {
      std::vector<std::jthread> workers;
      for (size_t k = 1; k < filled; ++k) workers.emplace_back(work, k);
      work(0);
    }  // joined
    for (const auto& error : errors)
      if (error) std::rethrow_exception(error);
    after_round(filled);
    bar.update(static_cast<long>(reader.bytes_read()));
  }
  bar.finish();
  return true;
}

void LogScanner::scan_general(LogRecordSink& sink) const {
  std::ifstream in = open_input_file(path_, std::numeric_limits<uintmax_t>::max(), "request log (CSV)");
  CsvReader reader(in, path_.string());
  reader.next();  // the header
  std::vector<std::string_view> cells;
  std::string reason;
  while (auto record = reader.next()) {
    cells.assign(record->cells.begin(), record->cells.end());
    if (auto q = parse_log_record(layout_, cells, record->line, reason)) sink.request(*q);
    else sink.skipped(record->line, reason);
  }
}

}  // namespace llmco2::dataset
