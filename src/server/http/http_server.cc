// server/http/http_server.cc - the polling thread (accept, read, deadlines), the workers (answer, write) and the
// bounded stop of `llmco2 serve`'s HTTP/1.1 server.
#include "server/http/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "llmco2/error.h"
#include "server/pool/bounded_queue.h"

namespace llmco2::server {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kReadChunk = 16384;    // bytes one recv takes
constexpr int kMaxAcceptsPerWake = 64;  // the listener cannot starve the connections
constexpr int kListenBacklog = 128;
constexpr int kMaxPollMs = 1000;
// A refused connection is half-closed and what the client still sends is read and dropped for a while (at most this
// long and this much), so that its answer is not lost to a reset when the client's data meets a closed socket.
constexpr double kLingerS = 2;
constexpr size_t kMaxLingerBytes = 4 << 20;
// After an answer, a worker with nothing else waiting keeps a keep-alive connection this long for its next request
// (a client that sends at once saves two thread hand-offs), and at most this many requests in a row.
constexpr auto kKeepForNext = std::chrono::microseconds(500);
constexpr int kMaxInlineRequests = 64;

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

std::string serialized(const HttpResponse& r, bool keep_alive) {
  std::string out =
      fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n", r.status,
                  reason(r.status), r.content_type, r.body.size(), keep_alive ? "keep-alive" : "close");
  for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
  out += "\r\n";
  out += r.body;
  return out;
}

int ms_until(Clock::time_point deadline) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, kMaxPollMs));
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Writes all of `data` by `deadline` on a non-blocking socket; false when the peer is gone or too slow to take it.
bool write_all(int fd, std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && Clock::now() < deadline) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, std::max(1, ms_until(deadline))) < 0 && errno != EINTR) return false;
      continue;
    }
    return false;
  }
  return true;
}

// One try at a short answer from the polling thread, which never waits on a client: what does not fit in the
// socket's buffer is lost with the connection.
void send_now(int fd, const std::string& data) {
  (void)::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

struct Connection {
  Connection(int socket, const HttpLimits& limits) : fd(socket), reader(limits) {}
  int fd;
  std::string in;  // read and not yet consumed: at most a head's limit plus one recv
  RequestReader reader;
  Clock::time_point deadline;
  bool busy = false;     // a worker holds it: not polled, not expired
  bool closing = false;  // answered and half-closed: what arrives is dropped until the client closes or time is up
  size_t drained = 0;
  size_t served = 0;
};

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions o;
  HttpHandler handler;
  HttpErrorBody error_body;
  HttpLogger logger;
  int listener = -1;
  int wake = -1;  // eventfd: a worker returned a connection, or stop() was called
  std::atomic<bool> stopping{false};
  std::map<int, std::unique_ptr<Connection>> connections;
  size_t busy = 0;     // connections a worker holds
  size_t closing = 0;  // connections half-closed after a refusal (not counted against max_connections)
  std::mutex returned_mutex;
  std::vector<std::pair<int, bool>> returned;  // (fd, keep it open), from the workers
  std::unique_ptr<TaskLine> workers;

  void wake_up() {
    const uint64_t one = 1;
    (void)!::write(wake, &one, sizeof one);
  }
  void close_connection(int fd) {
    const auto it = connections.find(fd);
    if (it != connections.end() && it->second->closing) --closing;
    ::close(fd);
    connections.erase(fd);
  }
  // Sends a refusal and half-closes; the connection lingers (see kLingerS) unless too many do already.
  void answer_and_linger(Connection& c, const HttpResponse& r) {
    send_now(c.fd, serialized(r, false));
    if (closing >= o.max_connections) return close_connection(c.fd);
    ::shutdown(c.fd, SHUT_WR);
    c.closing = true;
    ++closing;
    c.in.clear();
    c.deadline = Clock::now() + seconds(kLingerS);
  }
  void refuse(Connection& c, int status, const std::string& message) {
    HttpResponse r = error_body(status, message);
    if (status == 503) r.headers.emplace_back("Retry-After", "1");
    logger(HttpRequest{}, r, std::chrono::system_clock::now(), 0.0);
    answer_and_linger(c, r);
  }
  void drain(Connection& c);
  void accept_all();
  std::unique_ptr<HttpRequest> next_request(Connection& c, bool& closed);
  bool answer(Connection& c, std::unique_ptr<HttpRequest> request);
  void on_readable(int fd);
  void advance(Connection& c);
  void dispatch(Connection& c);
  void take_returned();
  void expire();
  int poll_ms() const;
};

