// cli/cmd_serve.cc - `llmco2 serve`: the HTTP API and the web calculator (docs/api.md) on one API session that reads
// no file a client names (models, GPUs and nodes from the catalogs or posted JSON only).
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "server/server.h"

namespace llmco2::cli {

void add_serve_command(CLI::App& app) {
  auto* command = app.add_subcommand("serve", "serve the HTTP API and the web calculator (docs/api.md)");
  auto o = std::make_shared<server::ServerOptions>();
  command->add_option("--host", o->host, "address to listen on (127.0.0.1: this machine only)")->capture_default_str();
  command->add_option("--port", o->port, "port; 0: any free port (printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  command->add_option("--threads", o->threads, "worker threads; 0: the cores")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  command->add_option("--queue", o->queue, "whole requests waiting for a worker; more are answered 503")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  command->add_option("--max-connections", o->max_connections, "open connections; more are answered 503 and closed")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  command->add_option("--max-body-bytes", o->max_body_bytes, "larger request bodies are answered 413")
      ->check(CLI::Range(size_t{16}, size_t{1} << 30))
      ->capture_default_str();
  command
      ->add_option("--timeout-s", o->timeout_s,
                   "seconds within which a request must arrive whole (else 408) and its answer be read")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  command->add_option("--keep-alive-s", o->keep_alive_s, "seconds an idle connection is kept open")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  auto site = std::make_shared<std::string>();
  command->add_option("--site", *site,
                      "a site profile (llmco2 calibrate --site) every answer uses: the operator's GPUs and engines");
  command->callback([o, site] {
    api::Settings settings;
    settings.allow_paths = false;
    settings.site = *site;
    const api::Session session(settings);
    server::serve(session, *o, std::cout, std::cerr);
  });
}

}  // namespace llmco2::cli
