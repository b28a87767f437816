// server/routes/reply.h - what an endpoint answers (a status and a JSON body), the error form every error takes, and
// reading a request body as JSON.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "llmco2/api.h"

namespace llmco2::server {

using Json = api::Json;

struct Reply {
  int status = 200;
  Json body;
};

// An error with its HTTP status (413 for a batch over the cap, 400 for malformed JSON, ...).
class HttpError : public std::runtime_error {
 public:
  HttpError(int http_status, const std::string& message) : std::runtime_error(message), status(http_status) {}
  int status;
};

// {"error": message, "status": status}
Reply error_reply(int status, const std::string& message);

// The one place an endpoint's exceptions become replies: HttpError -> its status, llmco2::Error -> 400 with the
// message the CLI prints, anything else -> 500 "internal error" (no detail, no stack trace).
Reply answer_or_error(const std::function<Reply()>& answer);

// The reply's body as the server sends it: compact JSON, invalid UTF-8 (a malformed body's bytes quoted in an error
// message) replaced by U+FFFD rather than thrown.
std::string reply_text(const Reply& reply);

// The body as JSON, read as the API reads every JSON text (api::parse_json: at most 64 levels, finite numbers);
// throws HttpError 400 naming the byte where parsing failed.
Json parse_body(const std::string& body);

}  // namespace llmco2::server
