// cli/cmd_graph.cc - `llmco2 graph`: the kernel graph of a request with its prefill and decode features
// (research::kernel_graph).
#include <iostream>

#include "cli/commands.h"
#include "cli/request_flags.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_graph_command(CLI::App& app) {
  auto* command = app.add_subcommand("graph", "print the kernel graph of one layer with prefill/decode features");
  auto request = std::make_shared<api::Request>();
  auto format = std::make_shared<std::string>("json");
  auto phase = std::make_shared<std::string>("prefill");
  add_request_flags(*command, *request);
  command->add_option("--format", *format, "json, dot or summary")
      ->check(CLI::IsMember({"json", "dot", "summary"}))
      ->capture_default_str();
  command->add_option("--phase", *phase, "phase drawn by --format dot")
      ->check(CLI::IsMember({"prefill", "decode"}))
      ->capture_default_str();
  command->callback([=] {
    const api::Result result = research::kernel_graph(*request, *format, *phase);
    print_warnings(result.warnings);
    std::cout << result.text;
  });
}

}  // namespace llmco2::cli
