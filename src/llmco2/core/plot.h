// core/plot.h - running a gnuplot script (plots are optional: a missing gnuplot is a warning, not an error).
#pragma once

#include <string>

namespace llmco2 {

// Pipes `script` to gnuplot; returns "" on success, else a one-line warning.
std::string run_gnuplot(const std::string& script);

}  // namespace llmco2
