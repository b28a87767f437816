// research/measure.cc - a measurement campaign on this machine's GPUs (`llmco2 measure`) and the check of a run's
// outputs against its manifest (`llmco2 check-outputs`).
#include "core/atomic_file.h"
#include "core/output_manifest.h"
#include "llmco2/research.h"
#include "measure/campaign.h"
#include "research/module.h"

namespace llmco2::research {

MeasureSummary measure(const MeasureOptions& o) {
  refuse_output_over_input(o.out, "--out", o.plan, "plan");
  CampaignOptions c;
  c.plan = o.plan;
  c.out = o.out;
  c.runner = o.runner;
  c.repeats = o.repeats;
  c.warmup = o.warmup;
  c.devices = o.devices;
  c.nvml_library = o.nvml_library;
  c.idle_s = o.idle_s;
  c.timeout_s = o.timeout_s;
  c.source = o.source;
  c.sample_interval = std::chrono::milliseconds(o.sample_interval_ms);
  c.progress = o.progress;
  const CampaignResult r = run_campaign(c);
  return {r.planned, r.already_done, r.measured, r.failed, r.rejected_plan_rows, r.idle_w, r.failures.string()};
}

std::vector<std::string> check_outputs(const std::string& manifest_path) { return stale_outputs(manifest_path); }

}  // namespace llmco2::research