void HttpServer::Impl::accept_all() {
  for (int i = 0; i < kMaxAcceptsPerWake; ++i) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or out of descriptors (the next wake tries again)
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);  // small answers go out at once
    auto c = std::make_unique<Connection>(fd, o.limits);
    c->deadline = Clock::now() + seconds(std::min(o.keep_alive_s, o.timeout_s));
    Connection& added = *connections.emplace(fd, std::move(c)).first->second;
    if (connections.size() - closing > o.max_connections) {
      HttpResponse r = error_body(503, fmt::format("server busy: {} connections are open (--max-connections), retry "
                                                   "later",
                                                   o.max_connections));
      r.headers.emplace_back("Retry-After", "1");
      answer_and_linger(added, r);
    }
  }
}

void HttpServer::Impl::on_readable(int fd) {
  const auto it = connections.find(fd);
  if (it == connections.end() || it->second->busy) return;
  Connection& c = *it->second;
  if (c.closing) return drain(c);
  char buffer[kReadChunk];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) return close_connection(fd);  // closed by the client, or reset
  c.in.append(buffer, static_cast<size_t>(n));
  advance(c);
}

void HttpServer::Impl::drain(Connection& c) {
  char buffer[kReadChunk];
  const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  c.drained += n > 0 ? static_cast<size_t>(n) : 0;
  if (n <= 0 || c.drained > kMaxLingerBytes) close_connection(c.fd);
}

void HttpServer::Impl::advance(Connection& c) {
  const bool was_started = c.reader.started();
  const RequestReader::State state = c.reader.feed(c.in);
  if (!was_started && c.reader.started()) c.deadline = Clock::now() + seconds(o.timeout_s);
  if (state == RequestReader::State::failed) return refuse(c, c.reader.status(), c.reader.message());
  if (c.reader.take_continue()) send_now(c.fd, "HTTP/1.1 100 Continue\r\n\r\n");
  if (state == RequestReader::State::done) dispatch(c);
}

// The next whole request on a connection a worker holds, if it arrives within kKeepForNext; otherwise nullptr, the
// bytes read so far kept in the connection for the polling thread (`closed` set when the client closed it).
std::unique_ptr<HttpRequest> HttpServer::Impl::next_request(Connection& c, bool& closed) {
  const auto deadline = Clock::now() + kKeepForNext;
  for (;;) {
    const RequestReader::State state = c.reader.feed(c.in);
    if (state == RequestReader::State::done) return std::make_unique<HttpRequest>(c.reader.take());
    // A refusal, or a client waiting for "100 Continue": the polling thread answers those.
    if (state == RequestReader::State::failed || c.reader.continue_pending()) return nullptr;
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
    if (left <= 0) return nullptr;
    pollfd p{c.fd, POLLIN, 0};
    const struct timespec wait { 0, static_cast<long>(left) * 1000 };
    if (::ppoll(&p, 1, &wait, nullptr) <= 0) return nullptr;
    char buffer[kReadChunk];
    const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n <= 0) {
      closed = true;
      return nullptr;
    }
    c.in.append(buffer, static_cast<size_t>(n));
  }
}

// Answers `request` on `c` (a worker's task), then, while no other task waits, the requests that follow at once.
// Returns whether the connection stays open.
bool HttpServer::Impl::answer(Connection& c, std::unique_ptr<HttpRequest> request) {
  for (int inline_requests = 0;; ++inline_requests) {
    const auto received = std::chrono::system_clock::now();
    const auto start = Clock::now();
    const bool keep = request->keep_alive && c.served < o.max_requests_per_connection && !stopping;
    HttpResponse response;
    try {
      response = handler(*request);
    } catch (...) {  // the handler answers its own errors; this is the last net, with nothing of the exception
      response = error_body(500, "internal error");
    }
    const bool written = write_all(c.fd, serialized(response, keep), Clock::now() + seconds(o.timeout_s));
    logger(*request, response, received, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!keep || !written) return false;
    if (inline_requests + 1 >= kMaxInlineRequests || stopping || workers->waiting() > 0) return true;
    bool closed = false;
    request = next_request(c, closed);
    if (closed) return false;
    if (!request) return true;
    ++c.served;
  }
}

void HttpServer::Impl::dispatch(Connection& c) {
  auto request = std::make_shared<std::unique_ptr<HttpRequest>>(std::make_unique<HttpRequest>(c.reader.take()));
  ++c.served;
  Connection* held = &c;  // stable while busy: the polling thread neither reads nor closes a busy connection
  c.busy = true;
  ++busy;
  auto keep_open = std::make_shared<bool>(false);
  const bool queued = workers->try_enqueue(
      [this, held, request, keep_open] { *keep_open = answer(*held, std::move(*request)); },
      [this, fd = c.fd, keep_open] {  // the worker's slot is free again: the connection may be enqueued at once
        {
          std::lock_guard lock(returned_mutex);
          returned.emplace_back(fd, *keep_open);
        }
        wake_up();
      });
  if (queued) return;
  --busy;
  c.busy = false;
  HttpResponse r = error_body(503, "server busy: every worker and queue slot is taken, retry later");
  r.headers.emplace_back("Retry-After", "1");
  logger(**request, r, std::chrono::system_clock::now(), 0.0);
  answer_and_linger(c, r);
}

