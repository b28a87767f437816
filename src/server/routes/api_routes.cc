// server/routes/api_routes.cc - the JSON endpoints: bodies read strictly (unknown keys named), answers from the API.
#include "server/routes/api_routes.h"

#include <algorithm>

#include <fmt/format.h>

namespace llmco2::server {
namespace {

// A copy of `json` with the versions every answer carries.
Json with_versions(Json json, const Json& versions) {
  json["versions"] = versions;
  return json;
}

// One prediction as /v1/predict answers it: the CLI's JSON document and the notes the CLI prints on stderr.
Json prediction_json(const api::Result& result) {
  Json out = result.json;
  out["warnings"] = result.warnings;
  return out;
}

void require_object(const Json& body, const std::string& where, const std::vector<std::string>& keys) {
  if (!body.is_object()) throw HttpError(400, fmt::format("{}: expected a JSON object, got {}", where, body.dump()));
  for (const auto& [key, value] : body.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw HttpError(400, fmt::format("{}: unknown key '{}' (expected {})", where, key, fmt::join(keys, ", ")));
}

}  // namespace

ApiRoutes::ApiRoutes(const api::Session& session, RouteLimits limits)
    : session_(session), limits_(limits), versions_(session.versions()) {
  catalogs_ = {{"models", session.models()}, {"gpus", session.gpus()}, {"nodes", session.nodes()}};
  catalogs_["regions"] = session.regions();
}

Reply ApiRoutes::health() const { return {200, Json{{"status", "ok"}, {"versions", versions_}}}; }

Reply ApiRoutes::predict(const std::string& body) const {
  const api::Request request = api::request_from_json(parse_body(body), "request");
  return {200, with_versions(prediction_json(session_.predict(request)), versions_)};
}

Reply ApiRoutes::predict_batch(const std::string& body) const {
  const Json json = parse_body(body);
  require_object(json, "batch", {"requests"});
  if (!json.contains("requests") || !json["requests"].is_array())
    throw HttpError(400, "batch: expected {\"requests\": [request, ...]}");
  const Json& list = json["requests"];
  if (list.size() > limits_.max_batch_requests)
    throw HttpError(413,
                    fmt::format("batch: {} requests, at most {} per call", list.size(), limits_.max_batch_requests));
  std::vector<api::Request> requests;
  for (size_t i = 0; i < list.size(); ++i)
    requests.push_back(api::request_from_json(list[i], fmt::format("requests[{}]", i)));
  Json results = Json::array();
  for (const api::Result& r : session_.predict_many(requests, 1)) results.push_back(prediction_json(r));
  return {200, Json{{"results", results}, {"versions", versions_}}};
}

Reply ApiRoutes::compare(const std::string& body) const {
  const Json json = parse_body(body);
  require_object(json, "compare", {"request", "gpu_types", "counts", "slo_ms"});
  const api::Request request = api::request_from_json(json.value("request", Json::object()), "compare: request");
  const api::Result result = session_.compare(request, api::compare_options_from_json(json, "compare"));
  Json out = with_versions(result.json, versions_);
  out["warnings"] = result.warnings;
  return {200, out};
}

Reply ApiRoutes::catalog(const std::string& name) const {
  const Json& c = catalogs_.at(name);
  return {200, with_versions(c.is_object() ? c : Json{{name, c}}, versions_)};
}

Reply ApiRoutes::versions() const { return {200, versions_}; }

const std::vector<Route>& api_routes() {
  using R = const ApiRoutes&;
  using B = const std::string&;
  static const std::vector<Route> routes = {
      {"GET", "/health", [](R r, B) { return r.health(); }},
      {"POST", "/v1/predict", [](R r, B body) { return r.predict(body); }},
      {"POST", "/v1/predict/batch", [](R r, B body) { return r.predict_batch(body); }},
      {"POST", "/v1/compare", [](R r, B body) { return r.compare(body); }},
      {"GET", "/v1/models", [](R r, B) { return r.catalog("models"); }},
      {"GET", "/v1/gpus", [](R r, B) { return r.catalog("gpus"); }},
      {"GET", "/v1/nodes", [](R r, B) { return r.catalog("nodes"); }},
      {"GET", "/v1/regions", [](R r, B) { return r.catalog("regions"); }},
      {"GET", "/v1/versions", [](R r, B) { return r.versions(); }},
  };
  return routes;
}

}  // namespace llmco2::server
