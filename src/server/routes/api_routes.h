// server/routes/api_routes.h - the JSON endpoints of `llmco2 serve` (/health, /v1/...): each reads its body, calls
// the public API (llmco2/api.h) and answers what the CLI would print with --format json.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "llmco2/api.h"
#include "server/routes/reply.h"

namespace llmco2::server {

struct RouteLimits {
  size_t max_batch_requests = 1000;  // POST /v1/predict/batch: more requests answer 413
};

// The endpoints over one Session. The catalogs and versions are read once, at construction.
class ApiRoutes {
 public:
  ApiRoutes(const api::Session& session, RouteLimits limits);

  Reply health() const;
  Reply predict(const std::string& body) const;        // one request object
  Reply predict_batch(const std::string& body) const;  // {"requests": [...]}
  Reply compare(const std::string& body) const;        // {"request": {...}, "gpu_types", "counts", "slo_ms"}
  Reply catalog(const std::string& name) const;        // models, gpus, nodes or regions
  Reply versions() const;
  const Json& version_json() const { return versions_; }

 private:
  const api::Session& session_;
  RouteLimits limits_;
  Json versions_, catalogs_;
};

// One endpoint: its method, its path and what answers it (the body is empty for GET).
struct Route {
  std::string method, path;
  std::function<Reply(const ApiRoutes&, const std::string& body)> answer;
};

// Every JSON endpoint, in the order docs/api.md lists them.
const std::vector<Route>& api_routes();

}  // namespace llmco2::server
