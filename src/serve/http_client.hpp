#pragma once
// One HTTP(S) GET from the program to a server of the user's (Prometheus's HTTP API for `dltune
// slurm report`). The URL is parsed here, in the program, so that a bad one is said before
// anything is asked; the request goes through the HTTP module (http_module.hpp), which holds
// cpp-httplib and OpenSSL, so that commands that ask nothing load neither.
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace dltune::serve {

struct HttpUrl {
  bool tls = false;            // https
  std::string host;            // without IPv6 brackets
  int port = 0;                // 80 or 443 when the URL names none
  std::string prefix;          // the path, without its last '/' ("" or "/prometheus")
  std::string user, password;  // from "user:password@" (percent-decoded), for basic auth
  // "http://host:port/prefix", without the credentials: for messages.
  [[nodiscard]] std::string text() const;
};

// "http://HOST[:PORT][/PATH]" or "https://..."; HOST a name, an IPv4 address or "[IPv6]";
// "USER:PASSWORD@" before HOST for basic auth. Anything else (another scheme, a query or
// fragment, a port outside 1 to 65535, spaces) is an error that names what was expected.
[[nodiscard]] Result<HttpUrl> parse_http_url(std::string_view text);

struct HttpGet {
  HttpUrl url;
  std::string path;  // after the URL's prefix: "/api/v1/query"
  std::vector<std::pair<std::string, std::string>> params;  // the query string, encoded here
  std::chrono::milliseconds timeout{10000};                 // to connect, and each read
  std::string ca_file;  // for https: the CAs to trust; empty: the system's
};

struct HttpReply {
  int status = 0;
  std::string body;
};

// The server's answer, whatever its status; an error only when none came (the connection was
// refused, timed out, or its certificate did not verify), naming the URL and why. It lives in
// the HTTP module: the program calls it as http_module()->get.
[[nodiscard]] Result<HttpReply> http_get(const HttpGet& request);
using HttpGetFn = Result<HttpReply> (*)(const HttpGet& request);

}  // namespace dltune::serve