void HttpServer::Impl::take_returned() {
  std::vector<std::pair<int, bool>> done;
  {
    std::lock_guard lock(returned_mutex);
    done.swap(returned);
  }
  for (const auto& [fd, keep] : done) {
    --busy;
    const auto it = connections.find(fd);
    if (it == connections.end()) continue;
    if (!keep || stopping) {
      close_connection(fd);
      continue;
    }
    Connection& c = *it->second;
    c.busy = false;
    c.deadline = Clock::now() + seconds(c.reader.started() ? o.timeout_s : o.keep_alive_s);
    if (!c.in.empty() || c.reader.started()) advance(c);  // a request already (partly) read, refused or expecting 100
  }
}

void HttpServer::Impl::expire() {
  const auto now = Clock::now();
  std::vector<int> late;
  for (const auto& [fd, c] : connections)
    if (!c->busy && c->deadline <= now) late.push_back(fd);
  for (int fd : late) {
    Connection& c = *connections.at(fd);
    if (c.closing) close_connection(fd);
    else if (c.reader.started())
      refuse(c, 408, fmt::format("request not received whole within {} s (--timeout-s)", o.timeout_s));
    else close_connection(fd);  // idle: closed without a word, as keep-alive timeouts are
  }
}

int HttpServer::Impl::poll_ms() const {
  auto next = Clock::now() + std::chrono::milliseconds(kMaxPollMs);
  for (const auto& [fd, c] : connections)
    if (!c->busy) next = std::min(next, c->deadline);
  return ms_until(next);
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler, HttpErrorBody error_body, HttpLogger logger)
    : impl_(std::make_unique<Impl>()) {
  impl_->o = std::move(options);
  impl_->handler = std::move(handler);
  impl_->error_body = std::move(error_body);
  impl_->logger = std::move(logger);
  impl_->wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->wake < 0) throw Error("serve: cannot create an eventfd");
}

HttpServer::~HttpServer() {
  for (const auto& [fd, c] : impl_->connections) ::close(fd);
  if (impl_->listener >= 0) ::close(impl_->listener);
  ::close(impl_->wake);
}

int HttpServer::bind() {
  Impl& s = *impl_;
  const std::string where = fmt::format(
      "serve: cannot listen on {}:{} (address in use, or not an address of this "
      "machine)",
      s.o.host, s.o.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(s.o.host.c_str(), std::to_string(s.o.port).c_str(), &hints, &found) != 0) throw Error(where);
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  for (const addrinfo* a = found; a != nullptr && s.listener < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, kListenBacklog) == 0) s.listener = fd;
    else ::close(fd);
  }
  if (s.listener < 0) throw Error(where);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(s.listener, reinterpret_cast<sockaddr*>(&bound), &length);
  return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

void HttpServer::run() {
  Impl& s = *impl_;
  s.workers = std::make_unique<TaskLine>(s.o.threads, s.o.queue);
  std::vector<pollfd> fds;
  Clock::time_point stop_deadline{};
  for (;;) {
    if (s.stopping) {
      if (s.listener >= 0) {  // first pass after stop(): no new connections, none waiting for a request
        ::close(s.listener);
        s.listener = -1;
        stop_deadline = Clock::now() + seconds(s.o.timeout_s + 1);
      }
      std::vector<int> idle;
      for (const auto& [fd, c] : s.connections)
        if (!c->busy) idle.push_back(fd);
      for (int fd : idle) s.close_connection(fd);
      if (s.busy == 0 || Clock::now() >= stop_deadline) break;
    }
    fds.clear();
    fds.push_back({s.wake, POLLIN, 0});
    if (s.listener >= 0) fds.push_back({s.listener, POLLIN, 0});
    for (const auto& [fd, c] : s.connections)
      if (!c->busy) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), s.poll_ms()) < 0 && errno != EINTR) break;
    if (fds[0].revents) {
      uint64_t count = 0;
      (void)!::read(s.wake, &count, sizeof count);
    }
    s.take_returned();
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == s.listener) s.accept_all();
      else s.on_readable(fds[i].fd);
    }
    s.expire();
  }
  s.workers->shutdown();  // every write has a deadline: bounded by timeout_s beyond the longest answer
  s.take_returned();
  for (const auto& [fd, c] : s.connections) ::close(fd);
  s.connections.clear();
}

void HttpServer::stop() {
  impl_->stopping = true;
  impl_->wake_up();
}

}  // namespace llmco2::server
