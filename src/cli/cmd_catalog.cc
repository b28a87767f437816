// cli/cmd_catalog.cc - `llmco2 models`, `llmco2 gpus` and `llmco2 nodes`: the bundled catalogs, as the API lists them
// (llmco2/api.h), in a table or as JSON.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/api.h"

namespace llmco2::cli {
namespace {

using api::Json;

std::string models_table(const Json& models) {
  std::string out = fmt::format("{:<28} {:<12} {:>6} {:>7} {:>6} {:>4} {:>8} {:>9}  {}\n", "id", "family", "layers",
                                "hidden", "heads", "kv", "params", "experts", "hf repo");
  for (const Json& m : models) {
    const std::string experts =
        m["experts"].is_null() ? "-" : fmt::format("{}/{}", m["experts_per_token"].get<int>(), m["experts"].get<int>());
    out += fmt::format("{:<28} {:<12} {:>6} {:>7} {:>6} {:>4} {:>7.2f}B {:>9}  {}\n", m["id"].get<std::string>(),
                       m["family"].get<std::string>(), m["layers"].get<long>(), m["hidden"].get<long>(),
                       m["heads"].get<long>(), m["kv_heads"].get<long>(), m["params"].get<double>() / 1e9, experts,
                       m["hf_repo"].get<std::string>());
  }
  return out;
}

std::string gpus_table(const Json& gpus) {
  std::string out = fmt::format("{:<16} {:<26} {:>8} {:>8} {:>7} {:>9} {:>6} {:>6}  {}\n", "id", "name", "bf16 TF",
                                "fp16 TF", "mem GB", "mem GB/s", "TDP W", "idle W", "link (GB/s per direction)");
  for (const Json& g : gpus) {
    auto peak = [&](const char* dtype) {
      const Json& peaks = g["dense_peak_ops_per_s"];
      return peaks.contains(dtype) ? fmt::format("{:.0f}", peaks[dtype].get<double>() / 1e12) : std::string("-");
    };
    out += fmt::format("{:<16} {:<26} {:>8} {:>8} {:>7.0f} {:>9.0f} {:>6.0f} {:>6.0f}  {} {:.0f}\n",
                       g["id"].get<std::string>(), g["name"].get<std::string>(), peak("bf16"), peak("fp16"),
                       g["memory_bytes"].get<double>() / 1e9, g["memory_bandwidth_bytes_per_s"].get<double>() / 1e9,
                       g["tdp_w"].get<double>(), g["idle_w"].get<double>(), g["link"].get<std::string>(),
                       g["link_bytes_per_s_per_direction"].get<double>() / 1e9);
  }
  return out;
}

// Each node's wall power idle and with every GPU at its TDP (the host power model), and what it rests on.
std::string nodes_table(const Json& nodes) {
  std::string out = fmt::format("{:<20} {:<12} {:>4} {:>11} {:>11} {:>11} {:>10}  {}\n", "id", "gpu", "gpus",
                                "host idle W", "wall idle W", "wall full W", "design W", "supplies");
  for (const Json& n : nodes)
    out += fmt::format(
        "{:<20} {:<12} {:>4} {:>11.0f} {:>11.0f} {:>11.0f} {:>10.0f}  {}{}\n", n["id"].get<std::string>(),
        n["gpu"].get<std::string>(), n["gpus"].get<int>(), n["host_idle_dc_w"].get<double>(),
        n["wall_idle_w"].get<double>(), n["wall_at_gpu_tdp_w"].get<double>(), n["design_power_w"].get<double>(),
        n["psu_standard"].get<std::string>(), n["default_for_gpu"].get<bool>() ? " (default for its GPU)" : "");
  return out;
}

void add_catalog_command(CLI::App& app, const char* name, const char* help, Json (api::Session::*list)() const,
                         std::string (*table)(const Json&)) {
  auto* command = app.add_subcommand(name, help);
  auto format = std::make_shared<std::string>("table");
  command->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  command->callback([=] {
    const Json entries = (api::Session().*list)();
    std::cout << (*format == "json" ? entries.dump(2) + "\n" : table(entries));
  });
}

}  // namespace

void add_nodes_command(CLI::App& app) {
  add_catalog_command(app, "nodes", "list the bundled server nodes (host power for --scope node)", &api::Session::nodes,
                      nodes_table);
}

void add_models_command(CLI::App& app) {
  add_catalog_command(app, "models", "list the bundled model architectures", &api::Session::models, models_table);
}

void add_gpus_command(CLI::App& app) {
  add_catalog_command(app, "gpus", "list the bundled GPU types", &api::Session::gpus, gpus_table);
}

}  // namespace llmco2::cli
