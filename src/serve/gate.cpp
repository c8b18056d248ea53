// The accept loop, the per-address slots and the deadlines of serve's connections (gate.hpp).
#include "serve/gate.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace dltune::serve::detail {

using std::chrono::milliseconds;

namespace {

std::string address_text(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, text, sizeof text);
  else if (a.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, text, sizeof text);
  return text;
}

// A connection over its address's share: a plain one is told 503 (written without waiting),
// a TLS one closed; either way at once.
void refuse(int fd, bool tls) {
  if (!tls) {
    static constexpr char k503[] =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Connection: close\r\nRetry-After: 1\r\nContent-Length: 46\r\n\r\n"
        "too many connections from this address: later\n";
    (void)::send(fd, k503, sizeof k503 - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

// A plain HTTP request to the TLS port: what has come of it is read (so that closing does not
// reset the connection before the client reads the answer), then a 400 that says why.
void answer_plain_request(int fd) {
  char sink[4096];
  for (std::size_t drained = 0; drained < 64 * 1024;) {
    const auto n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n <= 0) break;
    drained += static_cast<std::size_t>(n);
  }
  static constexpr char k400[] =
      "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
      "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
  (void)::send(fd, k400, sizeof k400 - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

}  // namespace

Gate::Gate(const HttpLimits& limits, bool tls,
           std::function<bool(int, const sockaddr*, socklen_t)> hand_over)
    : limits_(limits),
      tls_(tls),
      per_address_(limits.connections_per_address != 0
                       ? limits.connections_per_address
                       : std::max<std::size_t>(1, limits.workers / 2)),
      hand_over_(std::move(hand_over)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Gate::~Gate() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Gate::wake() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void Gate::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake();
}

std::size_t Gate::held() const {
  std::lock_guard lock(mu_);
  return connections_.size();
}

void Gate::run(int listen_fd) {
  std::vector<pollfd> fds;
  for (;;) {
    const auto next = expire();
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      if (connections_.size() < limits_.workers) fds.push_back({listen_fd, POLLIN, 0});
      for (const auto& [fd, c] : connections_)
        if (c->pending) fds.push_back({fd, POLLIN, 0});
    }
    // Without connections nothing is due: asleep until one comes (no wake-ups while idle).
    const int wait =
        next == Clock::time_point::max()
            ? -1
            : static_cast<int>(
                  std::clamp(std::chrono::duration_cast<milliseconds>(next - Clock::now()) +
                                 milliseconds(1),
                             milliseconds(0), milliseconds(1000))
                      .count());
    const int rc = ::poll(fds.data(), fds.size(), wait);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    if ((fds[0].revents & POLLIN) != 0) {
      std::uint64_t n = 0;
      (void)!::read(wake_fd_, &n, sizeof n);
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd != listen_fd) {
        first_byte(fds[i].fd);
        continue;
      }
      // As many as are waiting, up to the limit.
      for (;;) {
        {
          std::lock_guard lock(mu_);
          if (connections_.size() >= limits_.workers) break;
        }
        sockaddr_storage peer{};
        socklen_t len = sizeof peer;
        const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
          // Out of descriptors or memory: the listening socket stays readable, so wait a little
          // rather than spin (the backlog holds the clients meanwhile).
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            ::poll(nullptr, 0, 100);
          break;  // none left (EAGAIN), or the client left meanwhile
        }
        admit(fd, peer, len);
      }
    }
  }
  // Stopping: what libmicrohttpd does not have is closed here; it closes the rest.
  std::lock_guard lock(mu_);
  for (auto it = connections_.begin(); it != connections_.end();) {
    const auto here = it++;
    if (here->second->pending) {
      ::close(here->first);
      release(here);
    }
  }
}

