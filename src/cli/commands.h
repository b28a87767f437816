// cli/commands.h - the subcommands of `llmco2`, each registered on the app by one function.
#pragma once

#include <CLI/CLI.hpp>

namespace llmco2::cli {

void add_graph_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_gpus_command(CLI::App& app);
void add_nodes_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_import_bench_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_plan_site_command(CLI::App& app);
void add_sample_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_measure_command(CLI::App& app);
void add_serve_sim_command(CLI::App& app);
void add_serve_validate_command(CLI::App& app);
void add_check_outputs_command(CLI::App& app);
void add_score_campaign_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_make_log_command(CLI::App& app);

}  // namespace llmco2::cli
