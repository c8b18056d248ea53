#pragma once
// Inside http.cpp: the pieces that bound what one client can take (http.hpp HttpLimits).
//
// cpp-httplib 0.11.4 serves a connection in Server::process_and_close_socket, a private virtual
// that SSLServer overrides the same way: it reads requests through a Stream and hands each to the
// protected Server::process_request. LimitedServer does that with a Stream of its own, which puts
// a deadline and a byte budget on each request (the library's own stream waits `read timeout`
// per read, so a client sending one byte every few seconds, or headers without end, would hold a
// worker and grow its memory for ever). Over TLS the same limits hold: the socket is then
// non-blocking, the handshake has the request's deadline, and a TLS record that arrives a byte at
// a time cannot stretch a read past it.
#include <httplib.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "serve/http.hpp"
#include "serve/tls_context.hpp"

namespace dltune::serve::detail {

// A fixed number of workers and a bounded queue. enqueue waits while the queue is full: the
// accept loop then stops accepting and new connections wait in the kernel's backlog.
// (TaskQueue::enqueue returns void in 0.11.4: a connection cannot be refused from here.)
class WorkerPool final : public httplib::TaskQueue {
 public:
  WorkerPool(std::size_t workers, std::size_t queued);
  ~WorkerPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;  // runs what is queued, then joins

 private:
  void work();
  std::mutex mu_;
  std::condition_variable has_work_, has_room_;
  std::deque<std::function<void()>> queue_;
  std::size_t max_queued_;
  bool shutting_down_ = false;
  std::vector<std::thread> threads_;
};

// One connection's socket, read through a small buffer; over TLS when `ssl` is given (set on
// `fd`, whose handshake accept_tls() does).
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int fd, const HttpLimits& limits, SSL* ssl = nullptr);
  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

  // Waits up to the idle timeout for the next request to start; false when the client closed,
  // stayed silent, or `running` turned false (the server is stopping).
  bool wait_for_request(const std::function<bool()>& running);
  // TLS: waits up to the idle timeout for the client's first bytes, answers a plain HTTP request
  // 400 (as Go's servers do: "Client sent an HTTP request to an HTTPS server."), then does the
  // handshake within the request deadline. False when the connection is of no use.
  bool accept_tls(const std::function<bool()>& running);
  // A new request: a fresh deadline and byte budget.
  void begin_request();
  // The request ran out of its budget or its deadline: the connection must end (and may have
  // unread input).
  [[nodiscard]] bool spent() const { return spent_; }
  // A read or write failed or timed out: the connection is of no more use.
  [[nodiscard]] bool broken() const { return broken_; }
  // Before closing a connection that may have unread input (a body, a long request): stop
  // sending, then read and drop a little of what the client still sends, so that the kernel
  // closes with a FIN and the client gets to read the answer instead of a reset.
  void drain();

 private:
  // poll(2) for `events` up to `timeout` and the deadline (for POLLIN the read deadline): > 0
  // ready, 0 timed out, < 0 error.
  int wait(short events, std::chrono::milliseconds timeout) const;
  std::chrono::milliseconds left() const;
  std::chrono::milliseconds read_left() const;
  // One read from the socket or the TLS connection: > 0 bytes, 0 the end, -1 failed or timed out.
  ssize_t receive(char* to, std::size_t size);
  ssize_t timed_out();
  // Over TLS: what an SSL call's error asks to wait for (POLLIN, POLLOUT), 0 for a real error.
  short wanted(int rc) const;

  int fd_;
  const HttpLimits& limits_;
  SSL* ssl_;
  char buf_[4096];
  std::size_t pos_ = 0, len_ = 0;
  std::size_t budget_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  // Reads (the request line and headers, the handshake) end by this, before deadline_.
  std::chrono::steady_clock::time_point read_deadline_;
  bool spent_ = false;
  bool broken_ = false;
};

// Called by a handler that answered a request whose input was not read (a body, a method that
// is not served): the connection ends after this answer. Per worker thread.
void close_after_this_request();

// The connections each client address holds (HttpLimits::connections_per_address).
class AddressSlots {
 public:
  explicit AddressSlots(const HttpLimits& limits);
  // A slot for the peer of `sock`, whose address goes to `address`; false when that address
  // holds its most already (or the peer is unknown: the socket is gone).
  bool take(int sock, std::string& address);
  void give_back(const std::string& address);

 private:
  std::mutex mu_;
  std::map<std::string, std::size_t> held_;
  std::size_t max_;
};

// A connection over its address's share: a plain one is told 503 (written without waiting),
// a TLS one closed; either way at once, without a worker's time.
void refuse_connection(int sock, bool tls);

// One connection, its requests one after another within the limits: `process` answers one
// request (Server::process_request), `running` turns false when the server stops. `ssl`: the
// connection's TLS state, which this frees, or null for plain HTTP.
bool serve_connection(
    int sock, const HttpLimits& limits, SSL* ssl, const std::function<bool()>& running,
    const std::function<bool(httplib::Stream&, bool last, bool& closed)>& process);

// httplib::Server, or httplib::SSLServer (its context unused: set_reloader gives the one each
// connection takes), with connections served by serve_connection.
template <class Base>
class Limited final : public Base {
 public:
  template <class... Args>
  explicit Limited(const HttpLimits& limits, Args&&... args)
      : Base(std::forward<Args>(args)...), limits_(limits) {}

 private:
  bool process_and_close_socket(socket_t sock) override {
    constexpr bool kTls = std::is_base_of_v<httplib::SSLServer, Base>;
    std::string address;
    if (!slots_.take(sock, address)) {
      refuse_connection(sock, kTls);
      return false;
    }
    struct Slot {
      AddressSlots& slots;
      const std::string& address;
      ~Slot() { slots.give_back(address); }
    } slot{slots_, address};
    SSL* ssl = nullptr;
    if constexpr (std::is_base_of_v<httplib::SSLServer, Base>) {
      SSL_CTX* ctx = reloader_->acquire();
      ssl = ::SSL_new(ctx);
      ::SSL_CTX_free(ctx);  // the SSL holds its own reference
      if (ssl == nullptr || ::SSL_set_fd(ssl, sock) != 1) {
        if (ssl != nullptr) ::SSL_free(ssl);
        ::close(sock);
        return false;
      }
    }
    // svr_sock_ is the listening socket; the library sets it invalid when stop() is called.
    return serve_connection(
        sock, limits_, ssl, [this] { return this->svr_sock_ != INVALID_SOCKET; },
        [this](httplib::Stream& strm, bool last, bool& closed) {
          return this->process_request(strm, last, closed, nullptr);
        });
  }
  HttpLimits limits_;
  AddressSlots slots_{limits_};
  std::unique_ptr<TlsContextReloader> reloader_;

 public:
  // TLS: connections take their context from `r` (the certificate reloaded when renewed); set
  // before the server runs.
  void set_reloader(std::unique_ptr<TlsContextReloader> r) { reloader_ = std::move(r); }
};
using LimitedServer = Limited<httplib::Server>;
using LimitedTlsServer = Limited<httplib::SSLServer>;

}  // namespace dltune::serve::detail
