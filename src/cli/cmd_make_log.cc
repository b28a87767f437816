// cli/cmd_make_log.cc - `llmco2 make-log`: a multi-turn chat log (conversations re-sending their earlier turns) for
// prefix caching in serve-sim and the capacity planner.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llmco2/research.h"

namespace llmco2::cli {

void add_make_log_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "make-log",
      "write a multi-turn chat log: each turn re-sends its conversation so far (SessionId, SharedPrefixTokens)");
  auto o = std::make_shared<research::ConversationLogOptions>();
  auto out = std::make_shared<std::string>();
  command->add_option("--out", *out, "the CSV to write")->required();
  command->add_option("--conversations", o->conversations, "conversations")->capture_default_str();
  command->add_option("--turns", o->turns, "turns per conversation")->capture_default_str();
  command->add_option("--rate", o->rate_per_s, "conversations starting per second (Poisson)")->capture_default_str();
  command
      ->add_option("--think-s", o->think_s,
                   "mean seconds between a conversation's turns (half fixed: the answer comes first)")
      ->capture_default_str();
  command->add_option("--system-tokens", o->system_tokens, "system prompt tokens")->capture_default_str();
  command->add_option("--user-tokens", o->user_tokens, "mean new user tokens per turn")->capture_default_str();
  command->add_option("--output-tokens", o->output_tokens, "mean answer tokens per turn")->capture_default_str();
  command->add_option("--spread", o->spread, "lengths uniform within this share of their mean")->capture_default_str();
  command->add_option("--seed", o->seed, "random seed")->capture_default_str();
  command->callback([o, out] {
    const long written = research::write_conversation_log(*o, *out);
    std::cerr << fmt::format("make-log: {} requests of {} conversations written to {}\n", written, o->conversations,
                             *out);
  });
}

}  // namespace llmco2::cli
