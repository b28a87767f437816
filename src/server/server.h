// server/server.h - `llmco2 serve`: the HTTP API and the web calculator over one api::Session, on the server of
// server/http (bounded workers, backlog, connections, heads and bodies; deadlines), with a JSON access log and a stop
// bounded in time.
#pragma once

#include <ostream>
#include <string>

#include "llmco2/api.h"

namespace llmco2::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (the one chosen is printed)
  int threads = 0;                   // workers; 0: the cores
  int queue = 64;                    // whole requests waiting for a worker; more answer 503
  int max_connections = 256;         // open connections; more answer 503
  size_t max_body_bytes = 1 << 20;   // larger bodies answer 413
  double timeout_s = 10;             // a request must arrive whole, and its answer be read, within this
  double keep_alive_s = 5;           // idle connections are closed after this
  size_t max_batch_requests = 1000;  // POST /v1/predict/batch
};

// Serves until SIGINT or SIGTERM. Prints "llmco2 serve: listening on http://HOST:PORT" on `out` once listening,
// one JSON line per request on `log`. Throws Error when it cannot listen.
void serve(const api::Session& session, const ServerOptions& options, std::ostream& out, std::ostream& log);

}  // namespace llmco2::server
