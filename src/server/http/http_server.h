// server/http/http_server.h - the HTTP/1.1 server under `llmco2 serve`: one thread polls every connection and reads
// requests (RequestReader's limits; a deadline per request and per idle connection), a bounded worker pool answers
// whole requests only, so slow or silent clients hold a connection slot but never a worker; a cap on open
// connections and on waiting requests (503 beyond either); keep-alive and pipelining; a stop bounded in time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/http/http_request.h"

namespace llmco2::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;               // 0: any free port
  size_t threads = 2;            // workers
  size_t queue = 64;             // whole requests waiting for a worker; more answer 503
  size_t max_connections = 256;  // open connections; more answer 503 and are closed
  double timeout_s = 10;         // a request must arrive whole, and its answer be taken, within this
  double keep_alive_s = 5;       // an idle connection is closed after this
  size_t max_requests_per_connection = 1000;
  HttpLimits limits;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type, Content-Length, Connection
};

// Answers one whole request (on a worker thread; may be called from several at once).
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// The answer to a request refused before it reached the handler (status, one-line reason).
using HttpErrorBody = std::function<HttpResponse(int status, const std::string& message)>;
// Called once per answered request, after its answer was written (method and path empty when unreadable).
using HttpLogger = std::function<void(const HttpRequest&, const HttpResponse&,
                                      std::chrono::system_clock::time_point received, double duration_ms)>;

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler, HttpErrorBody error_body, HttpLogger logger);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the port. Throws Error naming the host and port when it cannot.
  int bind();
  // Serves until stop(): then closes the listener and every connection not being answered, waits for the answers
  // in progress (each bounded by timeout_s) and returns.
  void run();
  // Safe from any thread (not from a signal handler: the caller's signal thread calls it).
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmco2::server
