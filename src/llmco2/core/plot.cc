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

}  // namespace llmco2
