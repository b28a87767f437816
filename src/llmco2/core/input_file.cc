// core/input_file.cc - regular files only, with a size cap.
#include "core/input_file.h"

#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

namespace llmco2 {
namespace {

// Closes the descriptor when the read ends, by return or by exception.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() { ::close(fd); }
};

}  // namespace

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

namespace {

void check_file_name(const std::filesystem::path& path) {
  if (!is_utf8(path.string()))
    fail("{}: the file name is not valid UTF-8 (llmco2 writes names into JSON and CSV; rename the file)",
         path.string());
}

[[noreturn]] void fail_not_regular(const std::filesystem::path& path, const std::string& what) {
  fail("{}: not a regular file (a folder, device or pipe); expected a {}", path.string(), what);
}

// A regular file of at most `max_bytes`, by its stat.
void check_file_status(const std::filesystem::path& path, const struct stat& status, uintmax_t max_bytes,
                       const std::string& what) {
  if (!S_ISREG(status.st_mode)) fail_not_regular(path, what);
  const auto size = static_cast<uintmax_t>(status.st_size);
  if (size > max_bytes) fail("{}: {} bytes, more than the {} a {} may hold", path.string(), size, max_bytes, what);
}

}  // namespace

void check_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what) {
  check_file_name(path);
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) fail("{}: cannot open file", path.string());
  check_file_status(path, status, max_bytes, what);
}

std::ifstream open_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what) {
  check_input_file(path, max_bytes, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file", path.string());
  return in;
}

// One open (O_NONBLOCK, so that a FIFO cannot block it), one fstat and the reads: no std::filesystem status calls and
// no stream buffers, which cost start-up a tenth of `predict` (docs/performance.md). check_input_file's checks, on the
// opened file's stat; a file that grows while it is read is cut at max_bytes + 1 and refused.
std::string read_input_file(const std::filesystem::path& path, uintmax_t max_bytes, const std::string& what) {
  check_file_name(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENXIO) fail_not_regular(path, what);
    fail("{}: cannot open file", path.string());
  }
  const FileDescriptor file{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) fail("{}: cannot open file", path.string());
  check_file_status(path, status, max_bytes, what);
  // One byte more than the file holds, so that the read which finds its end needs no reallocation.
  std::string text(static_cast<size_t>(status.st_size) + 1, '\0');
  size_t filled = 0;
  for (;;) {
    if (filled == text.size()) {
      if (text.size() > max_bytes) break;
      text.resize(text.size() + 4096);  // the file grew since fstat
    }
    const ssize_t n = ::read(fd, text.data() + filled, text.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: cannot read file", path.string());
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  text.resize(filled);
  if (text.size() > max_bytes) fail("{}: more than the {} bytes a {} may hold", path.string(), max_bytes, what);
  return text;
}

}  // namespace llmco2
