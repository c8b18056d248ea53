#pragma once
// The TLS side of serve, from the web config's tls_server_config, in GnuTLS (the TLS library
// libmicrohttpd speaks): the credentials a connection's session gets, and their reload when the
// files are renewed on disk.
#include <gnutls/gnutls.h>

#include <sys/stat.h>

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.hpp"
#include "serve/web_config.hpp"

namespace dltune::serve {

// GnuTLS's priority string for the web config's versions and cipher preference, e.g.
// "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE" (the syntax: GnuTLS manual,
// "Priority strings"). Debian's GnuTLS may still refuse TLS 1.0 and 1.1 by its system policy.
[[nodiscard]] std::string tls_priorities(const TlsServerConfig& tls);

// The certificate chain and key, and the client CAs, as the files held them when read.
struct TlsFiles {
  std::string cert_pem, key_pem, client_ca_pem;
};
// Reads the files tls_server_config names; the error names `file`, the key and the path.
[[nodiscard]] Result<TlsFiles> read_tls_files(const TlsServerConfig& tls, const std::string& file);

// One loading of the files, as GnuTLS credentials, and the client-certificate policy.
class TlsCredentials {
 public:
  // The error names `file`, the key (cert_file, key_file, client_ca_file), the path and GnuTLS's
  // reason: a certificate that does not parse, a key that is not cert_file's, a CA file without
  // a certificate.
  [[nodiscard]] static Result<std::shared_ptr<const TlsCredentials>> load(
      const TlsServerConfig& tls, const std::string& file, const TlsFiles& files);
  ~TlsCredentials();
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;
  // Gives `session`, before its handshake, these credentials and the policy: with
  // RequireAndVerifyClientCert a client without a certificate signed by a client CA fails the
  // handshake; with VerifyClientCertIfGiven one that sends another fails it. The session must not
  // outlive this object.
  void apply(gnutls_session_t session) const;

 private:
  TlsCredentials() = default;
  gnutls_certificate_credentials_t cred_ = nullptr;
  ClientAuth client_auth_ = ClientAuth::kNoClientCert;
};

// The credentials new connections get, loaded again when the files of tls_server_config change
// on disk (a certificate renewed: certbot and cert-manager replace the files, a Kubernetes
// Secret's mount swaps a link), as exporter-toolkit reads them again for new connections.
// Looked at (stat(2) of cert_file, key_file and client_ca_file) when a connection comes, at
// most once a second. A change that does not load (a file half written, a key that serve's
// user cannot read once it has dropped root) keeps the credentials that were serving; each such
// change is said once on stderr, as is each reload. Connections keep the credentials they
// started with.
class TlsContextReloader {
 public:
  // Loads the files now; the error names the file, the key and the reason. `files` gets what
  // was read (the daemon's own start needs the certificate and key).
  [[nodiscard]] static Result<std::unique_ptr<TlsContextReloader>> load(const TlsServerConfig& tls,
                                                                        const std::string& file,
                                                                        TlsFiles& files);
  // The credentials for a new connection. Never null.
  [[nodiscard]] std::shared_ptr<const TlsCredentials> acquire();

 private:
  TlsContextReloader() = default;
  // What stat(2) says of each file (following links): device, inode, size, change time.
  using Stamp = std::array<long long, 12>;
  [[nodiscard]] Stamp stamp() const;
  TlsServerConfig tls_;
  std::string file_;
  std::mutex mu_;
  std::shared_ptr<const TlsCredentials> current_;
  Stamp loaded_{}, refused_{};
  std::chrono::steady_clock::time_point next_look_{};
};

}  // namespace dltune::serve
