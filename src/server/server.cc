// server/server.cc - binding the routes and the embedded web files to cpp-httplib, the errors every route shares,
// the access log and stopping on a signal.
#include "server/server.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "server/access_log/access_log.h"
#include "server/pool/bounded_queue.h"
#include "server/routes/api_routes.h"
#include "server/web/embedded_files.h"

namespace llmco2::server {
namespace {

using Clock = std::chrono::steady_clock;
thread_local Clock::time_point t_request_start;
thread_local std::chrono::system_clock::time_point t_request_time;

void send(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply_text(reply), "application/json");
}

// On the rejecting thread nothing runs: 503 at once.
Reply answer_guarded(const std::function<Reply()>& answer) {
  if (is_rejecting_thread()) return error_reply(503, "server busy: every worker and queue slot is taken, retry later");
  return answer_or_error(answer);
}

httplib::Server::Handler handler(std::function<Reply(const httplib::Request&)> answer) {
  return [answer](const httplib::Request& req, httplib::Response& res) {
    const Reply reply = answer_guarded([&] { return answer(req); });
    if (reply.status == 503) {
      res.set_header("Connection", "close");
      res.set_header("Retry-After", "1");
    }
    send(res, reply);
  };
}

std::string regex_escaped(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

void add_api_routes(httplib::Server& http, const ApiRoutes& routes) {
  for (const Route& route : api_routes()) {
    auto h = handler([&routes, &route](const httplib::Request& req) { return route.answer(routes, req.body); });
    if (route.method == "GET") http.Get(regex_escaped(route.path), h);
    else http.Post(regex_escaped(route.path), h);
  }
}

void add_web_routes(httplib::Server& http) {
  for (const WebAsset& asset : web_assets()) {
    http.Get(regex_escaped(asset.url_path), [asset](const httplib::Request&, httplib::Response& res) {
      if (is_rejecting_thread()) return send(res, answer_guarded([] { return Reply{}; }));
      res.set_content(std::string(asset.bytes), asset.content_type.c_str());
    });
  }
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

// Errors cpp-httplib answers itself (no route, body over the cap, a request it cannot parse) in the JSON form.
httplib::Server::HandlerResponse fill_error(const httplib::Request& req, httplib::Response& res, size_t max_body) {
  if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // an endpoint's own error
  std::string message = fmt::format("HTTP {}", res.status);
  const auto methods = methods_of(req.path);
  if (res.status == 404 && !methods.empty()) {
    res.status = 405;
    res.set_header("Allow", fmt::format("{}", fmt::join(methods, ", ")));
    message = fmt::format("{} {}: method not allowed (use {})", req.method, req.path, fmt::join(methods, " or "));
  } else if (res.status == 404) {
    message = fmt::format("{} {}: no such endpoint (see /openapi.json)", req.method, req.path);
  } else if (res.status == 413 && req.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded")) {
    // cpp-httplib holds a form-encoded body (what `curl -d` sends by default) to its own, smaller limit.
    message = fmt::format("a form-encoded body (Content-Type: application/x-www-form-urlencoded, what curl -d sends) "
                          "is limited to {} bytes by the HTTP library; send Content-Type: application/json (curl -H "
                          "'Content-Type: application/json') for bodies up to {} bytes",
                          CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH, max_body);
  } else if (res.status == 413) {
    message = fmt::format("request body over {} bytes (--max-body-bytes)", max_body);
  } else if (res.status == 400) {
    message = "malformed HTTP request";
  }
  send(res, error_reply(res.status, message));
  return httplib::Server::HandlerResponse::Handled;
}

void configure(httplib::Server& http, const ServerOptions& options, const Json& versions, AccessLog& log) {
  const size_t threads = options.threads > 0 ? static_cast<size_t>(options.threads)
                                             : std::max(1u, std::thread::hardware_concurrency());
  const size_t queue = static_cast<size_t>(options.queue);
  http.new_task_queue = [threads, queue] { return new BoundedQueue(threads, queue); };
  const auto timeout = std::chrono::duration<double>(options.timeout_s);
  http.set_read_timeout(timeout);
  http.set_write_timeout(timeout);
  // A keep-alive connection holds its worker while open: idle ones give it back after a second (a browser keeps
  // several open, which would otherwise hold every worker for cpp-httplib's default 5 s).
  http.set_keep_alive_timeout(1);
  http.set_keep_alive_max_count(1000);
  http.set_tcp_nodelay(true);  // small answers go out at once, not after a delayed ACK (40 ms)
  http.set_payload_max_length(options.max_body_bytes);
  http.set_default_headers({{"X-Llmco2-Versions", versions.dump()}});
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_request_start = Clock::now();
    t_request_time = std::chrono::system_clock::now();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body = options.max_body_bytes](const httplib::Request& req, httplib::Response& res) {
        return fill_error(req, res, max_body);
      }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send(res, error_reply(500, "internal error"));
  });
  http.set_logger([&log](const httplib::Request& req, const httplib::Response& res) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t_request_start).count();
    log.write({t_request_time, req.method, req.path, res.status, res.body.size(), std::round(ms * 1000) / 1000});
  });
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

int bind(httplib::Server& http, const ServerOptions& options) {
  const int port = options.port == 0 ? http.bind_to_any_port(options.host)
                                     : (http.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port <= 0)
    throw Error(fmt::format("serve: cannot listen on {}:{} (address in use, or not an address of this machine)",
                            options.host, options.port));
  return port;
}

}  // namespace

void serve(const api::Session& session, const ServerOptions& options, std::ostream& out, std::ostream& log) {
  const sigset_t signals = stop_signals();  // first: a signal while the catalogs load stops the server once it runs
  const ApiRoutes routes(session, RouteLimits{options.max_batch_requests});
  AccessLog access_log(log);
  httplib::Server http;
  configure(http, options, routes.version_json(), access_log);
  add_api_routes(http, routes);
  add_web_routes(http);
  const int port = bind(http, options);
  std::atomic<bool> listening_ended{false};
  std::thread watcher([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    // stop() is a no-op until listen_after_bind has started: repeat it until listening has ended.
    while (!listening_ended) {
      http.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  out << "llmco2 serve: listening on http://" << options.host << ":" << port << std::endl;
  http.listen_after_bind();
  listening_ended = true;
  pthread_kill(watcher.native_handle(), SIGTERM);  // wakes the watcher when the server stopped on its own
  watcher.join();
  out << "llmco2 serve: stopped" << std::endl;
}

}  // namespace llmco2::server
