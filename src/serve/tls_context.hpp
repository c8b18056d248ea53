#pragma once
// The OpenSSL context of serve's TLS side, from the web config's tls_server_config.
#include <openssl/ssl.h>

#include <sys/stat.h>

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.hpp"
#include "serve/web_config.hpp"

namespace dltune::serve {

// Sets up `ctx` (which cpp-httplib's SSLServer creates and owns): TLS versions, the certificate
// chain and its key, and the client-certificate policy with its CAs. False with `error` set,
// naming `file`, the key, the file it names and OpenSSL's reason.
[[nodiscard]] bool configure_tls_context(SSL_CTX& ctx, const TlsServerConfig& tls,
                                         const std::string& file, std::string& error);

// The TLS context new connections get, loaded again when the files of tls_server_config change
// on disk (a certificate renewed: certbot and cert-manager replace the files, a Kubernetes
// Secret's mount swaps a link), as exporter-toolkit reads them again for new connections.
// Looked at (stat(2) of cert_file, key_file and client_ca_file) when a connection comes, at
// most once a second. A change that does not load (a file half written, a key that serve's
// user cannot read once it has dropped root) keeps the context that was serving; each such
// change is said once on stderr, as is each reload.
class TlsContextReloader {
 public:
  // Loads the files now; the error names the file, the key and OpenSSL's reason.
  [[nodiscard]] static Result<std::unique_ptr<TlsContextReloader>> load(const TlsServerConfig& tls,
                                                                        const std::string& file);
  ~TlsContextReloader();
  TlsContextReloader(const TlsContextReloader&) = delete;
  TlsContextReloader& operator=(const TlsContextReloader&) = delete;
  // The context for a new connection, a reference of the caller's: SSL_CTX_free it once SSL_new
  // has taken its own. Never null.
  [[nodiscard]] SSL_CTX* acquire();

 private:
  TlsContextReloader() = default;
  // What stat(2) says of each file (following links): device, inode, size, change time.
  using Stamp = std::array<long long, 12>;
  [[nodiscard]] Stamp stamp() const;
  [[nodiscard]] SSL_CTX* build(std::string& error) const;
  TlsServerConfig tls_;
  std::string file_;
  std::mutex mu_;
  SSL_CTX* ctx_ = nullptr;
  Stamp loaded_{}, refused_{};
  std::chrono::steady_clock::time_point next_look_{};
};

}  // namespace dltune::serve
