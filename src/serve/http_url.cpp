// The URL of a server the program asks (http_client.hpp).
#include <charconv>

#include <fmt/core.h>

#include "serve/http_client.hpp"

namespace dltune::serve {

namespace {

constexpr const char* kExpected = "expected http://HOST[:PORT][/PATH] or https://...";

Result<std::string> percent_decode(std::string_view s, std::string_view whole) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size() ||
        std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr != s.data() + i + 3)
      return fail(fmt::format("URL '{}': a bad %-escape in its credentials", whole));
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

}  // namespace

std::string HttpUrl::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}{}", tls ? "https" : "http", v6 ? "[" : "", host, v6 ? "]" : "",
                     port, prefix);
}

Result<HttpUrl> parse_http_url(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return fail(fmt::format("URL '{}': {} ({})", text, why, kExpected));
  };
  HttpUrl u;
  std::string_view rest = text;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    u.tls = true;
    rest.remove_prefix(8);
  } else {
    return bad("no http:// or https:// at its start");
  }
  for (const char c : text)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return bad("a space or control byte");
  if (text.find_first_of("?#") != std::string_view::npos) return bad("a query or fragment");
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const auto userinfo = authority.substr(0, at);
    authority.remove_prefix(at + 1);
    const auto colon = userinfo.find(':');
    auto user = percent_decode(userinfo.substr(0, colon), text);
    if (!user) return tl::unexpected(user.error());
    u.user = std::move(*user);
    if (colon != std::string_view::npos) {
      auto password = percent_decode(userinfo.substr(colon + 1), text);
      if (!password) return tl::unexpected(password.error());
      u.password = std::move(*password);
    }
  }
  std::string_view port;
  if (authority.starts_with("[")) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address without its ']'");
    u.host = std::string(authority.substr(1, close - 1));
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad("something after the IPv6 address's ']'");
      port = after.substr(1);
      if (port.empty()) return bad("':' and no port");
    }
  } else {
    const auto colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return bad("':' and no port");
    }
    if (u.host.find(':') != std::string::npos) return bad("an IPv6 address without [brackets]");
  }
  if (u.host.empty()) return bad("no host");
  u.port = u.tls ? 443 : 80;
  if (!port.empty()) {
    int p = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535)
      return bad(fmt::format("port '{}' is not a number from 1 to 65535", port));
    u.port = p;
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  u.prefix = std::string(path);
  return u;
}

}  // namespace dltune::serve
