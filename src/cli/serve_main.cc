// cli/serve_main.cc - llmco2-serve: the `serve` command, the part of the CLI that links cpp-httplib (and through
// Debian's build of it OpenSSL, zlib and brotli); llmco2 execs it for `llmco2 serve`.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/run_app.h"

int main(int argc, char** argv) {
  CLI::App app{"llmco2 serve: the HTTP API and the web calculator"};
  app.require_subcommand(1);
  llmco2::cli::add_serve_command(app);
  return llmco2::cli::run_app(app, "llmco2", argc, argv);
}
