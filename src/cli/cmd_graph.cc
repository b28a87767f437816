// cli/cmd_graph.cc - `llmco2 graph`: the kernel graph of a request with its prefill and decode features.
#include <iostream>

#include "cli/commands.h"
#include "cli/request_flags.h"
#include "core/error.h"
#include "features/graph_writer.h"

namespace llmco2::cli {

void add_graph_command(CLI::App& app) {
  auto* command = app.add_subcommand("graph", "print the kernel graph of one layer with prefill/decode features");
  auto flags = std::make_shared<api::Request>();
  auto format = std::make_shared<std::string>("json");
  auto phase = std::make_shared<std::string>("prefill");
  add_request_flags(*command, *flags);
  command->add_option("--format", *format, "json, dot or summary")
      ->check(CLI::IsMember({"json", "dot", "summary"}))->capture_default_str();
  command->add_option("--phase", *phase, "phase drawn by --format dot")
      ->check(CLI::IsMember({"prefill", "decode"}))->capture_default_str();
  command->callback([=] {
    const ResolvedRequest r = resolve_request(*flags);
    const KernelGraph graph = build_kernel_graph(r.model, r.request);
    const GraphFeatures features = compute_features(graph, r.gpu, r.request);
    const MemoryFit memory = memory_fit(r.model, r.request, r.gpu);
    const PricedGraph priced{r.model, r.gpu, r.request, graph, features, memory};
    if (*format == "json") std::cout << graph_to_json(priced).dump(2) << "\n";
    else if (*format == "dot") std::cout << graph_to_dot(priced, *phase == "prefill" ? Phase::prefill : Phase::decode);
    else std::cout << graph_to_summary(priced);
  });
}

}  // namespace llmco2::cli
