// fuzz/fuzz_http_body.cc - the HTTP API's request bodies (docs/api.md) through the server's own endpoint code: the
// first byte picks POST /v1/predict, /v1/predict/batch or /v1/compare, the rest is the body. Every body must get a
// reply with a status below 500: a 500 means an exception other than llmco2::Error or HttpError escaped the API, a
// finding like a crash.
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.h"
#include "server/routes/api_routes.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace llmco2;
  static const api::Session session(api::Settings{.allow_paths = false});
  static const server::ApiRoutes routes(session, server::RouteLimits{});
  static const std::vector<const server::Route*> posts = [] {
    std::vector<const server::Route*> out;
    for (const auto& route : server::api_routes())
      if (route.method == "POST") out.push_back(&route);
    return out;
  }();
  if (size == 0) return 0;
  const server::Route& route = *posts[data[0] % posts.size()];
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const server::Reply reply = server::answer_or_error([&] { return route.answer(routes, body); });
  if (reply.status >= 500) std::abort();
  (void)server::reply_text(reply);  // serialised as the server sends it
  return 0;
}
