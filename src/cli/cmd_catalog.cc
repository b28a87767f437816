// cli/cmd_catalog.cc - `llmco2 models`, `llmco2 gpus` and `llmco2 nodes`: list the bundled catalogs.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/json_io.h"
#include "hardware/gpu_catalog.h"
#include "hardware/host_power.h"
#include "hardware/node.h"
#include "model/hf_config.h"
#include "model/model_catalog.h"

namespace llmco2::cli {
namespace {

void print_models(const std::string& format) {
  Json list = Json::array();
  if (format == "table")
    std::cout << fmt::format("{:<28} {:<12} {:>6} {:>7} {:>6} {:>4} {:>8} {:>9}  {}\n", "id", "family", "layers",
                             "hidden", "heads", "kv", "params", "experts", "hf repo");
  for (const auto& entry : ModelCatalog::bundled().entries()) {
    const ModelSpec m = read_hf_config(entry.config_path);
    const std::string experts = m.moe ? fmt::format("{}/{}", m.moe->experts_per_token, m.moe->experts) : "-";
    if (format == "table")
      std::cout << fmt::format("{:<28} {:<12} {:>6} {:>7} {:>6} {:>4} {:>7.2f}B {:>9}  {}\n", entry.id, m.family,
                               m.layers, m.hidden, m.heads, m.max_kv_heads(), m.total_params() / 1e9, experts,
                               entry.hf_repo);
    else
      list.push_back({{"id", entry.id}, {"hf_repo", entry.hf_repo}, {"family", m.family}, {"layers", m.layers},
                      {"hidden", m.hidden}, {"params", m.total_params()}});
  }
  if (format == "json") std::cout << list.dump(2) << "\n";
}

void print_gpus(const std::string& format) {
  Json list = Json::array();
  if (format == "table")
    std::cout << fmt::format("{:<16} {:<26} {:>8} {:>8} {:>7} {:>9} {:>6} {:>6}  {}\n", "id", "name", "bf16 TF",
                             "fp16 TF", "mem GB", "mem GB/s", "TDP W", "idle W", "link (GB/s per direction)");
  for (const auto& gpu : GpuCatalog::bundled().gpus()) {
    auto peak = [&](DType d) {
      auto it = gpu.dense_peak_ops_per_s.find(d);
      return it == gpu.dense_peak_ops_per_s.end() ? std::string("-") : fmt::format("{:.0f}", it->second / 1e12);
    };
    const Link& link = gpu.gpu_link ? *gpu.gpu_link : gpu.host_link;
    if (format == "table")
      std::cout << fmt::format("{:<16} {:<26} {:>8} {:>8} {:>7.0f} {:>9.0f} {:>6.0f} {:>6.0f}  {} {:.0f}\n", gpu.id,
                               gpu.name, peak(DType::bf16), peak(DType::fp16), gpu.memory_bytes / 1e9,
                               gpu.memory_bandwidth_bytes_per_s / 1e9, gpu.tdp_w, gpu.idle_w, link.kind,
                               link.bandwidth_bytes_per_s / 1e9);
    else
      list.push_back({{"id", gpu.id}, {"name", gpu.name}, {"memory_bytes", gpu.memory_bytes},
                      {"memory_bandwidth_bytes_per_s", gpu.memory_bandwidth_bytes_per_s}, {"tdp_w", gpu.tdp_w},
                      {"idle_w", gpu.idle_w}, {"source", gpu.source}});
  }
  if (format == "json") std::cout << list.dump(2) << "\n";
}

// Each node's wall power idle and with every GPU at its TDP (the host power model), and what it rests on.
void print_nodes(const std::string& format) {
  Json list = Json::array();
  if (format == "table")
    std::cout << fmt::format("{:<20} {:<12} {:>4} {:>11} {:>11} {:>11} {:>10}  {}\n", "id", "gpu", "gpus",
                             "host idle W", "wall idle W", "wall full W", "design W", "supplies");
  for (const Node& n : NodeCatalog::bundled().nodes()) {
    const double host_idle_w = host_dc_w(n, n.gpu_idle_w, false);
    const double idle_w = node_wall_w(n, n.gpu_idle_w, false), full_w = node_wall_w(n, n.gpu_tdp_w, true);
    const bool is_default = NodeCatalog::bundled().default_for(n.gpu) == &n;
    if (format == "table")
      std::cout << fmt::format("{:<20} {:<12} {:>4} {:>11.0f} {:>11.0f} {:>11.0f} {:>10.0f}  {}{}\n", n.id, n.gpu,
                               n.gpus, host_idle_w, idle_w, full_w, n.design_power_w, n.psu_standard,
                               is_default ? " (default for its GPU)" : "");
    else
      list.push_back({{"id", n.id}, {"name", n.name}, {"gpu", n.gpu}, {"gpus", n.gpus},
                      {"host_idle_dc_w", host_idle_w}, {"wall_idle_w", idle_w}, {"wall_at_gpu_tdp_w", full_w},
                      {"design_power_w", n.design_power_w}, {"psu_assumed", n.psu_assumed},
                      {"default_for_gpu", is_default}, {"source", n.source}});
  }
  if (format == "json") std::cout << list.dump(2) << "\n";
}

}  // namespace

void add_nodes_command(CLI::App& app) {
  auto* command = app.add_subcommand("nodes", "list the bundled server nodes (host power for --scope node)");
  auto format = std::make_shared<std::string>("table");
  command->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  command->callback([=] { print_nodes(*format); });
}

void add_models_command(CLI::App& app) {
  auto* command = app.add_subcommand("models", "list the bundled model architectures");
  auto format = std::make_shared<std::string>("table");
  command->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  command->callback([=] { print_models(*format); });
}

void add_gpus_command(CLI::App& app) {
  auto* command = app.add_subcommand("gpus", "list the bundled GPU types");
  auto format = std::make_shared<std::string>("table");
  command->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  command->callback([=] { print_gpus(*format); });
}

}  // namespace llmco2::cli
