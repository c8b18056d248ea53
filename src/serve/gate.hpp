#pragma once
// Inside http.cpp: what bounds a client before and around libmicrohttpd (http.hpp HttpLimits).
//
// The server accepts connections itself and hands each to libmicrohttpd (MHD_add_connection),
// which then reads and answers its requests in a fixed pool of event-loop threads. libmicrohttpd
// bounds what a request may hold in memory and closes a connection that is silent for the idle
// timeout, but a client that sends a byte every second is never silent: the Gate keeps, per
// connection, the time by which its current step must be done (the request's line and headers,
// over TLS the handshake before them; then its answer), and cuts a connection that is late by
// shutdown(2) of its socket, which libmicrohttpd then sees as the client gone and closes. An
// entry is removed when libmicrohttpd says the connection closed, before it closes the socket,
// under the Gate's lock: a socket is never shut after it was closed (and its number reused).
//
// The Gate also keeps what libmicrohttpd has no word for: the connections each client address
// holds (one over its share is told 503 at once, without a worker's time), the number held in
// all (at the limit the server stops accepting and the kernel's backlog holds the rest), and a
// new connection until its first byte: the wait for the request to start is the idle timeout
// to the millisecond, its headers' deadline starts there, and on a TLS port that byte tells a
// plain HTTP request (answered 400, as Go's servers do) from a handshake.
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "serve/http.hpp"

namespace dltune::serve::detail {

class Gate {
 public:
  using Clock = std::chrono::steady_clock;

  // One connection, from accept(2) until libmicrohttpd says it closed.
  struct Connection {
    int fd = -1;
    std::uint64_t serial = 0;
    std::string address;
    sockaddr_storage peer{};
    socklen_t peer_len = 0;
    // Before its first byte: the Gate's, not yet libmicrohttpd's.
    bool pending = false;
    bool started = false;  // libmicrohttpd has it (its "started" notice came)
    bool cut = false;      // shut down at its deadline
    Clock::time_point deadline;
    std::size_t requests = 0;  // started on it so far
    // What the connection's TLS session uses (the credentials of tls_context.hpp), kept until
    // it closes.
    std::shared_ptr<const void> keep;
  };

  // `hand_over` gives an admitted socket to libmicrohttpd; false when it refused it (it has
  // closed the socket then).
  Gate(const HttpLimits& limits, bool tls,
       std::function<bool(int fd, const sockaddr* peer, socklen_t len)> hand_over);
  ~Gate();
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  // Accepts from the non-blocking `listen_fd` and keeps the deadlines until stop(); then closes
  // the sockets that were never handed over. The caller stops libmicrohttpd afterwards.
  void run(int listen_fd);
  void stop();

  // libmicrohttpd's notices, from its threads. started: the connection on `fd` (null when the
  // Gate does not know it). closed: before libmicrohttpd closes the socket.
  Connection* started(int fd);
  void closed(Connection* c);
  // A request's line and headers have arrived: its answer has the request deadline. Returns the
  // number of requests on the connection, this one included.
  std::size_t request_started(Connection& c);
  // A request was answered: the next must come within the idle timeout, its headers soon after.
  void request_done(Connection& c);
  // Connections held now.
  [[nodiscard]] std::size_t held() const;

 private:
  void admit(int fd, const sockaddr_storage& peer, socklen_t len);
  void hand_over(Connection& c);
  // The first byte of a pending connection has come (or the client left).
  void first_byte(int fd);
  // Cuts what is late; the earliest deadline left (none: time_point::max()).
  Clock::time_point expire();
  // Forgets `fd`'s entry and gives back its address's slot (under mu_).
  void release(std::map<int, std::unique_ptr<Connection>>::iterator it);
  void wake();

  const HttpLimits limits_;
  const bool tls_;
  const std::size_t per_address_;
  std::function<bool(int, const sockaddr*, socklen_t)> hand_over_;
  mutable std::mutex mu_;
  std::map<int, std::unique_ptr<Connection>> connections_;  // by socket
  std::map<std::string, std::size_t> per_address_held_;
  std::uint64_t next_serial_ = 0;
  int wake_fd_ = -1;  // an eventfd: stop(), and a slot given back while at the limit
  bool stopping_ = false;
};

}  // namespace dltune::serve::detail
