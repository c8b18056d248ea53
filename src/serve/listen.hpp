#pragma once
// Where `dltune serve` listens (--listen), and what it says once at start about who can reach
// it. Part of the program itself; the server that listens is the HTTP module (http.hpp).
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
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

}  // namespace dltune::serve
