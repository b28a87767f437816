// core/plot.h - running a gnuplot script (plots are optional: a missing gnuplot is a warning, not an error).
#pragma once

#include <filesystem>
#include <string>

namespace llmco2 {

// Pipes `script` to gnuplot; returns "" on success, else a one-line warning.
std::string run_gnuplot(const std::string& script);

// Plots `script` (commands after the terminal and output lines) into `image` (.png: pngcairo, .svg: svg) of
// width x height pixels, atomically: gnuplot writes a unique temporary file that is renamed over `image` on success
// (and recorded for the run's manifest). A missing gnuplot, or one that refuses the script, is a warning (returned);
// an image that cannot be written, or that gnuplot left cut off (a full disk), is an error: throws Error naming it,
// and the old image stays.
std::string plot_to_file(const std::string& script, const std::filesystem::path& image, int width = 900,
                         int height = 600);

// Whether `image` ends as a whole PNG (its IEND chunk) or SVG (its closing tag) does.
bool image_is_whole(const std::filesystem::path& image, bool svg);
// `rows` (lines of numbers) as a gnuplot datablock named $<name>, to put in a script before the plot that reads it:
// the data travel in the script, with no scratch file to leave behind.
std::string gnuplot_datablock(const std::string& name, const std::string& rows);

// Text for a double-quoted gnuplot string: no double quotes or backslashes.
std::string gnuplot_text(std::string text);

}  // namespace llmco2
