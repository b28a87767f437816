// server/http/http_request.cc - the HTTP/1.1 request reader (RFC 9112): head, Content-Length and chunked bodies.
#include "server/http/http_request.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace llmco2::server {

namespace {

constexpr size_t kMaxChunkSizeLine = 1024;  // hex size and extensions of one chunk
constexpr size_t kMaxMethodLength = 16;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// RFC 9110 token characters (header names, methods).
bool is_token(std::string_view text) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
  });
}

bool has_control_bytes(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\t') || c == 0x7f;
  });
}

// The end of the head in `in` (one past its blank line), or npos. Lines end with LF, optionally after CR.
size_t head_end(const std::string& in) {
  for (size_t nl = in.find('\n'); nl != std::string::npos; nl = in.find('\n', nl + 1)) {
    if (nl + 1 < in.size() && in[nl + 1] == '\n') return nl + 2;
    if (nl + 2 < in.size() && in[nl + 1] == '\r' && in[nl + 2] == '\n') return nl + 3;
  }
  return std::string::npos;
}

std::vector<std::string_view> lines_of(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    lines.push_back(line);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
  }
  return lines;
}

// A Content-Length value: 1 to 18 decimal digits (no sign, no spaces).
bool decimal(std::string_view text, size_t& value) {
  if (text.empty() || text.size() > 18) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  return true;
}

// A chunk size: 1 to 15 hexadecimal digits.
bool hexadecimal(std::string_view text, size_t& value) {
  if (text.empty() || text.size() > 15) return false;
  value = 0;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!std::isxdigit(c)) return false;
    value = value * 16 + static_cast<size_t>(std::isdigit(c) ? c - '0' : c - 'a' + 10);
  }
  return true;
}

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return &value;
  return nullptr;
}

RequestReader::State RequestReader::fail(int status, std::string message) {
  status_ = status;
  message_ = std::move(message);
  return state_ = State::failed;
}

RequestReader::State RequestReader::feed(std::string& in) {
  if (state_ == State::head) read_head(in);
  if (state_ != State::body) return state_;
  if (chunked_) return read_chunked(in);
  const size_t take = std::min(content_length_ - request_.body.size(), in.size());
  request_.body.append(in, 0, take);
  in.erase(0, take);
  if (request_.body.size() == content_length_) state_ = State::done;
  return state_;
}

RequestReader::State RequestReader::read_head(std::string& in) {
  if (!started_) {  // empty lines before a request line are ignored (RFC 9112 2.2)
    const size_t first = in.find_first_not_of("\r\n");
    in.erase(0, first == std::string::npos ? in.size() : first);
    started_ = !in.empty();
  }
  const size_t end = head_end(in);
  if (end == std::string::npos && in.size() <= limits_.max_head_bytes) return state_;
  if (end == std::string::npos || end > limits_.max_head_bytes)
    return fail(431, fmt::format("request line and headers over {} bytes", limits_.max_head_bytes));
  const std::string head = in.substr(0, end);
  in.erase(0, end);
  if (parse_head(head) == State::failed) return state_;
  return set_body_framing();
}

RequestReader::State RequestReader::parse_head(std::string_view head) {
  const std::vector<std::string_view> lines = lines_of(head);
  if (lines.empty()) return fail(400, "malformed HTTP request: no request line");
  if (lines.size() - 1 > limits_.max_headers)
    return fail(431, fmt::format("more than {} header lines", limits_.max_headers));
  const std::string_view line = lines[0];
  const size_t s1 = line.find(' '), s2 = line.find(' ', s1 == std::string_view::npos ? s1 : s1 + 1);
  if (s1 == std::string_view::npos || s2 == std::string_view::npos || line.find(' ', s2 + 1) != std::string_view::npos)
    return fail(400, "malformed HTTP request line (expected METHOD /path HTTP/1.1)");
  const std::string_view method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1);
  const std::string_view version = line.substr(s2 + 1);
  if (!is_token(method) || method.size() > kMaxMethodLength || target.empty() || target[0] != '/' ||
      has_control_bytes(target))
    return fail(400, "malformed HTTP request line (expected METHOD /path HTTP/1.1)");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    if (version.starts_with("HTTP/")) return fail(505, "HTTP version not supported (HTTP/1.0 and HTTP/1.1 are)");
    return fail(400, "malformed HTTP request line (expected METHOD /path HTTP/1.1)");
  }
  request_.method = std::string(method);
  request_.target = std::string(target);
  request_.path = request_.target.substr(0, request_.target.find('?'));
  request_.minor_version = version == "HTTP/1.1" ? 1 : 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view h = lines[i];
    const size_t colon = h.find(':');
    if (h[0] == ' ' || h[0] == '\t') return fail(400, "malformed header: obsolete line folding");
    if (colon == std::string_view::npos || !is_token(h.substr(0, colon)) || has_control_bytes(h.substr(colon + 1)))
      return fail(400, "malformed header line (expected Name: value)");
    request_.headers.emplace_back(lower(h.substr(0, colon)), std::string(trim(h.substr(colon + 1))));
  }
  const std::string* connection = request_.header("connection");
  const std::string tokens = connection ? lower(*connection) : "";
  request_.keep_alive = request_.minor_version == 1 ? tokens.find("close") == std::string::npos
                                                    : tokens.find("keep-alive") != std::string::npos;
  return state_;
}

