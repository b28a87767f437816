// trace/trace_report.h - what `llmco2 trace` writes: a Markdown report with a histogram and a timeline plot, a JSON
// summary, a terminal summary, and the per-request CSV.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "trace/module.h"
#include "trace/trace_account.h"

namespace llmco2::trace {

// What the report says about how it was made.
struct TraceContext {
  std::string log_source, log_format;
  std::string setup;  // "llama-3.1-8b on 1 x h100-sxm (vllm), batch 1, bf16"
  std::string predictor;
  std::string carbon;     // the carbon inputs, one or two lines
  std::string intervals;  // where the intervals come from, or why there are none
  TraceOptions options;
  std::string energy_scope = "gpu";     // what the energies count: "gpu" or "node"
  std::string node;                     // the node id at node scope
  Json carbon_inputs = Json::object();  // region, intensity, PUE, embodied figure and scope, as predict writes them
};

Json trace_summary_json(const TraceAccount& account, const TraceContext& context);
std::string trace_summary_text(const TraceAccount& account, const TraceContext& context);

// Writes report.md, summary.json, histogram.png and timeline.png (when the log has timestamps) into `dir` (created),
// each atomically. Returns "" or a warning about the plots.
std::string write_trace_report(const TraceAccount& account, const TraceContext& context,
                               const std::filesystem::path& dir);

// The per-request CSV: this header, then one line per scored request (line, time, tokens, energies, latency, CO2).
inline constexpr const char* kRequestCsvHeader =
    "line,time_utc_s,prompt_tokens,gen_tokens,energy_prefill_j,energy_decode_j,energy_j,latency_s,"
    "co2_operational_g,co2_embodied_g,co2_total_g\n";
void append_request_csv_line(std::string& out, const RequestFigures& figures);
// The line in two parts: what differs between requests of one shape (line, time) and what does not (tokens,
// energies, latency, CO2; with the newline), which the streaming path formats once per shape.
void append_request_csv_head(std::string& out, long line, const std::optional<double>& time_s);
std::string request_csv_tail(const RequestFigures& figures);
// Appends `value` as fmt's "{:.3f}" writes it (the same characters), faster for 0 <= value < 1e15.
void append_fixed3(std::string& out, double value);
// The whole per-request CSV of figures held in memory (the plain path), written atomically.
void write_request_csv(const std::vector<RequestFigures>& figures, const std::filesystem::path& path);

}  // namespace llmco2::trace
