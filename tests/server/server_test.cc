// tests/server/server_test.cc - the server's parts without sockets: the OpenAPI document against the routes, JSON
// bodies, access lines, the bounded task line.
#include <chrono>
#include <future>
#include <set>

#include <gtest/gtest.h>

#include "llmco2/error.h"
#include "server/access_log/access_log.h"
#include "server/pool/bounded_queue.h"
#include "server/routes/api_routes.h"
#include "server/web/embedded_files.h"

namespace llmco2::server {
namespace {

std::set<std::string> served_routes() {
  std::set<std::string> routes;
  for (const Route& r : api_routes()) routes.insert(r.method + " " + r.path);
  for (const WebAsset& a : web_assets()) routes.insert("GET " + a.url_path);
  return routes;
}

Json openapi() {
  for (const EmbeddedFile& f : embedded_files())
    if (f.name == "openapi.json") return Json::parse(f.bytes);
  throw std::runtime_error("openapi.json is not embedded");
}

TEST(OpenApi, DescribesExactlyTheServedRoutes) {
  std::set<std::string> described;
  const Json doc = openapi();
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, operation] : item.items()) {
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(c));
      described.insert(upper + " " + path);
    }
  EXPECT_EQ(described, served_routes());
  EXPECT_EQ(served_routes().size(), 13u);  // 9 JSON endpoints, the page, its script and style, openapi.json
}

TEST(OpenApi, IsOpenApi3WithAnErrorSchema) {
  const Json doc = openapi();
  EXPECT_EQ(doc["openapi"].get<std::string>().substr(0, 2), "3.");
  EXPECT_EQ(doc["components"]["schemas"]["Error"]["required"], Json({"error", "status"}));
}

TEST(WebAssets, PageAndStaticFiles) {
  std::set<std::string> paths;
  for (const WebAsset& a : web_assets()) paths.insert(a.url_path + " " + a.content_type);
  EXPECT_EQ(paths, (std::set<std::string>{"/ text/html; charset=utf-8", "/openapi.json application/json",
                                          "/static/app.js text/javascript; charset=utf-8",
                                          "/static/style.css text/css; charset=utf-8"}));
}

TEST(ParseBody, NamesTheByte) {
  try {
    parse_body(R"({"a":,})");
    FAIL() << "no error";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status, 400);
    // byte 6 is the comma where a value was expected
    EXPECT_EQ(std::string(e.what()).rfind("request body: malformed JSON at byte 6: syntax error", 0), 0u) << e.what();
  }
  EXPECT_EQ(parse_body(R"({"a": 1})")["a"], 1);
}

TEST(ErrorReply, HasMessageAndStatus) {
  const Reply r = error_reply(413, "too big");
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.body, (Json{{"error", "too big"}, {"status", 413}}));
}

TEST(AnswerOrError, EachExceptionHasItsStatus) {
  EXPECT_EQ(answer_or_error([] { return Reply{201, Json{{"ok", true}}}; }).status, 201);
  const Reply input = answer_or_error([]() -> Reply { throw Error("unknown GPU 'x'"); });
  EXPECT_EQ(input.body, (Json{{"error", "unknown GPU 'x'"}, {"status", 400}}));
  EXPECT_EQ(answer_or_error([]() -> Reply { throw HttpError(413, "too many"); }).status, 413);
  const Reply internal = answer_or_error([]() -> Reply { throw std::out_of_range("map::at at 0x7ffd"); });
  EXPECT_EQ(internal.body, (Json{{"error", "internal error"}, {"status", 500}}));  // nothing of the exception leaks
}

TEST(AccessLog, OneJsonLine) {
  AccessRecord r;
  r.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(86400000LL * 365 + 1234));  // 1971-01-01
  r.method = "POST";
  r.path = "/v1/predict";
  r.status = 200;
  r.bytes = 42;
  r.duration_ms = 1.5;
  EXPECT_EQ(access_line(r), R"({"time":"1971-01-01T00:00:01.234Z","method":"POST","path":"/v1/predict","status":200,)"
                            R"("bytes":42,"duration_ms":1.5})");
  r.path = "/\xff";  // not UTF-8: replaced, not thrown
  EXPECT_NE(access_line(r).find("\"path\":\"/\xEF\xBF\xBD\""), std::string::npos);
}

TEST(TaskLine, RefusesBeyondItsBacklog) {
  TaskLine line(1, 1, false);
  std::promise<void> started, release;
  auto release_future = release.get_future().share();
  ASSERT_TRUE(line.try_enqueue([&] {
    started.set_value();
    release_future.wait();
  }));
  started.get_future().wait();           // the one worker is busy
  EXPECT_TRUE(line.try_enqueue([] {}));  // one waits
  EXPECT_FALSE(line.try_enqueue([] {})); // the second is refused
  release.set_value();
  line.shutdown();
  EXPECT_FALSE(line.try_enqueue([] {})); // stopped
}

TEST(BoundedQueue, OverflowRunsOnTheRejectingThread) {
  BoundedQueue queue(1, 0, 1);
  std::promise<void> started, release;
  auto release_future = release.get_future().share();
  queue.enqueue([&] {
    EXPECT_FALSE(is_rejecting_thread());
    started.set_value();
    release_future.wait();
  });
  started.get_future().wait();
  std::promise<bool> rejected;
  queue.enqueue([&] { rejected.set_value(is_rejecting_thread()); });
  EXPECT_TRUE(rejected.get_future().get());
  release.set_value();
  queue.shutdown();
}

}  // namespace
}  // namespace llmco2::server
