// server/http/http_request.h - one HTTP/1.1 request read from bytes as they arrive, within limits: the request line
// and headers (bytes and count: 431 beyond), the body by Content-Length or chunked (413 as soon as it is over the
// cap), each refusal with its status and a one-line reason. No I/O: the server feeds it what recv returned.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmco2::server {

struct HttpLimits {
  size_t max_head_bytes = 16384;    // request line and headers, their line ends included
  size_t max_headers = 64;          // header lines
  size_t max_body_bytes = 1 << 20;  // the decoded body
};

struct HttpRequest {
  std::string method, target, path;                          // path: the target up to '?'
  int minor_version = 1;                                     // HTTP/1.0 or HTTP/1.1
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with "Connection: keep-alive"

  // The value of the first header `name` (lower case), or nullptr.
  const std::string* header(std::string_view name) const;
};

// Reads requests one after another from one connection's bytes (pipelined requests included).
class RequestReader {
 public:
  enum class State { head, body, done, failed };
  explicit RequestReader(HttpLimits limits) : limits_(limits) {}

  // Consumes what it can of `in` (erasing the bytes it used; bytes of a following request stay) and returns the
  // state: head or body (more bytes needed), done (take() the request) or failed (status() and message()).
  State feed(std::string& in);
  // True once, when the head asked "Expect: 100-continue" for a body still to come: the server answers 100 first.
  bool take_continue();
  bool continue_pending() const { return wants_continue_; }
  // True while part of a request has been read (a deadline then ends with 408; an idle connection just closes).
  bool started() const { return started_; }
  int status() const { return status_; }
  const std::string& message() const { return message_; }
  // The finished request; the reader starts over for the next one.
  HttpRequest take();

 private:
  State fail(int status, std::string message);
  State read_head(std::string& in);
  State parse_head(std::string_view head);
  State set_body_framing();
  State read_chunked(std::string& in);

  HttpLimits limits_;
  State state_ = State::head;
  HttpRequest request_;
  bool started_ = false;
  bool wants_continue_ = false;
  bool chunked_ = false;
  size_t content_length_ = 0;
  enum class Chunk { size, data, data_end, trailer } chunk_ = Chunk::size;
  size_t chunk_left_ = 0;
  size_t trailer_bytes_ = 0;
  int status_ = 0;
  std::string message_;
};

}  // namespace llmco2::server
