// server/server.cc - the routes and the embedded web files on the HTTP server of server/http, the errors every route
// shares, the access log and stopping on a signal.
#include "server/server.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <thread>

#include <fmt/format.h>

#include "server/access_log/access_log.h"
#include "server/http/http_server.h"
#include "server/routes/api_routes.h"
#include "server/web/embedded_files.h"

namespace llmco2::server {
namespace {

// Every answer carries the versions its figures rest on.
HttpResponse json_response(const Reply& reply, const std::string& versions) {
  HttpResponse r;
  r.status = reply.status;
  r.body = reply_text(reply);
  r.headers.emplace_back("X-Llmco2-Versions", versions);
  return r;
}

// The methods a path is served with, empty when it is not served at all.
std::vector<std::string> methods_of(const std::string& path) {
  std::vector<std::string> methods;
  for (const Route& r : api_routes())
    if (r.path == path) methods.push_back(r.method);
  for (const WebAsset& a : web_assets())
    if (a.url_path == path) methods.push_back("GET");
  return methods;
}

// A path served, but not with this method (405 with Allow), or not served at all (404).
HttpResponse not_routed(const HttpRequest& req, const std::string& versions) {
  const auto methods = methods_of(req.path);
  if (methods.empty())
    return json_response(
        error_reply(404, fmt::format("{} {}: no such endpoint (see /openapi.json)", req.method, req.path)), versions);
  HttpResponse r = json_response(error_reply(405, fmt::format("{} {}: method not allowed (use {})", req.method,
                                                              req.path, fmt::join(methods, " or "))),
                                 versions);
  r.headers.emplace_back("Allow", fmt::format("{}", fmt::join(methods, ", ")));
  return r;
}

// One whole request: a JSON endpoint, a web file, or 404/405. The body is read as JSON whatever its Content-Type
// (curl -d sends a form type).
HttpResponse route(const ApiRoutes& routes, const HttpRequest& req, const std::string& versions) {
  for (const Route& r : api_routes())
    if (r.path == req.path && r.method == req.method)
      return json_response(answer_or_error([&] { return r.answer(routes, req.body); }), versions);
  if (req.method == "GET")
    for (const WebAsset& asset : web_assets())
      if (asset.url_path == req.path) {
        HttpResponse r;
        r.content_type = asset.content_type;
        r.body = std::string(asset.bytes);
        r.headers.emplace_back("X-Llmco2-Versions", versions);
        return r;
      }
  return not_routed(req, versions);
}

HttpServerOptions http_options(const ServerOptions& options) {
  HttpServerOptions h;
  h.host = options.host;
  h.port = options.port;
  h.threads =
      options.threads > 0 ? static_cast<size_t>(options.threads) : std::max(1u, std::thread::hardware_concurrency());
  h.queue = static_cast<size_t>(options.queue);
  h.max_connections = static_cast<size_t>(options.max_connections);
  h.timeout_s = options.timeout_s;
  h.keep_alive_s = options.keep_alive_s;
  h.limits.max_body_bytes = options.max_body_bytes;
  return h;
}

// Blocks SIGINT and SIGTERM in this thread and every thread it starts; a watcher thread waits for them instead.
// Their default action is restored first: a signal ignored on entry (a background job's SIGINT) is discarded, not
// left pending for sigwait.
sigset_t stop_signals() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

}  // namespace

void serve(const api::Session& session, const ServerOptions& options, std::ostream& out, std::ostream& log) {
  const sigset_t signals = stop_signals();  // first: a signal while the catalogs load stops the server once it runs
  const ApiRoutes routes(session, RouteLimits{options.max_batch_requests});
  const std::string versions = routes.version_json().dump();
  AccessLog access_log(log);
  HttpServer http(
      http_options(options), [&](const HttpRequest& req) { return route(routes, req, versions); },
      [&](int status, const std::string& message) { return json_response(error_reply(status, message), versions); },
      [&](const HttpRequest& req, const HttpResponse& res, std::chrono::system_clock::time_point received, double ms) {
        access_log.write({received, req.method, req.path, res.status, res.body.size(), std::round(ms * 1000) / 1000});
      });
  const int port = http.bind();
  std::atomic<bool> running{true};
  std::thread watcher([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    if (running) http.stop();
  });
  out << "llmco2 serve: listening on http://" << options.host << ":" << port << std::endl;
  http.run();
  running = false;
  // Wakes the watcher, blocked in sigwait for SIGINT/SIGTERM, when the server stopped on its own: the signal is the
  // one it waits for, delivered to it alone, not a way to end the thread.
  pthread_kill(watcher.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  watcher.join();
  out << "llmco2 serve: stopped" << std::endl;
}

}  // namespace llmco2::server
