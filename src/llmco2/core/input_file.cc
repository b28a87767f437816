// core/input_file.cc - regular files only, with a size cap.
#include "core/input_file.h"

#include <sstream>
#include <system_error>

#include "core/error.h"

namespace llmco2 {

bool is_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    if (length == 2 && c < 0xC2) return false;  // overlong
    i += length;
  }
  return true;
}

void check_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what) {
  if (!is_utf8(path.string()))
    fail("{}: the file name is not valid UTF-8 (llmco2 writes names into JSON and CSV; rename the file)", path.string());
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) fail("{}: cannot open file", path.string());
  if (!std::filesystem::is_regular_file(status))
    fail("{}: not a regular file (a folder, device or pipe); expected a {}", path.string(), what);
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail("{}: cannot open file", path.string());
  if (size > max_bytes) fail("{}: {} bytes, more than the {} a {} may hold", path.string(), size, max_bytes, what);
}

std::ifstream open_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what) {
  check_input_file(path, max_bytes, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file", path.string());
  return in;
}

std::string read_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what) {
  std::ifstream in = open_input_file(path, max_bytes, what);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace llmco2
