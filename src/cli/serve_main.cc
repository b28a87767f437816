// cli/serve_main.cc - llmco2-serve: the `serve` command, the part of the CLI that holds the HTTP server (src/server);
// llmco2 execs it for `llmco2 serve`.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/run_app.h"

// Ends with _Exit once stdout is flushed: exit() would flush stderr too, and a stderr nobody reads (a full pipe,
// where the access log's writer thread is blocked holding its lock) would hold the process for ever after SIGTERM.
int main(int argc, char** argv) {
  CLI::App app{"llmco2 serve: the HTTP API and the web calculator"};
  app.require_subcommand(1);
  llmco2::cli::add_serve_command(app);
  const int code = llmco2::cli::run_app(app, "llmco2", argc, argv);
  std::cout.flush();
  std::fflush(stdout);
  std::_Exit(code);
}
