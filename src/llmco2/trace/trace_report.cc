// trace/trace_report.cc - the trace report, its plots and the per-request CSV.
#include "trace/trace_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/plot.h"

namespace llmco2::trace {
namespace {

__extension__ typedef unsigned __int128 UInt128;

constexpr double kJoulesPerKwh = 3.6e6;

std::string utc(double seconds) {
  const auto t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
  return text;
}

std::string optional_cell(const std::optional<double>& v, const char* format = "{:.6g}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string();
}

std::string with_interval(double value, const std::optional<Interval>& iv, double scale) {
  std::string s = fmt::format("{:.4g}", value * scale);
  if (iv) s += fmt::format(" [{:.3g}, {:.3g}]", iv->low * scale, iv->high * scale);
  return s;
}

Json distribution_json(const Distribution& d) {
  return {{"mean", d.mean}, {"p10", d.p10}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

std::string distribution_row(const char* label, const Distribution& d) {
  return fmt::format("| {} | {:.4g} | {:.4g} | {:.4g} | {:.4g} | {:.4g} | {:.4g} |\n", label, d.mean, d.p10, d.p50,
                     d.p90, d.p99, d.max);
}

// The embodied CO2 in kg, or "unknown (...)" when the GPU has no embodied figure.
std::string embodied_kg_cell(const TraceAccount& a) {
  return a.embodied_unknown ? *a.embodied_unknown : fmt::format("{:.4g}", a.embodied_g / 1000);
}

// A sentence saying the CO2 totals leave out embodied carbon, or "".
std::string operational_only_note(const TraceAccount& a) {
  return a.embodied_unknown ? fmt::format("Embodied CO2 is {}: every CO2 total and share here is operational only.",
                                          *a.embodied_unknown)
                            : "";
}

double per_token(double value, long tokens) { return tokens > 0 ? value / static_cast<double>(tokens) : 0.0; }

std::string histogram(const std::vector<WeightedValue>& co2_g, const std::filesystem::path& png) {
  double low = 1e300, high = 0;
  for (const auto& v : co2_g)
    if (v.value > 0 && v.count > 0) {
      low = std::min(low, v.value);
      high = std::max(high, v.value);
    }
  if (!(high > 0)) return "no positive CO2 to plot";
  if (high <= low * 1.0001) low /= 1.5, high *= 1.5;  // one value (a one-request log): a range around it
  constexpr int kBins = 40;
  const double l0 = std::log10(low), span = std::max(std::log10(high) - l0, 1e-9);
  std::vector<long> counts(kBins, 0);
  for (const auto& v : co2_g)
    if (v.value > 0 && v.count > 0)
      counts[std::min(kBins - 1, static_cast<int>((std::log10(v.value) - l0) / span * kBins))] += v.count;
  std::string data;
  for (int b = 0; b < kBins; ++b)
    data += fmt::format("{} {} {}\n", std::pow(10, l0 + span * b / kBins), std::pow(10, l0 + span * (b + 1) / kBins),
                        counts[b]);
  const auto file = png.parent_path() / "histogram.dat";
  write_file_atomic(file, data);
  return plot_to_file(
      fmt::format(
          "set logscale x\nset xrange [{}:{}]\nset grid\nset xlabel 'CO2 per request (g)'\nset ylabel 'requests'\n"
          "set style fill solid 0.6\nset title 'Requests by carbon'\n"
          "plot '{}' using (sqrt($1*$2)):3:1:2 with boxes notitle lc rgb '#2a7ab0'",
          low, high, file.string()),
      png);
}

std::string timeline(const TraceAccount& a, const std::filesystem::path& png) {
  if (a.timeline.empty()) return "";
  const double start = a.timeline.front().start_s, unit = a.timeline_bin_s >= 3600 ? 3600.0 : 60.0;
  std::string data;
  for (const auto& b : a.timeline) data += fmt::format("{} {} {}\n", (b.start_s - start) / unit, b.co2_g, b.requests);
  const auto file = png.parent_path() / "timeline.dat";
  write_file_atomic(file, data);
  return plot_to_file(
      fmt::format("set grid\nset xlabel '{} since {} UTC'\nset ylabel 'CO2 per {} (g)'\nset y2label 'requests'\n"
                  "set ytics nomirror\nset y2tics\nset key left top\nset title 'Carbon over time'\n"
                  "plot '{}' using 1:2 with steps lw 2 lc rgb '#c0392b' title 'CO2 (g)', "
                  "'' using 1:3 axes x1y2 with steps lc rgb '#7f8c8d' title 'requests'",
                  unit == 3600 ? "hours" : "minutes", utc(start), a.timeline_bin_s >= 3600 ? "hour" : "minute",
                  file.string()),
      png);
}

std::string markdown(const TraceAccount& a, const TraceContext& c, bool histogram_ok, bool timeline_ok) {
  std::string md = fmt::format(
      "# Carbon of `{}`\n\nSetup: {}; predictor {}; each request is charged 1/{} of a batch "
      "of {} requests of its shape.\n\n{}\n\n{}\n\n",
      c.log_source, c.setup, c.predictor, c.options.batch, c.options.batch, c.carbon, c.intervals);
  md +=
      "## Totals\n\n| requests | lines skipped (malformed) | requests skipped (too long) | prompt tokens | generated "
      "tokens | energy (kWh) | operational CO2 (kg) | embodied CO2 (kg) | total CO2 (kg) | GPU-hours busy |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  md += fmt::format("| {} | {} | {} | {} | {} | {} | {:.4g} | {} | {} | {:.4g} |\n\n", a.requests, a.skipped_lines,
                    a.skipped_shapes, a.prompt_tokens, a.gen_tokens,
                    with_interval(a.energy_j, a.energy_j_interval, 1 / kJoulesPerKwh), a.operational_g / 1000,
                    embodied_kg_cell(a), with_interval(a.total_g(), a.total_g_interval, 1e-3), a.gpu_busy_s / 3600);
  if (a.embodied_unknown) md += operational_only_note(a) + "\n\n";
  md += fmt::format(
      "Energy per generated token: {:.4g} J; per token processed (prompt + generated): {:.4g} J. CO2 per "
      "1,000 generated tokens: {:.4g} g.\n\n",
      per_token(a.energy_j, a.gen_tokens), per_token(a.energy_j, a.prompt_tokens + a.gen_tokens),
      1000 * per_token(a.total_g(), a.gen_tokens));
  if (a.energy_prefill_j && a.energy_j > 0)
    md += fmt::format(
        "Prefill vs decode: prefill takes {:.1f}% of the energy and {:.1f}% of the CO2; decode {:.1f}% "
        "and {:.1f}%.\n\n",
        100 * *a.energy_prefill_j / a.energy_j, 100 * *a.co2_prefill_g / a.total_g(),
        100 * *a.energy_decode_j / a.energy_j, 100 * *a.co2_decode_g / a.total_g());
  md += "## Per request\n\n| quantity | mean | p10 | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|---|\n";
  md += distribution_row("energy (J)", a.energy_per_request_j) + distribution_row("CO2 (g)", a.co2_per_request_g) +
        distribution_row("latency (s)", a.latency_per_request_s) + "\n";
  if (histogram_ok) md += "![requests by CO2](histogram.png)\n\n";
  if (!a.hourly.empty()) {
    md += "## Timeline\n\nEach request is counted in the bin of its arrival.\n\n";
    if (timeline_ok) md += "![CO2 over time](timeline.png)\n\n";
    md += "| hour (UTC) | requests | energy (kWh) | CO2 (g) |\n|---|---|---|---|\n";
    for (const auto& b : a.hourly)
      md += fmt::format("| {} | {} | {:.4g} | {:.4g} |\n", utc(b.start_s), b.requests, b.energy_j / kJoulesPerKwh,
                        b.co2_g);
    md += "\n";
  }
  if (!a.skipped_examples.empty()) {
    md += "## Skipped\n\n";
    for (const auto& s : a.skipped_examples) md += fmt::format("- line {}: {}\n", s.line, s.reason);
  }
  return md;
}

}  // namespace

Json trace_summary_json(const TraceAccount& a, const TraceContext& c) {
  Json j = {{"log", c.log_source},
            {"format", c.log_format},
            {"setup", c.setup},
            {"predictor", c.predictor},
            {"batch", c.options.batch},
            {"grid_ratio", c.options.grid_ratio},
            {"requests", a.requests},
            {"skipped_lines", a.skipped_lines},
            {"skipped_too_long", a.skipped_shapes},
            {"prompt_tokens", a.prompt_tokens},
            {"gen_tokens", a.gen_tokens},
            {"energy_scope", c.energy_scope},
            {"node", c.node.empty() ? Json() : Json(c.node)},
            {"energy_j", quantity_json(PhaseValues{a.energy_prefill_j, a.energy_decode_j, a.energy_j})},
            {"energy_kwh", a.energy_j / kJoulesPerKwh},
            {"gpu_busy_s", a.gpu_busy_s},
            {"co2_g",
             {{"operational", total_json(a.operational_g)},
              {"embodied", a.embodied_unknown ? Json() : total_json(a.embodied_g)},
              {"total", quantity_json(PhaseValues{a.co2_prefill_g, a.co2_decode_g, a.total_g()})}}},
            {"energy_per_1k_output_tokens_j", 1000 * per_token(a.energy_j, a.gen_tokens)},
            {"per_request",
             {{"energy_j", distribution_json(a.energy_per_request_j)},
              {"co2_g", distribution_json(a.co2_per_request_g)},
              {"latency_s", distribution_json(a.latency_per_request_s)}}},
            {"predictions_made", a.predictions_made},
            {"intervals", c.intervals}};
  if (a.energy_prefill_j)
    j["share"] = {
        {"energy", {{"prefill", *a.energy_prefill_j / a.energy_j}, {"decode", *a.energy_decode_j / a.energy_j}}},
        {"co2", {{"prefill", *a.co2_prefill_g / a.total_g()}, {"decode", *a.co2_decode_g / a.total_g()}}}};
  if (a.embodied_unknown) j["co2_note"] = operational_only_note(a);
  if (a.energy_j_interval) j["energy_j_interval"] = {a.energy_j_interval->low, a.energy_j_interval->high};
  if (a.total_g_interval) j["co2_g_total_interval"] = {a.total_g_interval->low, a.total_g_interval->high};
  Json hourly = Json::array();
  for (const auto& b : a.hourly)
    hourly.push_back(
        {{"hour_utc", utc(b.start_s)}, {"requests", b.requests}, {"energy_j", b.energy_j}, {"co2_g", b.co2_g}});
  j["hourly"] = hourly;
  j.update(c.carbon_inputs);  // the scope fields it repeats hold the same values
  return j;
}

std::string trace_summary_text(const TraceAccount& a, const TraceContext& c) {
  std::string s = fmt::format(
      "{}: {} requests scored one by one (per-request accounting; serve-sim replays a "
      "deployment) on {}; predictor {}\n",
      c.log_source, a.requests, c.setup, c.predictor);
  if (a.skipped_lines || a.skipped_shapes)
    s += fmt::format("  skipped {} malformed line(s) and {} request(s) longer than the setup serves{}\n",
                     a.skipped_lines, a.skipped_shapes,
                     a.skipped_examples.empty() ? ""
                                                : fmt::format(" (first: line {}: {})", a.skipped_examples[0].line,
                                                              a.skipped_examples[0].reason));
  s += fmt::format("  energy {} kWh; CO2 {} kg{} (operational {:.4g}, embodied {}); {:.4g} GPU-hours busy\n",
                   with_interval(a.energy_j, a.energy_j_interval, 1 / kJoulesPerKwh),
                   with_interval(a.total_g(), a.total_g_interval, 1e-3), a.embodied_unknown ? ", operational only" : "",
                   a.operational_g / 1000, embodied_kg_cell(a), a.gpu_busy_s / 3600);
  s += fmt::format(
      "  per request: energy p50 {:.4g} J (p90 {:.4g}), CO2 p50 {:.4g} g (p90 {:.4g}); {:.4g} J per "
      "generated token\n",
      a.energy_per_request_j.p50, a.energy_per_request_j.p90, a.co2_per_request_g.p50, a.co2_per_request_g.p90,
      per_token(a.energy_j, a.gen_tokens));
  if (a.energy_prefill_j && a.energy_j > 0)
    s += fmt::format("  prefill {:.1f}% / decode {:.1f}% of the energy\n", 100 * *a.energy_prefill_j / a.energy_j,
                     100 * *a.energy_decode_j / a.energy_j);
  return s + c.carbon + "\n  " + c.intervals + "\n";
}

std::string write_trace_report(const TraceAccount& a, const TraceContext& c, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::string warning = histogram(a.co2_values_g, dir / "histogram.png");
  const bool histogram_ok = warning.empty();
  const std::string timeline_warning = timeline(a, dir / "timeline.png");
  if (warning.empty()) warning = timeline_warning;
  write_file_atomic(dir / "summary.json", trace_summary_json(a, c).dump(2) + "\n");
  write_file_atomic(dir / "report.md", markdown(a, c, histogram_ok, timeline_warning.empty() && !a.timeline.empty()));
  return warning;
}

namespace {

// Writes the decimal digits of `n` ending just before `end`; returns where they start.
char* digits_before(char* end, uint64_t n) {
  do *--end = static_cast<char>('0' + n % 10), n /= 10;
  while (n > 0);
  return end;
}

}  // namespace

void append_fixed3(std::string& out, double value) {
  if (!(value >= 0 && value < 1e15)) {
    fmt::format_to(std::back_inserter(out), "{:.3f}", value);
    return;
  }
  // value = mantissa / 2^shift exactly; value x 1000 rounded to the nearest integer, ties to even, in 128-bit integers:
  // the decimal expansion rounded as fmt and printf round it.
  int exponent = 0;
  const double fraction = std::frexp(value, &exponent);
  const auto mantissa = static_cast<uint64_t>(std::ldexp(fraction, 53));
  const int shift = 53 - exponent;  // >= 3 below 1e15
  const UInt128 scaled = static_cast<UInt128>(mantissa) * 1000;
  uint64_t units = 0;
  if (shift < 100) {  // else value x 1000 < 2^-36: 0
    const UInt128 quotient = scaled >> shift, rest = scaled - (quotient << shift), half = UInt128{1} << (shift - 1);
    units = static_cast<uint64_t>(quotient) + (rest > half || (rest == half && (quotient & 1)));
  }
  char text[32];
  char* p = text + sizeof text;
  for (int i = 0; i < 3; ++i) *--p = static_cast<char>('0' + units % 10), units /= 10;
  *--p = '.';
  p = digits_before(p, units);
  out.append(p, text + sizeof text);
}

void append_request_csv_head(std::string& out, long line, const std::optional<double>& time_s) {
  if (line >= 0) {
    char text[24];
    text[23] = ',';
    char* start = digits_before(text + 23, static_cast<uint64_t>(line));
    out.append(start, text + 24);
  } else {
    fmt::format_to(std::back_inserter(out), "{},", line);
  }
  if (time_s) append_fixed3(out, *time_s);
}

std::string request_csv_tail(const RequestFigures& f) {
  return fmt::format(",{},{},{},{},{:.6g},{:.6g},{:.6g},{},{:.6g}\n", f.prompt_tokens, f.gen_tokens,
                     optional_cell(f.energy_prefill_j), optional_cell(f.energy_decode_j), f.energy_j, f.latency_s,
                     f.operational_g, f.embodied_known ? fmt::format("{:.6g}", f.embodied_g) : "", f.total_g());
}

void append_request_csv_line(std::string& out, const RequestFigures& f) {
  append_request_csv_head(out, f.line, f.time_s);
  out += request_csv_tail(f);
}

void write_request_csv(const std::vector<RequestFigures>& figures, const std::filesystem::path& path) {
  AtomicFile file(path);
  std::string text(kRequestCsvHeader);
  for (const auto& f : figures) {
    append_request_csv_line(text, f);
    if (text.size() > (1u << 20)) file.stream() << text, text.clear();
  }
  file.stream() << text;
  file.commit();
}

}  // namespace llmco2::trace
