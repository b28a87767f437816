// api/session_impl.h - what a Session holds: its settings and the predictors it has loaded (shared by the Session's
// translation units: predict, compare, trace).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "api/module.h"
#include "api/resolve.h"
#include "dataset/request_log.h"
#include "llmco2/api.h"
#include "sim/site_profile.h"

namespace llmco2::api {

struct Session::Impl {
  Settings settings;
  std::optional<SiteProfile> site;  // the settings' site profile, read when the session is made
  mutable std::mutex mutex;
  mutable std::map<std::string, LoadedPredictor> predictors;
  mutable std::once_flag versions_once;
  mutable Json versions;
  mutable std::once_flag params_once;
  mutable SimParams resolved_params;

  // The predictor of this name, loaded on first use. Thread-safe.
  const LoadedPredictor& predictor(const std::string& name) const;
  // The simulator parameters: settings.params (default data/sim/params.json) with the site profile applied, read on
  // first use and kept (every predictor, compare's capacity planner and serve-sim run on them). Thread-safe.
  const SimParams& params() const;
  // What the site profile says about a request's setup: {"name", "file", "corrections": those of its GPU and
  // engine}, and a warning when none applies; null without a profile.
  Json site_json(const ResolvedRequest& r, std::vector<std::string>& warnings) const;
  // A log scored on `setup` (score_trace and score_requests).
  Result score(RequestLog log, const Request& setup, const TraceOptions& options) const;
};

}  // namespace llmco2::api
