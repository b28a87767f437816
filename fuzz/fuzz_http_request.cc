// fuzz/fuzz_http_request.cc - the HTTP server's request reader (server/http/http_request.h), the path every byte a
// client sends takes: the first byte sets how the rest is split into reads (1 to 256 bytes each), as a network may
// split it; every request read (pipelined ones included) must hold to the limits, every refusal must carry one of the
// reader's statuses and a message, and the bytes kept between reads stay bounded.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "harness.h"
#include "server/http/http_request.h"
#include "support/all_modules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace llmco2::server;
  if (size == 0) return 0;
  HttpLimits limits;
  limits.max_head_bytes = 512;
  limits.max_headers = 8;
  limits.max_body_bytes = 256;
  const size_t step = static_cast<size_t>(data[0]) + 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  RequestReader reader(limits);
  std::string in;
  for (size_t at = 0; at < bytes.size(); at += step) {
    in.append(bytes.substr(at, step));
    for (;;) {
      const RequestReader::State state = reader.feed(in);
      if (state == RequestReader::State::failed) {
        const int status = reader.status();
        if (reader.message().empty() ||
            (status != 400 && status != 413 && status != 417 && status != 431 && status != 501 && status != 505))
          std::abort();
        return 0;  // the server answers and closes
      }
      if (state != RequestReader::State::done) break;
      const HttpRequest request = reader.take();
      if (request.body.size() > limits.max_body_bytes || request.headers.size() > limits.max_headers ||
          request.path.empty() || request.path[0] != '/')
        std::abort();
    }
    // What waits for the next read: at most a head's limit (or a chunk-size line's, 1024 bytes) and one read; a body
    // is consumed as it comes.
    if (in.size() > std::max<size_t>(limits.max_head_bytes, 1024) + step) std::abort();
  }
  return 0;
}
