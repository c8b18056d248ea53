// Where serve listens, and what it says about who can reach it (listen.hpp).
#include "serve/listen.hpp"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>

#include <fmt/core.h>

namespace dltune::serve {

std::string ListenAddress::text() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

Result<ListenAddress> parse_listen(std::string_view text) {
  const auto bad = [&] {
    return fail("expected HOST:PORT (127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464 or :9464), not",
                "--listen '" + std::string(text) + "'");
  };
  ListenAddress a;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return bad();
    a.host = std::string(text.substr(1, close - 1));
    in6_addr v6{};
    if (::inet_pton(AF_INET6, a.host.c_str(), &v6) != 1) return bad();
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad();
    // ":9464" is every address, as node_exporter writes it (the caller warns off loopback).
    a.host = colon == 0 ? "0.0.0.0" : std::string(text.substr(0, colon));
    if (a.host.find(':') != std::string::npos) return bad();  // IPv6 goes in brackets
    for (const char c : a.host)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') return bad();
    port = text.substr(colon + 1);
  }
  int p = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p < 0 || p > 65535)
    return bad();
  a.port = p;
  return a;
}

bool is_loopback(const ListenAddress& a) {
  if (a.host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, a.host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, a.host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

std::optional<std::string> exposure_warning(const ListenAddress& a, const WebConfig* web) {
  if (is_loopback(a)) return std::nullopt;
  const auto address = a.text();
  constexpr const char* kWhat =
      "anyone who can reach the port can read this host's metrics, the names of its processes "
      "and its jobs' ids";
  if (web == nullptr)
    return fmt::format(
        "{} is not a loopback address and there is no --web-config: {}. Give serve a web config "
        "(--web-config FILE, the format of node_exporter's --web.config.file) with "
        "tls_server_config and basic_auth_users, or listen on 127.0.0.1",
        address, kWhat);
  if (!web->authenticates())
    return fmt::format(
        "{} is not a loopback address and {} asks for no password and no client certificate: "
        "{}. Add basic_auth_users (bcrypt hashes) or client_auth_type "
        "RequireAndVerifyClientCert",
        address, web->file, kWhat);
  if (!web->tls)
    return fmt::format(
        "{} is not a loopback address and {} has basic_auth_users but no tls_server_config: "
        "passwords cross the network in clear text, readable by anyone on the way. Add "
        "tls_server_config (cert_file, key_file)",
        address, web->file);
  return std::nullopt;
}

}  // namespace dltune::serve
