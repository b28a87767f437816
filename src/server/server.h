// server/server.h - `llmco2 serve`: the HTTP API and the web calculator over one api::Session, with a bounded worker
// pool, a bounded backlog (503 beyond it), read/write timeouts, a body cap, a JSON access log and a graceful stop.
#pragma once

#include <ostream>
#include <string>

#include "llmco2/api.h"

namespace llmco2::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                     // 0: any free port (the one chosen is printed)
  int threads = 0;                     // workers; 0: the cores
  int queue = 64;                      // connections waiting for a worker; more answer 503
  size_t max_body_bytes = 1 << 20;     // larger bodies answer 413
  double timeout_s = 10;               // read and write timeout per connection
  size_t max_batch_requests = 1000;    // POST /v1/predict/batch
};

// Serves until SIGINT or SIGTERM. Prints "llmco2 serve: listening on http://HOST:PORT" on `out` once listening,
// one JSON line per request on `log`. Throws Error when it cannot listen.
void serve(const api::Session& session, const ServerOptions& options, std::ostream& out, std::ostream& log);

}  // namespace llmco2::server
