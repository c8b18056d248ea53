#pragma once
// The HTTP side of `dltune serve`: GET /metrics, /healthz and /, nothing else, on libmicrohttpd
// (Debian's 0.9.75) through its public interface: a fixed pool of event-loop threads serves
// every connection, so a slow client holds no thread. Around it (gate.hpp) the server accepts
// connections itself, with limits so that a slow or hostile client cannot take the connections
// or the memory: a number of connections in all and per client address, a deadline for each
// request's headers and answer whatever the client's pace, and a short wait for the next
// request on a kept-alive connection. With a web configuration (web_config.hpp) the same server
// speaks TLS (GnuTLS, through libmicrohttpd), asks for basic auth on every path, adds its headers
// and limits the request rate.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "serve/listen.hpp"
#include "serve/metrics_source.hpp"
#include "serve/web_config.hpp"

namespace dltune::serve {

struct HttpLimits {
  // Connections held at once (--max-connections); at the limit the server stops accepting and
  // the kernel's listen backlog holds the rest.
  std::size_t workers = 8;
  // How long a new connection may take to start its request, and a kept-alive one to start the
  // next (libmicrohttpd's idle timeout, in whole seconds): short, since an idle connection holds
  // one of the connections above.
  std::chrono::milliseconds idle_timeout{2000};
  // A request must be answered within this once its headers are in, whatever the client's pace.
  std::chrono::milliseconds request_deadline{10000};
  // Its request line and headers (and over TLS the handshake before them) must arrive within
  // this after it starts: a scraper sends them in one packet, a client that drips them is cut
  // off early.
  std::chrono::milliseconds header_deadline{2000};
  // Connections one client address may hold at once (0: half of workers, at least one): a
  // client that opens many slow ones cannot take every connection from the others (the
  // scraper).
  std::size_t connections_per_address = 0;
  std::size_t requests_per_connection = 100;
  // Request line and headers together; no endpoint takes a body. A longer request line is
  // answered 414, longer headers 431, and the connection is closed.
  std::size_t max_request_bytes = 16384;
};

// A bound server. The program drives it through these calls alone, since its code lives in the
// HTTP module (http_module.hpp) that the program loads when serve starts.
class MetricsServer {
 public:
  virtual ~MetricsServer() = default;
  // The address bound, with the port chosen when 0 was asked for.
  [[nodiscard]] virtual const ListenAddress& bound() const = 0;
  // Serves until stop() (from another thread).
  virtual void run() = 0;
  [[nodiscard]] virtual bool running() const = 0;
  virtual void stop() = 0;
};

// Binds now (so the port is known and a bad address fails before anything starts). With `web`,
// loads its certificate, key and client CA now too (as root, before serve drops it: a key is
// usually readable by root alone); an error names the file and GnuTLS's reason. `source` must
// outlive the server.
[[nodiscard]] Result<std::unique_ptr<MetricsServer>> bind_metrics_server(
    const ListenAddress& address, const HttpLimits& limits, MetricsSource& source,
    const WebConfig* web = nullptr);

}  // namespace dltune::serve
