// core/input_file.h - opening an input file safely: only regular files (never a device, pipe or folder, which could
// hang or never end) and no more bytes than the kind of file may plausibly hold.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace llmco2 {

// Size caps (docs/reliability.md): far above every real file of the kind, far below what would exhaust memory.
inline constexpr uintmax_t kMaxJsonFileBytes = 64ull << 20;  // configs, catalogs, parameters: the largest is 45 kB
inline constexpr uintmax_t kMaxTextFileBytes = 1ull << 30;   // CSV tables and model files read whole
inline constexpr size_t kMaxCsvRecordBytes = 1u << 20;       // one CSV record (a line of a log is ~40 bytes)

// True when `text` is valid UTF-8 (file names are written into JSON output, which must be UTF-8).
bool is_utf8(std::string_view text);

// Throws Error "<path>: the file name is not valid UTF-8" first, "<path>: cannot open file" when it is missing,
// "<path>: not a regular file (...)" for a device, pipe, socket or folder, and "<path>: <n> bytes, more than the <cap>
// a <what> may hold" when it exceeds `max_bytes`.
void check_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what);

// check_input_file, then the file opened in binary mode.
std::ifstream open_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what);

// The whole file as bytes, after check_input_file.
std::string read_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what);

}  // namespace llmco2
