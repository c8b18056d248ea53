// The worker pool, the connection stream and the server that uses them (connection.hpp).
#include "serve/connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <openssl/err.h>

namespace dltune::serve::detail {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

WorkerPool::WorkerPool(std::size_t workers, std::size_t queued)
    : max_queued_(std::max<std::size_t>(queued, 1)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(workers, 1); ++i)
    threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  shutdown();
}

void WorkerPool::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  has_room_.wait(lock, [&] { return queue_.size() < max_queued_ || shutting_down_; });
  queue_.push_back(std::move(fn));
  has_work_.notify_one();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_ && threads_.empty()) return;
    shutting_down_ = true;
  }
  has_work_.notify_all();
  has_room_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void WorkerPool::work() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(mu_);
      has_work_.wait(lock, [&] { return !queue_.empty() || shutting_down_; });
      if (queue_.empty()) return;  // shutting down and nothing left
      fn = std::move(queue_.front());
      queue_.pop_front();
      has_room_.notify_one();
    }
    fn();  // serves one connection; with the server stopping it only closes it
  }
}

ConnectionStream::ConnectionStream(int fd, const HttpLimits& limits, SSL* ssl)
    : fd_(fd), limits_(limits), ssl_(ssl) {
  begin_request();
}

void ConnectionStream::begin_request() {
  budget_ = limits_.max_request_bytes;
  const auto now = Clock::now();
  deadline_ = now + limits_.request_deadline;
  read_deadline_ = std::min(deadline_, now + limits_.header_deadline);
}

milliseconds ConnectionStream::left() const {
  return std::chrono::duration_cast<milliseconds>(deadline_ - Clock::now());
}

milliseconds ConnectionStream::read_left() const {
  return std::chrono::duration_cast<milliseconds>(read_deadline_ - Clock::now());
}

int ConnectionStream::wait(short events, milliseconds timeout) const {
  timeout = std::min(timeout, (events & POLLIN) != 0 ? read_left() : left());
  if (timeout.count() <= 0) return 0;
  pollfd p{fd_, events, 0};
  for (;;) {
    const int rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (rc < 0 && errno == EINTR) continue;
    return rc;
  }
}

bool ConnectionStream::is_readable() const {
  return pos_ < len_ || (ssl_ != nullptr && ::SSL_pending(ssl_) > 0) ||
         wait(POLLIN, limits_.io_timeout) > 0;
}

bool ConnectionStream::is_writable() const {
  return wait(POLLOUT, limits_.io_timeout) > 0;
}

ssize_t ConnectionStream::timed_out() {
  if (left().count() <= 0 || read_left().count() <= 0) spent_ = true;
  return -1;
}

short ConnectionStream::wanted(int rc) const {
  switch (::SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ:
      return POLLIN;
    case SSL_ERROR_WANT_WRITE:
      return POLLOUT;
    default:
      return 0;
  }
}

ssize_t ConnectionStream::receive(char* to, std::size_t size) {
  if (ssl_ == nullptr) {
    if (wait(POLLIN, limits_.io_timeout) <= 0) return timed_out();
    ssize_t n;
    do {
      n = ::recv(fd_, to, size, 0);
    } while (n < 0 && errno == EINTR);
    return n;
  }
  // Non-blocking: SSL_read answers "want read" until a whole record is here, and each wait is
  // bounded by the request's deadline.
  for (;;) {
    ::ERR_clear_error();
    const int n = ::SSL_read(ssl_, to, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
    if (n > 0) return n;
    if (::SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN) return 0;  // close_notify
    const short events = wanted(n);
    if (events == 0) return -1;
    if (wait(events, limits_.io_timeout) <= 0) return timed_out();
  }
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (pos_ == len_) {
    // Out of budget: read as the end of the input, so that a request line that long ends here
    // and is answered 414 (URI too long); headers that long end unfinished (400).
    if (budget_ == 0) {
      spent_ = true;
      return 0;
    }
    const ssize_t n = receive(buf_, std::min(sizeof buf_, budget_));
    if (n <= 0) {
      broken_ = true;  // the end of the input, or an error: no further request
      return n;
    }
    budget_ -= static_cast<std::size_t>(n);
    pos_ = 0;
    len_ = static_cast<std::size_t>(n);
  }
  const std::size_t n = std::min(size, len_ - pos_);
  std::memcpy(ptr, buf_ + pos_, n);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (ssl_ != nullptr) {
    for (;;) {
      ::ERR_clear_error();
      const int n = ::SSL_write(ssl_, ptr, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
      if (n > 0) return n;
      const short events = wanted(n);
      if (events == 0 || wait(events, limits_.io_timeout) <= 0) {
        if (events != 0) (void)timed_out();
        broken_ = true;
        return -1;
      }
    }
  }
  if (wait(POLLOUT, limits_.io_timeout) <= 0) {
    if (left().count() <= 0) spent_ = true;
    broken_ = true;
    return -1;
  }
  ssize_t n;
  do {
    n = ::send(fd_, ptr, size, MSG_NOSIGNAL);  // a client that went away is not a SIGPIPE
  } while (n < 0 && errno == EINTR);
  if (n < 0) broken_ = true;
  return n;
}

namespace {

void address_of(const sockaddr_storage& a, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    port = ntohs(v6.sin6_port);
  }
  ip = text;
}

}  // namespace

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) address_of(a, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) address_of(a, ip, port);
}

