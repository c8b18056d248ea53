#pragma once
// The OpenSSL context of serve's TLS side, from the web config's tls_server_config.
#include <openssl/ssl.h>

#include <string>

#include "serve/web_config.hpp"

namespace dltune::serve {

// Sets up `ctx` (which cpp-httplib's SSLServer creates and owns): TLS versions, the certificate
// chain and its key, and the client-certificate policy with its CAs. False with `error` set,
// naming `file`, the key, the file it names and OpenSSL's reason.
[[nodiscard]] bool configure_tls_context(SSL_CTX& ctx, const TlsServerConfig& tls,
                                         const std::string& file, std::string& error);

}  // namespace dltune::serve
