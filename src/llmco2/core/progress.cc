// core/progress.cc - progress line.
#include "core/progress.h"

#include "core/interrupt.h"

#include <cstdio>

#include <fmt/format.h>

namespace llmco2 {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Progress::Progress(std::string what, long total, bool enabled)
    : what_(std::move(what)),
      total_(total),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

constexpr long kEveryItemBelow = 4096;

void Progress::update(long done) {
  check_interrupt();  // every loop that reports progress can be stopped here (core/interrupt.h)
  // The clock is read every 256th item of a long loop (cheap at millions per second), every item of a short one (a
  // loop of a few slow items, such as the kernel fit's generations, would otherwise show nothing until it ends).
  if (!enabled_ || ((done & 255) != 0 && total_ > kEveryItemBelow)) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  print(done, false);
}

void Progress::finish() {
  if (enabled_) print(total_, true);
}

namespace {

// Items per second, whole above 100 and to 3 significant digits below (a slow fit's 0.1/s is not "0/s").
std::string rate_text(double rate) { return rate >= 100 ? fmt::format("{:.0f}", rate) : fmt::format("{:.3g}", rate); }

}  // namespace

void Progress::print(long done, bool final) {
  const double elapsed_s = seconds_since(start_);
  const double done_d = static_cast<double>(done), total_d = static_cast<double>(total_);
  const double rate = elapsed_s > 0 ? done_d / elapsed_s : 0.0;
  const double eta_s = rate > 0 ? (total_d - done_d) / rate : 0.0;
  const double percent = total_ > 0 ? 100.0 * done_d / total_d : 100.0;
  std::string line =
      final
          ? fmt::format("{}: {}/{} in {:.1f} s ({}/s)", what_, done, total_, elapsed_s, rate_text(rate))
          : fmt::format("{}: {}/{} ({:.0f}%) {}/s ETA {:.1f} s", what_, done, total_, percent, rate_text(rate), eta_s);
  std::fprintf(stderr, "\r%-78s%s", line.c_str(), final ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace llmco2
