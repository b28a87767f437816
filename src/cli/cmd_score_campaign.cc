// cli/cmd_score_campaign.cc - `llmco2 score-campaign DIR...`: kernel campaigns of our own (data/measured/gpu_campaign)
// scored against the simulator as it stands; binds the flags to research::score_campaign and prints its report.
#include <iostream>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_score_campaign_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "score-campaign", "score GPU kernel campaigns (scripts/gpu_campaign/kernel_campaign.py) against the simulator");
  auto o = std::make_shared<research::CampaignScoreOptions>();
  command->add_option("dirs", o->dirs, "campaign folders (e.g. data/measured/gpu_campaign/h200-2026-11-27)")
      ->required();
  command->add_option("--model", o->model, "the model its closed-loop run ran")->capture_default_str();
  command->add_option("--engines", o->engines, "engine profiles the closed loop is scored against")
      ->capture_default_str();
  command->add_option("--params", o->params, "simulator parameters (default: data/sim/params.json)");
  command->add_option("--report", o->report, "also write the Markdown report to this file (e.g. docs/gpu-campaign.md)");
  command->callback([o] { std::cout << research::score_campaign(*o).text; });
}

}  // namespace llmco2::cli
