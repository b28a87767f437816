// tests/server/server_test.cc - the server's parts without sockets: the OpenAPI document against the routes, JSON
// bodies, access lines and the access log's bound, the bounded task line, the HTTP request reader's limits.
#include <algorithm>
#include <chrono>
#include <future>
#include <set>
#include <sstream>
#include <streambuf>

#include <gtest/gtest.h>

#include "llmco2/error.h"

#include "server/access_log/access_log.h"
#include "server/http/http_request.h"
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
  TaskLine line(1, 1);
  std::promise<void> started, release;
  auto release_future = release.get_future().share();
  ASSERT_TRUE(line.try_enqueue([&] {
    started.set_value();
    release_future.wait();
  }));
  started.get_future().wait();            // the one worker is busy
  EXPECT_TRUE(line.try_enqueue([] {}));   // one waits
  EXPECT_FALSE(line.try_enqueue([] {}));  // the second is refused
  release.set_value();
  line.shutdown();
  EXPECT_FALSE(line.try_enqueue([] {}));  // stopped
}

TEST(TaskLine, ThenRunsOnceTheSlotIsFree) {
  // One worker, no queue: a task's `then` can enqueue the connection's next request (the server's pipelining), which
  // a signal sent from inside the task could not (the slot was still taken, and the request was refused 503).
  TaskLine line(1, 0);
  std::promise<bool> next_taken;
  ASSERT_TRUE(line.try_enqueue([] {}, [&] { next_taken.set_value(line.try_enqueue([] {})); }));
  EXPECT_TRUE(next_taken.get_future().get());
  line.shutdown();
}

// ---- The request reader: bytes in, requests or a refusal with its status out ----

HttpLimits small_limits() {
  HttpLimits limits;
  limits.max_head_bytes = 256;
  limits.max_headers = 4;
  limits.max_body_bytes = 100;
  return limits;
}

// Feeds `bytes` one at a time (the worst split a network can make) and returns the final state.
RequestReader::State feed_bytewise(RequestReader& reader, const std::string& bytes, std::string& rest) {
  RequestReader::State state = RequestReader::State::head;
  for (char c : bytes) {
    rest.push_back(c);
    state = reader.feed(rest);
    if (state == RequestReader::State::done || state == RequestReader::State::failed) break;
  }
  return state;
}

TEST(RequestReader, PipelinedRequestsComeOutOneByOne) {
  RequestReader reader(small_limits());
  std::string in =
      "GET /health?x=1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /v1/predict HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}";
  ASSERT_EQ(reader.feed(in), RequestReader::State::done);
  HttpRequest first = reader.take();
  EXPECT_EQ(first.method, "GET");
  EXPECT_EQ(first.path, "/health");
  EXPECT_EQ(*first.header("host"), "a");
  EXPECT_TRUE(first.keep_alive);
  ASSERT_EQ(reader.feed(in), RequestReader::State::done);  // the second was already read
  HttpRequest second = reader.take();
  EXPECT_EQ(second.body, "{}");
  EXPECT_TRUE(in.empty());
}

TEST(RequestReader, AByteAtATimeGivesTheSameRequest) {
  RequestReader reader(small_limits());
  std::string rest;
  ASSERT_EQ(feed_bytewise(reader, "POST /a HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello", rest),
            RequestReader::State::done);
  const HttpRequest r = reader.take();
  EXPECT_EQ(r.body, "hello");
  EXPECT_EQ(r.minor_version, 0);
  EXPECT_TRUE(r.keep_alive);  // HTTP/1.0 keeps the connection only when asked
}

TEST(RequestReader, HeadLimitsAre431) {
  RequestReader lines(small_limits());
  std::string in = "GET / HTTP/1.1\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\n\r\n";  // 5 header lines, 4 allowed
  EXPECT_EQ(lines.feed(in), RequestReader::State::failed);
  EXPECT_EQ(lines.status(), 431);
  EXPECT_EQ(lines.message(), "more than 4 header lines");
  RequestReader bytes(small_limits());
  std::string flood = "GET / HTTP/1.1\r\nX: " + std::string(300, 'a');  // no end of head in 256 bytes
  EXPECT_EQ(bytes.feed(flood), RequestReader::State::failed);
  EXPECT_EQ(bytes.status(), 431);
}

TEST(RequestReader, ChunkedBodiesAreDecodedAndCountedAgainstTheCap) {
  RequestReader reader(small_limits());
  std::string rest;
  const std::string wiki =
      "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\n"
      "Trailer: t\r\n\r\n";
  ASSERT_EQ(feed_bytewise(reader, wiki, rest), RequestReader::State::done);
  EXPECT_EQ(reader.take().body, "Wikipedia");
  // 60 + 60 bytes: refused when the second chunk's size line says so, before its data arrives.
  RequestReader over(small_limits());
  std::string in = "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3c\r\n" + std::string(60, 'a') + "\r\n3c\r\n";
  EXPECT_EQ(over.feed(in), RequestReader::State::failed);
  EXPECT_EQ(over.status(), 413);
  EXPECT_EQ(over.message(), "request body over 100 bytes (--max-body-bytes)");
}

TEST(RequestReader, FramingErrorsHaveTheirStatus) {
  const auto status_of = [](std::string in) {
    RequestReader reader(small_limits());
    EXPECT_EQ(reader.feed(in), RequestReader::State::failed) << in;
    return reader.status();
  };
  EXPECT_EQ(status_of("POST /a HTTP/1.1\r\nContent-Length: -5\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST /a HTTP/1.1\r\nContent-Length: 101\r\n\r\n"), 413);  // before the body is sent
  EXPECT_EQ(status_of("POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST /a HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
  EXPECT_EQ(status_of("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(status_of("GET nope HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(status_of("GET / HTTP/1.1\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST /a HTTP/1.1\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\n"), 417);
}

TEST(RequestReader, ExpectContinueIsAskedForOnce) {
  RequestReader reader(small_limits());
  std::string in = "POST /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  EXPECT_EQ(reader.feed(in), RequestReader::State::body);
  EXPECT_TRUE(reader.take_continue());
  EXPECT_FALSE(reader.take_continue());
  in = "{}";
  EXPECT_EQ(reader.feed(in), RequestReader::State::done);
}

// ---- The access log never waits on its stream ----

// A stream buffer whose writes block until released, as a pipe nobody reads does.
class BlockedBuffer : public std::stringbuf {
 public:
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  bool first = true;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (first) {
      first = false;
      entered.set_value();
      released.wait();
    }
    return std::stringbuf::xsputn(s, n);
  }
};

TEST(AccessLog, AFullBufferDropsAndCountsInsteadOfWaiting) {
  BlockedBuffer buffer;
  std::ostream out(&buffer);
  {
    AccessLog log(out, 2);
    AccessRecord r;
    r.method = "GET";
    r.path = "/health";
    r.status = 200;
    EXPECT_TRUE(log.write(r));  // taken by the writer, which blocks on the stream
    buffer.entered.get_future().wait();
    EXPECT_TRUE(log.write(r));   // waits in the buffer
    EXPECT_TRUE(log.write(r));   // waits in the buffer
    EXPECT_FALSE(log.write(r));  // dropped: the buffer holds 2
    EXPECT_EQ(log.dropped(), 1u);
    buffer.release.set_value();
    EXPECT_TRUE(log.flush(std::chrono::seconds(10)));
  }
  const std::string text = buffer.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);  // 3 lines and the drop count
  EXPECT_NE(text.find("{\"access_log_dropped\":1}"), std::string::npos);
}

}  // namespace
}  // namespace llmco2::server
