// research/conversation_log.cc - `llmco2 make-log`: multi-turn chat logs whose turns re-send the conversation so far,
// for prefix caching (serve-sim, compare --trace).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_io.h"
#include "llmco2/research.h"

namespace llmco2::research {
namespace {

struct Turn {
  double time_s;
  long prompt, gen, shared, conversation;
};

void check(const ConversationLogOptions& o) {
  if (o.conversations < 1 || o.conversations > 10'000'000)
    fail("--conversations must be 1 to 10000000, got {}", o.conversations);
  if (o.turns < 1 || o.turns > 1000) fail("--turns must be 1 to 1000, got {}", o.turns);
  if (o.conversations * o.turns > 10'000'000)  // the log is built in memory and sorted
    fail("--conversations x --turns must be at most 10000000 requests, got {}", o.conversations * o.turns);
  if (!(o.rate_per_s > 0) || !std::isfinite(o.rate_per_s)) fail("--rate must be positive, got {}", o.rate_per_s);
  if (!(o.think_s >= 0) || !std::isfinite(o.think_s)) fail("--think-s must be 0 or more, got {}", o.think_s);
  for (auto [flag, tokens] : {std::pair{"--system-tokens", o.system_tokens},
                              {"--user-tokens", o.user_tokens},
                              {"--output-tokens", o.output_tokens}})
    if (tokens < 0 || tokens > 1'000'000) fail("{} must be 0 to 1000000, got {}", flag, tokens);
  if (o.user_tokens < 1 || o.output_tokens < 1) fail("--user-tokens and --output-tokens must be at least 1");
  if (!(o.spread >= 0 && o.spread < 1)) fail("--spread must be in [0, 1), got {}", o.spread);
}

// "2023-11-14 22:13:20.000000" (UTC), as the Azure traces write TIMESTAMP.
std::string timestamp(double s) {
  const auto whole = static_cast<std::time_t>(std::floor(s));
  std::tm tm{};
  gmtime_r(&whole, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long>((s - std::floor(s)) * 1e6));
}

}  // namespace

std::string conversation_log_csv(const ConversationLogOptions& o) {
  check(o);
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> arrival(o.rate_per_s);
  // The gap between a conversation's sends: half the mean fixed (reading the answer, which has to arrive first), the
  // other half exponential (thinking), so that a turn rarely comes before the answer it re-sends.
  std::exponential_distribution<double> think(o.think_s > 0 ? 2.0 / o.think_s : 1.0);
  auto length = [&](long mean) {
    const long lo = std::max(1L, std::lround(static_cast<double>(mean) * (1 - o.spread)));
    const long hi = std::max(lo, std::lround(static_cast<double>(mean) * (1 + o.spread)));
    return std::uniform_int_distribution<long>(lo, hi)(rng);
  };
  std::vector<Turn> turns;
  double start_s = o.start_s;
  for (long c = 0; c < o.conversations; ++c) {
    start_s += arrival(rng);
    double t = start_s;
    long context = o.system_tokens;  // what the next turn re-sends before its new message
    for (int k = 0; k < o.turns; ++k) {
      if (k > 0) t += o.think_s > 0 ? o.think_s / 2 + think(rng) : 0.0;
      const long user = length(o.user_tokens), answer = length(o.output_tokens);
      turns.push_back({t, context + user, answer, k == 0 ? 0 : context, c});
      context += user + answer;
    }
  }
  std::stable_sort(turns.begin(), turns.end(), [](const Turn& a, const Turn& b) { return a.time_s < b.time_s; });
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens,SessionId,SharedPrefixTokens\n";
  for (const Turn& t : turns)
    csv += fmt::format("{},{},{},c{},{}\n", timestamp(t.time_s), t.prompt, t.gen, t.conversation, t.shared);
  return csv;
}

}  // namespace llmco2::research

namespace llmco2::research {

long write_conversation_log(const ConversationLogOptions& options, const std::string& path) {
  const std::string csv = conversation_log_csv(options);
  write_file_atomic(path, csv);
  return static_cast<long>(std::count(csv.begin(), csv.end(), '\n')) - 1;
}

}  // namespace llmco2::research
