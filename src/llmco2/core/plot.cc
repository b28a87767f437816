// core/plot.cc - gnuplot through a pipe.
#include "core/plot.h"

#include <cstdio>

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

namespace {

std::string plot_atomically(const std::string& script, const std::filesystem::path& image, int width, int height) {
  const bool svg = image.extension() == ".svg";
  AtomicFile file(image);
  file.stream().close();  // gnuplot writes the temporary file itself
  const std::string header = std::string("set terminal ") + (svg ? "svg" : "pngcairo") + " size " +
                             std::to_string(width) + "," + std::to_string(height) + " font 'sans,11'\nset output '" +
                             file.temporary_path().string() + "'\n";
  const std::string warning = run_gnuplot(header + script + "\nset output\n");
  if (!warning.empty()) return warning;  // the temporary file goes with `file`
  file.commit();
  return "";
}

}  // namespace

std::string plot_to_file(const std::string& script, const std::filesystem::path& image, int width, int height) {
  try {
    return plot_atomically(script, image, width, height);
  } catch (const Error& e) {  // a plot that cannot be written is a warning, as a missing gnuplot is
    return e.what();
  }
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
