// server/routes/reply.cc - error replies and JSON bodies.
#include "server/routes/reply.h"

#include <fmt/format.h>

#include "llmco2/error.h"

namespace llmco2::server {
Reply error_reply(int status, const std::string& message) {
  return {status, Json{{"error", message}, {"status", status}}};
}

Reply answer_or_error(const std::function<Reply()>& answer) {
  try {
    return answer();
  } catch (const HttpError& e) {
    return error_reply(e.status, e.what());
  } catch (const Error& e) {
    return error_reply(400, e.what());
  } catch (const std::exception&) {
    return error_reply(500, "internal error");
  }
}

std::string reply_text(const Reply& reply) { return reply.body.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json parse_body(const std::string& body) {
  try {
    return api::parse_json(body, "request body");  // the API's reader: depth-limited, finite numbers
  } catch (const Error& e) {
    throw HttpError(400, e.what());
  }
}

}  // namespace llmco2::server