RequestReader::State RequestReader::set_body_framing() {
  const std::string* encoding = request_.header("transfer-encoding");
  std::vector<const std::string*> lengths;
  for (const auto& [key, value] : request_.headers)
    if (key == "content-length") lengths.push_back(&value);
  if (encoding && !lengths.empty()) return fail(400, "both Transfer-Encoding and Content-Length given");
  if (encoding && lower(*encoding) != "chunked")
    return fail(501, fmt::format("Transfer-Encoding '{}' is not supported (only chunked)", *encoding));
  chunked_ = encoding != nullptr;
  for (const std::string* length : lengths) {
    size_t value = 0;
    if (!decimal(*length, value) || (length != lengths.front() && *length != *lengths.front()))
      return fail(400, "Content-Length must be one non-negative decimal number");
    content_length_ = value;
  }
  if (content_length_ > limits_.max_body_bytes)
    return fail(413, fmt::format("request body over {} bytes (--max-body-bytes)", limits_.max_body_bytes));
  const bool body_follows = chunked_ || content_length_ > 0;
  if (const std::string* expect = request_.header("expect")) {
    if (lower(*expect) != "100-continue") return fail(417, fmt::format("Expect '{}' is not supported", *expect));
    wants_continue_ = body_follows;
  }
  request_.body.reserve(chunked_ ? 0 : content_length_);
  return state_ = body_follows ? State::body : State::done;
}

RequestReader::State RequestReader::read_chunked(std::string& in) {
  while (state_ == State::body && !in.empty()) {
    if (chunk_ == Chunk::data) {
      const size_t take = std::min(chunk_left_, in.size());
      request_.body.append(in, 0, take);
      in.erase(0, take);
      chunk_left_ -= take;
      if (chunk_left_ == 0) chunk_ = Chunk::data_end;
      continue;
    }
    if (chunk_ == Chunk::data_end) {
      if (in[0] != '\r' && in[0] != '\n') return fail(400, "malformed chunked body: chunk longer than its size");
      if (in[0] == '\r' && in.size() < 2) return state_;
      if (in[0] == '\r' && in[1] != '\n') return fail(400, "malformed chunked body: chunk longer than its size");
      in.erase(0, in[0] == '\r' ? 2 : 1);
      chunk_ = Chunk::size;
      continue;
    }
    const size_t nl = in.find('\n');
    const size_t line_limit = chunk_ == Chunk::size ? kMaxChunkSizeLine : limits_.max_head_bytes - trailer_bytes_;
    if (nl == std::string::npos || nl + 1 > line_limit) {
      if (in.size() <= line_limit) return state_;
      if (chunk_ == Chunk::trailer) return fail(431, "chunked body trailers too long");
      return fail(400, "malformed chunked body: chunk size line too long");
    }
    std::string_view line(in.data(), nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (chunk_ == Chunk::trailer) {
      trailer_bytes_ += nl + 1;
      const bool last = line.empty();
      in.erase(0, nl + 1);
      if (last) state_ = State::done;
      continue;
    }
    const std::string_view hex = trim(line.substr(0, line.find(';')));
    size_t size = 0;
    if (!hexadecimal(hex, size)) return fail(400, "malformed chunked body: chunk size is not a hexadecimal number");
    if (size > limits_.max_body_bytes - request_.body.size())
      return fail(413, fmt::format("request body over {} bytes (--max-body-bytes)", limits_.max_body_bytes));
    in.erase(0, nl + 1);
    chunk_left_ = size;
    chunk_ = size == 0 ? Chunk::trailer : Chunk::data;
  }
  return state_;
}

bool RequestReader::take_continue() {
  const bool wanted = wants_continue_;
  wants_continue_ = false;
  return wanted;
}

HttpRequest RequestReader::take() {
  HttpRequest done = std::move(request_);
  *this = RequestReader(limits_);
  return done;
}

}  // namespace llmco2::server
