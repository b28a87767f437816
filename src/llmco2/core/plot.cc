// core/plot.cc - gnuplot through a pipe.
#include "core/plot.h"

#include <cstdio>

namespace llmco2 {

std::string run_gnuplot(const std::string& script) {
  FILE* gnuplot = popen("gnuplot 2>/dev/null", "w");
  if (!gnuplot) return "gnuplot not found: plots not written";
  std::fputs((script + "\n").c_str(), gnuplot);
  if (pclose(gnuplot) != 0) return "gnuplot failed or is not installed: plots not written (install gnuplot-nox)";
  return "";
}

std::string plot_to_file(const std::string& script, const std::filesystem::path& image, int width, int height) {
  const bool svg = image.extension() == ".svg";
  const auto temporary = image.parent_path() / (".tmp-" + image.filename().string());
  const std::string header = std::string("set terminal ") + (svg ? "svg" : "pngcairo") + " size " +
                             std::to_string(width) + "," + std::to_string(height) + " font 'sans,11'\nset output '" +
                             temporary.string() + "'\n";
  std::string warning = run_gnuplot(header + script + "\nset output\n");
  std::error_code ec;
  if (warning.empty()) std::filesystem::rename(temporary, image, ec);
  if (ec) warning = "cannot write " + image.string() + ": " + ec.message();
  if (!warning.empty()) std::filesystem::remove(temporary, ec);
  return warning;
}

std::string gnuplot_text(std::string text) {
  for (char& c : text)
    if (c == '"' || c == '\\') c = '\'';
  return text;
}

}  // namespace llmco2