bool ConnectionStream::wait_for_request(const std::function<bool()>& running) {
  if (pos_ < len_) return true;                                 // pipelined: already here
  if (ssl_ != nullptr && ::SSL_pending(ssl_) > 0) return true;  // decrypted, not yet read
  // In slices, so that a stopping server is noticed soon.
  constexpr milliseconds kSlice{100};
  const auto until = Clock::now() + limits_.idle_timeout;
  while (running()) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min(left, kSlice).count()));
    if (rc > 0) return true;  // a request, or the client closed (read then sees the end)
    if (rc < 0 && errno != EINTR) return false;
  }
  return false;
}

bool ConnectionStream::accept_tls(const std::function<bool()>& running) {
  if (!wait_for_request(running)) return false;
  // A TLS connection starts with a handshake record (content type 22); a plain HTTP request with
  // its method's capital letter.
  unsigned char first = 0;
  ssize_t n;
  do {
    n = ::recv(fd_, &first, 1, MSG_PEEK);
  } while (n < 0 && errno == EINTR);
  if (n != 1) return false;
  if (first >= 'A' && first <= 'Z') {
    static constexpr char kPlain[] =
        "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
    if (wait(POLLOUT, limits_.io_timeout) > 0)
      (void)::send(fd_, kPlain, sizeof kPlain - 1, MSG_NOSIGNAL);
    broken_ = true;  // no TLS to close
    drain();
    return false;
  }
  begin_request();  // the handshake has the request's deadline
  for (;;) {
    ::ERR_clear_error();
    const int rc = ::SSL_accept(ssl_);
    if (rc == 1) return true;
    const short events = wanted(rc);
    // A client that does not trust the certificate, speaks no common version, or sends no
    // client certificate where one is required ends here.
    if (events == 0 || wait(events, limits_.io_timeout) <= 0) {
      broken_ = true;
      return false;
    }
  }
}

void ConnectionStream::drain() {
  if (ssl_ != nullptr && !broken_) {
    ::ERR_clear_error();
    (void)::SSL_shutdown(ssl_);  // close_notify, sent as far as it goes now
  }
  ::shutdown(fd_, SHUT_WR);
  // At most 256 KiB and 500 ms: enough for a request line that was too long; a client that
  // sends more gets the reset it asked for.
  constexpr std::size_t kMax = 256 * 1024;
  const auto until = Clock::now() + milliseconds(500);
  std::size_t drained = 0;
  char sink[4096];
  while (drained < kMax) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = ::recv(fd_, sink, sizeof sink, 0);
    if (n <= 0) break;  // the client closed its side: done
    drained += static_cast<std::size_t>(n);
  }
}

AddressSlots::AddressSlots(const HttpLimits& limits)
    : max_(limits.connections_per_address != 0 ? limits.connections_per_address
                                               : std::max<std::size_t>(1, limits.workers / 2)) {}

bool AddressSlots::take(int sock, std::string& address) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len) != 0) return false;
  int port = 0;
  address_of(a, address, port);
  std::lock_guard lock(mu_);
  auto& held = held_[address];
  if (held >= max_) return false;
  ++held;
  return true;
}

void AddressSlots::give_back(const std::string& address) {
  std::lock_guard lock(mu_);
  const auto it = held_.find(address);
  if (it == held_.end()) return;
  if (--it->second == 0) held_.erase(it);
}

void refuse_connection(int sock, bool tls) {
  if (!tls) {
    static constexpr char k503[] =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Connection: close\r\nRetry-After: 1\r\nContent-Length: 46\r\n\r\n"
        "too many connections from this address: later\n";
    (void)::send(sock, k503, sizeof k503 - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

namespace {
thread_local bool close_after = false;
}  // namespace

void close_after_this_request() {
  close_after = true;
}

bool serve_connection(int sock, const HttpLimits& limits, SSL* ssl,
                      const std::function<bool()>& running,
                      const std::function<bool(httplib::Stream&, bool, bool&)>& process) {
  // A response goes out in a few writes (headers, the published text, the scrape counter); with
  // Nagle's algorithm the last small one would wait for the client's delayed ACK, 40 ms on
  // Linux, on every request of a kept-alive connection.
  const int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Over TLS every wait is a poll(2) with the deadline, and SSL calls must not block.
  if (ssl != nullptr) ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  ConnectionStream strm(sock, limits, ssl);
  bool ok = true, must_drain = false;
  if (ssl != nullptr && !strm.accept_tls(running)) {
    ok = false;
  } else {
    for (std::size_t n = 0; n < limits.requests_per_connection; ++n) {
      if (!strm.wait_for_request(running)) break;
      strm.begin_request();
      close_after = false;
      bool closed = false;
      const bool last = n + 1 == limits.requests_per_connection;
      ok = process(strm, last, closed);
      must_drain = strm.spent() || close_after;
      if (!ok || closed || must_drain || strm.broken()) break;
    }
    if (must_drain) {
      strm.drain();
    } else if (ssl != nullptr && !strm.broken()) {
      ::ERR_clear_error();
      (void)::SSL_shutdown(ssl);  // close_notify: the answer ended where the client read it
    }
  }
  if (ssl != nullptr) ::SSL_free(ssl);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace dltune::serve::detail
