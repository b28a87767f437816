// core/plot.cc - gnuplot through a pipe.
#include "core/plot.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <sys/wait.h>

#include "core/atomic_file.h"
#include "core/error.h"

namespace llmco2 {

std::string run_gnuplot(const std::string& script) {
  FILE* gnuplot = popen("gnuplot 2>/dev/null", "w");
  if (!gnuplot) return "gnuplot could not be started: plots not written";
  std::fputs((script + "\n").c_str(), gnuplot);
  const int status = pclose(gnuplot);
  if (status == 0) return "";
  // The shell exits 127 when it finds no gnuplot; any other failure is gnuplot refusing the plot.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return "gnuplot is not installed: plots not written (install gnuplot-nox)";
  return "gnuplot could not draw a plot: it was not written";
}

bool image_is_whole(const std::filesystem::path& image, bool svg) {
  std::ifstream in(image, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const std::streamoff size = in.tellg();
  // A PNG ends with its IEND chunk (length 0, type, CRC); an SVG with its closing tag and, from gnuplot, a newline.
  const std::string end = svg ? std::string("</svg>") : std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12);
  const std::streamoff tail = static_cast<std::streamoff>(end.size()) + (svg ? 8 : 0);
  if (size < static_cast<std::streamoff>(end.size())) return false;
  in.seekg(std::max<std::streamoff>(0, size - tail));
  const std::string last((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return svg ? last.find(end) != std::string::npos : last == end;
}

std::string plot_to_file(const std::string& script, const std::filesystem::path& image, int width, int height) {
  const bool svg = image.extension() == ".svg";
  AtomicFile file(image);
  file.stream().close();  // gnuplot writes the temporary file itself
  const std::string header = std::string("set terminal ") + (svg ? "svg" : "pngcairo") + " size " +
                             std::to_string(width) + "," + std::to_string(height) + " font 'sans,11'\nset output '" +
                             file.temporary_path().string() + "'\n";
  std::string warning = run_gnuplot(header + script + "\nset output\n");
  if (!warning.empty()) return warning;  // the temporary file goes with `file`
  if (!image_is_whole(file.temporary_path(), svg)) {
    std::error_code ec;
    fail("{}: gnuplot wrote a cut-off image ({} bytes, no end marker; is the disk full?): not written", image.string(),
         std::filesystem::file_size(file.temporary_path(), ec));
  }
  file.commit();
  return "";
}

std::string gnuplot_datablock(const std::string& name, const std::string& rows) {
  return "$" + name + " << EOD\n" + rows + "EOD\n";
}

std::string gnuplot_text(std::string text) {
  for (char& c : text)
    if (c == '"' || c == '\\') c = '\'';
  return text;
}

}  // namespace llmco2
