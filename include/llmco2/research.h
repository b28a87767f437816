// llmco2/research.h - the research side of llmco2 as library calls: the kernel graph of a request, the reference
// simulator on one request or a whole plan, focused sampling of plans, importing public measurements, calibrating
// the simulator with its held-out scores, replaying measured load tests, measuring on this machine's GPUs, and
// checking a run's outputs. The CLI commands of these names only bind their flags to these options and print what
// these calls return, so a script, a notebook or another tool gets exactly the CLI's work.
//
// Every call throws llmco2::Error (llmco2/error.h) for bad input, with the file, line or key and what was expected.
// Calls that write files write them atomically (a unique temporary file, then a rename) with a manifest of the run
// (`check_outputs` reads it back). Progress lines, where asked for, go to stderr while the call runs. The long calls
// (sample, label_plan, calibrate, serve_validate) stop at their next step while api::request_interrupt is set, and
// throw Error "interrupted".
#pragma once

#include <string>
#include <vector>

#include "llmco2/api.h"
#include "llmco2/error.h"

namespace llmco2::research {

using api::Json;

// ---- One request (`llmco2 graph`, `llmco2 simulate`) ----

// The kernel graph of one layer of the request with its prefill and decode features: format "json" (the document),
// "dot" (Graphviz, of `phase`: "prefill" or "decode") or "summary" (a table). Result::text holds it; json too for
// "json"; warnings holds the request's notes.
api::Result kernel_graph(const api::Request& request, const std::string& format = "json",
                         const std::string& phase = "prefill");

// What an NVML measurement of the request would read, by the reference simulator under `params_path` (empty:
// data/sim/params.json): energy of the GPU boards and latency per phase, mean power per GPU. Result::json and
// Result::text (the CLI's table) both hold it.
api::Result simulate(const api::Request& request, const std::string& params_path = "");

// ---- Plans and datasets (`llmco2 sample`, `llmco2 simulate --plan`, `llmco2 import`) ----

// Focused sampling from the bundled Azure traces (the paper's section 3.3).
struct SampleOptions {
  long count = 1000;
  uint64_t seed = 1;
  std::vector<std::string> models = {"paper"};  // "paper" (its 17 LLMs), "all" (the catalog) or model ids
  std::vector<std::string> gpus = {"l4", "a100-80gb-sxm", "h100-sxm"};
  int max_gpus = 4;  // counts run from the fewest that fit up to this (1 to 64)
  std::vector<double> batch_weights = {0.4, 0.3, 0.15, 0.15};  // P(batch = 1, 2, ...)
  double int8_share = 0;  // share of configurations with int8 weights and activations (0-1)
  std::string out;        // plan CSV to write (required)
};
// Draws the plan and writes it; returns the number of configurations written.
long sample(const SampleOptions& options);

// Labelling a plan with the reference simulator (a dataset CSV of what NVML would have read).
struct LabelOptions {
  std::string plan, out;  // plan CSV (model,gpu,gpus,batch,prompt,gen[,dtype,engine]); dataset CSV to write
  int repeats = 1;        // noisy repeats per configuration (mean and spread in the row), 1 to 1000
  uint64_t seed = 1;      // of the noise model
  std::string params;     // simulator parameters; empty: data/sim/params.json
  bool progress = false;  // forced on for plans of 5000 rows or more
};
struct LabelSummary {
  long rows_written = 0;
  std::vector<std::string> rejects;  // one line per plan row that could not be labelled: file, line, why
};
LabelSummary label_plan(const LabelOptions& options);

// The public measurement sources `import` knows, each with one line on what it measured (and, for those that
// cannot be imported, why).
struct SourceInfo {
  std::string id, folder, summary;
  bool importable = true;
};
std::vector<SourceInfo> measurement_sources();

struct ImportOptions {
  std::string from = "../shared/data/measured";  // folder holding the sources' folders
  std::string out_dir;                           // where <id>.csv and <id>.rejects.csv go; empty: data/measured
};
struct ImportSummary {
  std::string id, written;  // the CSV written ("" when the source is not importable)
  long rows = 0, rejected = 0;
  std::vector<std::pair<std::string, long>> reject_reasons;  // reason classes, most frequent first
};
// Converts one source (an id of measurement_sources()) into the dataset format. Throws Error for an unknown id or a
// missing source folder; a source that cannot be imported returns an empty summary with `written` empty.
ImportSummary import_source(const std::string& id, const ImportOptions& options);

// A site's own benchmark results into the dataset format (`llmco2 import-bench`), for calibrate --site: one
// steady-state row per result of vllm bench serve (--save-result) or trtllm-bench (throughput --report_json).
struct ImportBenchOptions {
  std::vector<std::string> files;
  std::string format = "auto";  // vllm | trtllm | auto (told apart by their keys)
  std::string gpu;              // GPU catalog id (required: the files name none the catalog takes)
  int gpus = 0;                 // 0: the file's count (trtllm-bench), else refused
  std::string engine;           // "": the tool's (vllm bench serve against backend vllm: vllm; trtllm-bench: trt-llm)
  std::string model;            // "": the file's Hugging Face model id, found in the catalog
  std::string dtype;            // "": the checkpoint's
  std::string source = "site";  // the rows' source id
  std::string out;              // dataset CSV to write (required)
};
struct ImportBenchSummary {
  long rows = 0;
  std::vector<std::string> rejects;  // "file:line: reason", one per result not imported
};
ImportBenchSummary import_bench(const ImportBenchOptions& options);

// ---- Calibration (`llmco2 calibrate`, `llmco2 calibrate --kernels`) ----

struct CalibrateOptions {
  std::string data_dir;                        // dataset CSVs; empty: data/measured
  std::string params_out;                      // fitted parameters; empty: data/sim/params.json
  std::string report = "docs/calibration.md";  // Markdown report; plots go to <its folder>/calibration/
  std::string rows_out;                        // optional CSV of every simulatable row (measured, fitted, held out)
  int max_evaluations = 2500;                  // objective evaluations per fit
  bool fit_only = false;                       // fit on all sources only: no held-out fits, no report
  unsigned threads = 0;                        // parallel held-out fits; 0: every core
};
struct CalibrateSummary {
  std::string params_written, report_written;  // report_written empty with fit_only
  long rows = 0, simulatable = 0, skipped = 0;
  double seconds = 0;
  std::vector<std::string> warnings;  // plots that could not be drawn
};
// Fits the simulator's parameters on the measurements, with leave-one-source-out and leave-one-GPU-out fits for the
// report (progress lines on stderr: each held-out fit takes seconds to minutes).
CalibrateSummary calibrate(const CalibrateOptions& options);

// A multi-turn chat log for prefix caching (`llmco2 make-log`): conversations arrive at a Poisson rate, each turn
// re-sends the conversation so far (system prompt, earlier messages and answers) plus a new user message, after the
// user's think time. Azure's columns plus SessionId and SharedPrefixTokens (the tokens re-sent), sorted by time.
struct ConversationLogOptions {
  long conversations = 100;
  int turns = 5;             // turns per conversation
  double rate_per_s = 1;     // conversations starting per second (Poisson)
  double think_s = 30;       // mean gap between a conversation's sends: half fixed (the answer first), half exponential
  long system_tokens = 500;  // the system prompt each conversation starts with
  long user_tokens = 200;    // mean new user tokens per turn
  long output_tokens = 300;  // mean answer tokens per turn
  double spread = 0.5;       // user and answer lengths uniform in [mean (1 - spread), mean (1 + spread)]
  unsigned seed = 1;
  double start_s = 1700000000;  // the first conversation's start (seconds since 1970, UTC)
};
// The log as CSV text; throws Error naming a setting out of range.
std::string conversation_log_csv(const ConversationLogOptions& options);
// Writes it atomically to `path`; returns the requests written.
long write_conversation_log(const ConversationLogOptions& options, const std::string& path);

// `llmco2 validate`: the default predictor (the calibrated simulator) and its baselines on every imported public
// source, leave one source out and leave one GPU type out, with each held-out row's evidence label, conformal
// intervals per label and their held-out coverage, and ranking quality (docs/accuracy.md, which it writes).
struct ValidateOptions {
  std::string data_dir;                     // dataset CSVs; empty: data/measured
  std::string report = "docs/accuracy.md";  // Markdown report; its plots go to <its folder>/<its stem>/
  std::string rows_out;                     // optional CSV of every held-out prediction with its label and coverage
  std::string index_out;                    // evidence index; empty: data/evidence/index.csv
  std::string intervals_out;                // intervals per label; empty: data/evidence/intervals.json
  double level = 0.8;                       // the intervals' nominal coverage
  int max_evaluations = 2500;               // objective evaluations per held-out fit
  unsigned threads = 0;                     // parallel held-out fits; 0: every core
  // More predictors scored on the same rows beside the simulator and the baselines, as they are (no refit): bundled
  // ones by name (--predictor), and a model file of `llmco2 train` (--model-file).
  std::vector<std::string> predictors;
  std::string model_file;
};
struct ValidateSummary {
  std::string report_written, index_written, intervals_written;
  long rows = 0;  // simulatable measured rows scored
  double seconds = 0;
  std::vector<std::string> warnings;  // plots that could not be drawn
};
ValidateSummary validate(const ValidateOptions& options);

// A site profile (`llmco2 calibrate --site NAME --data FILES`): bounded corrections of the global parameters for the
// GPU types and engines of one deployment, fitted on its own rows (docs/calibration.md, site profiles).
struct SiteCalibrateOptions {
  std::string name;               // the site: written to site-<name>.json unless `out` says otherwise
  std::vector<std::string> data;  // dataset CSVs (llmco2 measure's, imported benchmark results) or folders of them
  std::string params;             // global parameters; empty: data/sim/params.json
  std::string out;                // empty: site-<name>.json in the working folder
};
struct SiteCalibrateSummary {
  std::string written;
  long rows = 0, simulatable = 0;
  std::vector<std::string> skipped;  // rows the simulator cannot label: "file:line: reason"
  std::string report;                // the corrections and the rows' error before and after, as a table
};
SiteCalibrateSummary calibrate_site(const SiteCalibrateOptions& options);

// A benchmark recipe for a site profile (`llmco2 plan-site`): the configurations of one setup (model, GPUs,
// engine) that pin its corrections down best within a time budget, ranked by the information each adds at the global
// parameters (the greedy D-optimal choice of calibrate's site study), as the commands of the tool the site runs.
struct SitePlanOptions {
  std::string name = "mysite";  // the site: result files are named after it
  std::string model, gpu;       // catalog ids (required)
  int gpus = 1;                 // tensor parallel
  std::string engine = "vllm";  // an engine of data/engines/engines.json
  std::string dtype;            // empty: the checkpoint's own
  double minutes = 15;          // GPU time the runs may take
  std::string tool;      // vllm | trtllm | measure; empty: vllm for vLLM engines, trtllm for trt-llm, else measure
  std::string params;    // global parameters; empty: data/sim/params.json
  std::string plan_out;  // --tool measure: the plan CSV to write; empty: <name>-plan.csv
};
struct SitePlanRun {
  long batch = 1;  // the closed loop's concurrency, or llmco2 measure's batch
  long prompt_tokens = 0, gen_tokens = 0;
  long requests = 1;      // of the run (a closed loop), or the batch (measure)
  double expected_s = 0;  // about, at the global parameters
  std::string command;    // what to run ("" for measure: the plan file holds the rows)
};
// What the runs would pin down: a correction's posterior sd after them, at the global parameters.
struct SitePlanCorrection {
  std::string name, target;  // e.g. "compute_scale", "h100-sxm"
  double prior_sd = 0, sd = 0;
  double data_share = 0;  // 1 - (sd / prior_sd)^2: how much the runs would decide it
};
struct SitePlan {
  std::string tool;  // "vllm bench serve", "trtllm-bench", "llmco2 measure"
  std::vector<SitePlanRun> runs;
  std::vector<SitePlanCorrection> expected;
  double expected_s = 0;
  std::string plan_written;  // measure: the plan CSV
  std::string text;          // the runs, what they pin down, the commands and the next steps
};
SitePlan plan_site(SitePlanOptions options);

struct KernelFitOptions {
  std::string vidur_dir;    // Vidur's operator profiles; empty: data/measured/vidur
  std::string tables_dir;   // NVIDIA's AIConfigurator kernel tables; empty: data/measured/aiconfigurator
  std::string kernels_out;  // empty: data/sim/kernels.json
  std::string data_dir;     // the dataset folder whose mlperf-amd runs fit AMD CDNA 3; empty: data/measured
  std::string report = "docs/kernel-fit.md";  // plot in <its folder>/kernel-fit/held_out.png
};
struct KernelFitSummary {
  std::string kernels_written, report_written;
  // network_samples: NCCL all-reduces (Vidur's and AIConfigurator's nccl-tests rows); table_samples: AIConfigurator's
  // GEMM and attention rows and its engines' own all-reduces.
  long compute_samples = 0, network_samples = 0, table_samples = 0;
  double seconds = 0;
  std::vector<std::string> warnings;
};
// The kernel-time parameters fitted on Vidur's per-operator latencies (docs/kernel-fit.md).
KernelFitSummary fit_kernels(const KernelFitOptions& options);

// ---- Our own GPU measurements (`llmco2 score-campaign`) ----

struct CampaignScoreOptions {
  std::vector<std::string> dirs;       // campaign folders: data/measured/gpu_campaign/<gpu>-<date>
  std::string model = "llama-3.1-8b";  // the model whose shapes its closed-loop run ran
  std::vector<std::string> engines = {"vllm", "trt-llm", "sglang"};  // profiles its closed loop is scored against
  std::string params;  // simulator parameters; empty: data/sim/params.json
  std::string report;  // the Markdown written here (atomically) when not empty
};
// Kernel campaigns (scripts/gpu_campaign/kernel_campaign.py), one section each, scored against the simulator as it
// stands, before any refit: every GEMM and attention case against kernel_time_s on the work the simulator gives it
// (MAPE and the median measured/predicted ratio per operator family), the closed-loop run against the simulator's time
// to first token, inter-token latency and GPU energy per engine profile. Result::text is the Markdown report; json the
// figures
// ({"runs": [one object per folder]}).
api::Result score_campaign(const CampaignScoreOptions& options);

// ---- Validation (`llmco2 serve-validate`) ----

struct ServeValidateOptions {
  std::string data_dir;                // dataset CSVs; empty: data/measured
  std::string source = "mlenergy-v3";  // the rows replayed
  std::string params;                  // simulator parameters for held_out "none"; empty: data/sim/params.json
  std::string held_out = "source";     // source (fit without it), gpu (without each GPU type in turn) or none
  std::string rows_out, markdown_out;  // optional per-row CSV and the table as a file
  bool progress = false;
};
// The source's steady-state load tests (or whole-node MLPerf runs, for a node-scope source) replayed through the
// serving simulation as their harness ran them: Result::text is the Markdown table of simulated against measured
// (energy per request or token, inter-token latency or throughput); warnings holds the skipped rows, one line per
// reason. Throws Error when no row of the source can be replayed.
api::Result serve_validate(const ServeValidateOptions& options);

// ---- Measuring (`llmco2 measure`) and checking outputs (`llmco2 check-outputs`) ----

struct MeasureOptions {
  std::string plan, out;  // plan CSV; dataset CSV the measured rows are appended to (resumes when it exists)
  std::string runner;     // the runner's command line, e.g. 'python3 tools/runners/hf_transformers.py'
  int repeats = 5, warmup = 1;
  std::vector<int> devices;  // NVML indices; empty: 0 .. gpus-1 of each configuration
  std::string nvml_library = "libnvidia-ml.so.1";
  double idle_s = 5, timeout_s = 1800;
  std::string source = "nvml";
  int sample_interval_ms = 20;  // power sampling, for GPUs without an energy counter
  bool progress = true;
};
struct MeasureSummary {
  long planned = 0, already_done = 0, measured = 0, failed = 0, rejected_plan_rows = 0;
  std::vector<double> idle_w;  // per device used, before the campaign (not subtracted)
  std::string failures;        // where failed configurations are listed (re-running retries them)
};
// A measurement campaign on this machine's NVIDIA GPUs through NVML and a runner process (docs/measure.md).
MeasureSummary measure(const MeasureOptions& options);

// The outputs a run's manifest (manifest.json or <file>.manifest.json) lists that are no longer as that run
// finished them (missing, or size or checksum changed), one line each; empty when all are.
std::vector<std::string> check_outputs(const std::string& manifest_path);

}  // namespace llmco2::research