void Gate::admit(int fd, const sockaddr_storage& peer, socklen_t len) {
  {
    std::lock_guard lock(mu_);
    // An entry on this socket's number is one whose close never came (libmicrohttpd refused it
    // after taking it): forgotten now.
    if (auto old = connections_.find(fd); old != connections_.end()) release(old);
    std::string address = address_text(peer);
    auto& held = per_address_held_[address];
    if (held >= per_address_) {
      refuse(fd, tls_);
      return;
    }
    ++held;
    auto entry = std::make_unique<Connection>();
    entry->fd = fd;
    entry->serial = next_serial_++;
    entry->address = std::move(address);
    entry->peer = peer;
    entry->peer_len = len;
    // A new connection has the idle timeout to start its request: until its first byte it is
    // the Gate's (libmicrohttpd's idle timeout is in whole seconds and cannot tell a client
    // that drips from one that sends).
    entry->pending = true;
    entry->deadline = Clock::now() + limits_.idle_timeout;
    connections_[fd] = std::move(entry);
  }
  first_byte(fd);  // when the request came with the connection, no wait for the next poll
}

void Gate::hand_over(Connection& c) {
  // Copied first: once handed over the entry is libmicrohttpd's to end.
  const int fd = c.fd;
  const std::uint64_t serial = c.serial;
  const sockaddr_storage peer = c.peer;
  const socklen_t len = c.peer_len;
  if (hand_over_(fd, reinterpret_cast<const sockaddr*>(&peer), len)) return;
  std::lock_guard lock(mu_);
  // Refused: libmicrohttpd closed the socket (after its close notice, if it had started it).
  if (auto it = connections_.find(fd); it != connections_.end() && it->second->serial == serial)
    release(it);
}

void Gate::first_byte(int fd) {
  Connection* c = nullptr;
  {
    std::lock_guard lock(mu_);
    const auto it = connections_.find(fd);
    if (it == connections_.end() || !it->second->pending) return;
    unsigned char first = 0;
    ssize_t n;
    do {
      n = ::recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // On a TLS port: a TLS connection starts with a handshake record (content type 22), a plain
    // HTTP request with its method's capital letter.
    const bool plain_to_tls = n == 1 && tls_ && first >= 'A' && first <= 'Z';
    if (n != 1 || plain_to_tls) {
      if (plain_to_tls)
        answer_plain_request(fd);
      else
        ::close(fd);  // the client left
      release(it);
      return;
    }
    // The request's line and headers (over TLS the handshake first) are due now.
    it->second->pending = false;
    it->second->deadline = Clock::now() + limits_.header_deadline;
    c = it->second.get();
  }
  hand_over(*c);
}

Gate::Clock::time_point Gate::expire() {
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  // A deadline moved by libmicrohttpd's threads (a request started or answered) is seen within
  // a second: the loop never sleeps longer while it holds connections.
  if (connections_.empty()) return Clock::time_point::max();
  auto next = now + milliseconds(1000);
  for (auto it = connections_.begin(); it != connections_.end();) {
    const auto here = it++;
    Connection& c = *here->second;
    if (c.cut) continue;
    if (c.deadline > now) {
      next = std::min(next, c.deadline);
      continue;
    }
    if (c.pending) {
      ::close(c.fd);  // the Gate's still: closed and forgotten here
      release(here);
    } else {
      // libmicrohttpd's: it sees the end of the input, or a reset, and closes it.
      ::shutdown(c.fd, SHUT_RDWR);
      c.cut = true;
    }
  }
  return next;
}

Gate::Connection* Gate::started(int fd) {
  std::lock_guard lock(mu_);
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return nullptr;
  it->second->started = true;
  return it->second.get();
}

void Gate::closed(Connection* c) {
  if (c == nullptr) return;
  std::lock_guard lock(mu_);
  if (auto it = connections_.find(c->fd); it != connections_.end() && it->second.get() == c)
    release(it);
  wake();  // a slot is free: accept again if the limit was reached
}

std::size_t Gate::request_started(Connection& c) {
  std::lock_guard lock(mu_);
  c.deadline = Clock::now() + limits_.request_deadline;
  return ++c.requests;
}

void Gate::request_done(Connection& c) {
  std::lock_guard lock(mu_);
  c.deadline = Clock::now() + limits_.idle_timeout + limits_.header_deadline;
}

void Gate::release(std::map<int, std::unique_ptr<Connection>>::iterator it) {
  if (const auto a = per_address_held_.find(it->second->address); a != per_address_held_.end())
    if (--a->second == 0) per_address_held_.erase(a);
  connections_.erase(it);
}

}  // namespace dltune::serve::detail
