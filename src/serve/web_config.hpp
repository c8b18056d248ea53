#pragma once
// `serve --web-config FILE`: the web configuration file of Prometheus's exporter-toolkit, the one
// node_exporter takes with --web.config.file (docs/web-configuration.md in
// github.com/prometheus/exporter-toolkit), so that a host's existing file and habits carry over:
// TLS (tls_server_config), basic auth with bcrypt hashes (basic_auth_users), response headers
// (http_server_config.headers) and a request rate limit (rate_limit).
//
// Stricter than the toolkit where leniency would hide a mistake: an unknown key, a key given
// twice, a value of the wrong kind, a documented key dltune does not implement (inline PEM,
// cipher suites, curves, client SANs) and a client-auth policy that accepts a certificate without
// verifying it are each refused, naming FILE:LINE, the key and what was expected. As the toolkit
// does, relative paths are relative to the file's own directory. The file is read once, at start
// (the toolkit reads it on every request); the certificate files it names are read again when
// they change on disk (tls_context.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace dltune::serve {

// Go's crypto/tls names for them, as the toolkit's client_auth_type takes them. RequestClientCert
// and RequireAnyClientCert (which take a certificate without verifying it) are refused.
enum class ClientAuth { kNoClientCert, kVerifyClientCertIfGiven, kRequireAndVerifyClientCert };
// "TLS10" .. "TLS13".
enum class TlsVersion { kTls10, kTls11, kTls12, kTls13 };
[[nodiscard]] const char* tls_version_name(TlsVersion v);

struct TlsServerConfig {
  // Absolute, or relative to the directory serve was started in when the file's own path was.
  std::string cert_file, key_file, client_ca_file;  // client_ca_file: empty when not given
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  TlsVersion min_version = TlsVersion::kTls12;  // the toolkit's default
  std::optional<TlsVersion> max_version;        // none: the newest OpenSSL has (TLS 1.3)
  bool prefer_server_cipher_suites = true;
};

struct RateLimit {
  std::int64_t interval_ns = 0;  // one request per interval on average; 0: no limit
  int burst = 0;                 // and up to this many at once
};

struct WebConfig {
  std::string file;  // as given, for messages
  std::optional<TlsServerConfig> tls;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
  // http_server_config.headers: added to every response (empty values left out).
  std::vector<std::pair<std::string, std::string>> headers;
  RateLimit rate_limit;

  // Something asks who the client is: basic auth, or a verified client certificate.
  [[nodiscard]] bool authenticates() const {
    return !basic_auth_users.empty() ||
           (tls && tls->client_auth == ClientAuth::kRequireAndVerifyClientCert);
  }
};

// The file's text: `file` names it in errors ("web.yml:7: tls_server_config.min_version:
// expected TLS10, TLS11, TLS12 or TLS13, not 'TLS14'"), `dir` is where its relative paths start.
// Pure: no file is opened.
[[nodiscard]] Result<WebConfig> parse_web_config(std::string_view text, const std::string& file,
                                                 const std::string& dir);
// A regular file's text, opened without blocking (a FIFO or a device is refused at once), at
// most `max` bytes. 0, or errno's value: EINVAL for a file that is not regular, EFBIG for a
// larger one.
[[nodiscard]] int read_regular_file(const std::string& path, std::size_t max, std::string& text);
// Reads `path` and parses it, then checks that each file it names can be read (the certificate,
// the key and the client CA are loaded later, by the server; this says early which is missing).
[[nodiscard]] Result<WebConfig> load_web_config(const std::string& path);

}  // namespace dltune::serve
