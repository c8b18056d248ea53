#pragma once
// The HTTP side of `dltune serve`: GET /metrics, /healthz and /, nothing else, on cpp-httplib
// (Debian's 0.11.4), with limits so that a slow or hostile client cannot take the threads or the
// memory: a fixed pool of workers with a bounded queue (when it is full the accept loop waits and
// the kernel's backlog holds the rest), a deadline and a byte budget per request, and a short
// wait for the next request on a kept-alive connection. With a web configuration (web_config.hpp)
// the same server speaks TLS (OpenSSL through cpp-httplib's SSLServer), asks for basic auth on
// every path, adds its headers and limits the request rate.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "serve/exporter.hpp"
#include "serve/web_config.hpp"

namespace dltune::serve {

struct ListenAddress {
  std::string host;  // as given, without IPv6 brackets: "127.0.0.1", "::1", "localhost"
  int port = 9464;
  // "127.0.0.1:9464", "[::1]:9464"
  [[nodiscard]] std::string text() const;
};

// "HOST:PORT" with an IPv4 address, a name, or "[IPv6]"; PORT 0 to 65535 (0: any free port).
[[nodiscard]] Result<ListenAddress> parse_listen(std::string_view text);
// 127.0.0.0/8, ::1 and "localhost": only this machine can connect.
[[nodiscard]] bool is_loopback(const ListenAddress& a);

// What serve says once at start about who can read it, or nothing: on loopback nothing; off
// loopback, without a web config (or with one that asks for no password and no client
// certificate), who can read what and the fix; with basic auth but no TLS, that passwords cross
// the network in clear text.
[[nodiscard]] std::optional<std::string> exposure_warning(const ListenAddress& a,
                                                          const WebConfig* web);

struct HttpLimits {
  std::size_t workers = 8;  // connections served at once (--max-connections)
  std::size_t queued = 8;   // accepted connections waiting for a worker
  // How long a new connection may take to start its request, and a kept-alive one to start the
  // next: an idle connection holds a worker, so this is short.
  std::chrono::milliseconds idle_timeout{2000};
  // A request must be read and answered within this, whatever the client's pace.
  std::chrono::milliseconds request_deadline{10000};
  std::chrono::milliseconds io_timeout{5000};  // one read or write
  std::size_t requests_per_connection = 100;
  // Request line and headers together; no endpoint takes a body. A longer request line is
  // answered 414, longer headers 400, and the connection is closed.
  std::size_t max_request_bytes = 16384;
};

class MetricsServer {
 public:
  // Binds now (so the port is known and a bad address fails before anything starts). With
  // `web`, loads its certificate, key and client CA now too (as root, before serve drops it: a
  // key is usually readable by root alone); an error names the file and OpenSSL's reason.
  [[nodiscard]] static Result<std::unique_ptr<MetricsServer>> bind(const ListenAddress& address,
                                                                   const HttpLimits& limits,
                                                                   Exporter& exporter,
                                                                   const WebConfig* web = nullptr);
  ~MetricsServer();
  // The address bound, with the port chosen when 0 was asked for.
  [[nodiscard]] const ListenAddress& bound() const { return bound_; }
  // Serves until stop() (from another thread).
  void run();
  [[nodiscard]] bool running() const;
  void stop();

 private:
  MetricsServer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ListenAddress bound_;
};

}  // namespace dltune::serve
