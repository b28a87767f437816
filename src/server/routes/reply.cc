// server/routes/reply.cc - error replies and JSON bodies.
#include "server/routes/reply.h"

#include <fmt/format.h>

#include "llmco2/error.h"

namespace llmco2::server {
namespace {

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1, column 9: " prefix.
std::string parse_reason(const std::string& what) {
  const auto colon = what.find(": ");
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

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

std::string reply_text(const Reply& reply) {
  return reply.body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json parse_body(const std::string& body) {
  try {
    return Json::parse(body);
  } catch (const Json::parse_error& e) {
    throw HttpError(400, fmt::format("request body: malformed JSON at byte {}: {}", e.byte, parse_reason(e.what())));
  }
}

}  // namespace llmco2::server
