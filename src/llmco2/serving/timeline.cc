// serving/timeline.cc - binning meter readings and drawing them.
#include "serving/timeline.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/plot.h"

namespace llmco2::serving {

Timeline::Timeline(double bin_s, int replicas) : bin_s_(bin_s), replicas_(std::max(1, replicas)) {
  if (!(bin_s > 0) || !std::isfinite(bin_s)) fail("--bin-s must be a positive number of seconds, got {}", bin_s);
}

void Timeline::coarsen() {
  for (size_t i = 0; i < bins_.size(); ++i) {
    const ReplayBin b = bins_[i];
    ReplayBin& merged = bins_[i / 2];
    if (i % 2 == 0) merged = b;
    else
      merged = {merged.energy_j + b.energy_j, merged.busy_s + b.busy_s, merged.running_s + b.running_s,
                merged.waiting_s + b.waiting_s, merged.kv_share_s + b.kv_share_s};
  }
  bins_.resize((bins_.size() + 1) / 2);
  bin_s_ *= 2;
}

void Timeline::add(const StepRecord& s) {
  const double end_s = s.start_s + s.time_s;
  while (end_s / bin_s_ >= static_cast<double>(kMaxServingBins)) coarsen();
  for (double t = s.start_s; t < end_s;) {
    const auto index = static_cast<size_t>(std::max(0.0, t) / bin_s_);
    const double until = std::min(end_s, static_cast<double>(index + 1) * bin_s_);
    const double span_s = until - t;
    if (span_s <= 0) break;
    if (index >= bins_.size()) bins_.resize(index + 1);
    ReplayBin& b = bins_[index];
    b.energy_j += s.time_s > 0 ? s.energy_j * span_s / s.time_s : 0.0;
    if (!s.idle) {
      b.busy_s += span_s;
      b.running_s += static_cast<double>(s.running) * span_s;
      b.waiting_s += static_cast<double>(s.waiting) * span_s;
      b.kv_share_s += s.kv_share * span_s;
    }
    t = until;
  }
}

std::string Timeline::csv() const {
  std::string out = "start_s,power_w,running,waiting,kv_share,busy_share\n";
  for (size_t i = 0; i < bins_.size(); ++i) {
    const ReplayBin& b = bins_[i];
    out += fmt::format("{:.3f},{:.2f},{:.3f},{:.3f},{:.4f},{:.4f}\n", static_cast<double>(i) * bin_s_,
                       b.energy_j / bin_s_, b.running_s / bin_s_, b.waiting_s / bin_s_,
                       b.kv_share_s / (bin_s_ * replicas_), b.busy_s / (bin_s_ * replicas_));
  }
  return out;
}

namespace {

std::string cdf_block(const char* name, const LogHistogram& h) {
  std::string rows;
  for (const auto& [value, share] : h.cdf()) rows += fmt::format("{:.6g} {:.6g}\n", 1000 * value, share);
  return gnuplot_datablock(name, rows);
}

}  // namespace

std::string write_serving_plots(const Timeline& timeline, const LatencyHistograms& l, const std::string& title,
                                const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::string csv = timeline.csv();
  write_file_atomic(dir / "timeline.csv", csv);
  std::string rows;
  for (size_t at = csv.find('\n') + 1; at < csv.size();) {  // the CSV's rows, blank-separated for gnuplot
    const size_t end = csv.find('\n', at);
    std::string line = csv.substr(at, end - at);
    std::replace(line.begin(), line.end(), ',', ' ');
    rows += line + "\n";
    at = end + 1;
  }
  const std::string data = gnuplot_datablock("t", rows);
  std::string series =
      data +
      fmt::format(
          "set termoption noenhanced\nset multiplot layout 4,1 title \"{}\"\nset grid\nunset key\nset lmargin 12\n",
          gnuplot_text(title));
  const std::pair<int, const char*> panels[] = {
      {2, "power, all GPUs (W)"}, {3, "running requests"}, {4, "waiting requests"}, {5, "KV cache in use (share)"}};
  // Seconds on the axis for a window under ten minutes, else minutes.
  const double window_s = timeline.bin_s() * static_cast<double>(timeline.bins().size());
  const bool seconds = window_s < 600;
  for (const auto& [column, label] : panels)
    series += fmt::format("set ylabel '{}'\n{}plot $t using ($1/{}):{} with steps lw 1.5 lc {}\n", label,
                          column != 5 ? ""
                          : seconds   ? "set xlabel 'seconds since the first arrival'\n"
                                      : "set xlabel 'minutes since the first arrival'\n",
                          seconds ? 1 : 60, column, column - 1);
  series += "unset multiplot\n";
  std::string warning = plot_to_file(series, dir / "timeline.png", 1000, 900);
  // A step plot needs points: a run of fewer than 3 bins draws almost nothing (the CSV still holds them).
  if (warning.empty() && timeline.bins().size() < 3)
    warning = fmt::format(
        "{}: the run lasted {} bin(s) of --bin-s {:g} s, too few points for a timeline; pass a smaller --bin-s",
        (dir / "timeline.png").string(), timeline.bins().size(), timeline.bin_s());
  std::string cdf = cdf_block("ttft", l.ttft_s) + cdf_block("tpot", l.tpot_s) + cdf_block("e2e", l.e2e_s) +
                    fmt::format(
                        "set termoption noenhanced\nset title \"{}\"\nset grid\nset logscale x\n"
                        "set xlabel 'latency (ms)'\nset ylabel 'share of requests'\nset yrange [0:1]\n"
                        "set key bottom right\nplot $ttft using 1:2 with steps lw 2 title 'time to first token', "
                        "$tpot using 1:2 with steps lw 2 title 'time per output token', "
                        "$e2e using 1:2 with steps lw 2 title 'end to end'\n",
                        gnuplot_text(title));
  const std::string second = plot_to_file(cdf, dir / "latency-cdf.png", 900, 600);
  return warning.empty() ? second : warning;
}

}  // namespace llmco2::serving
