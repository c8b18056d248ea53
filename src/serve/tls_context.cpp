// serve's TLS context (tls_context.hpp).
#include "serve/tls_context.hpp"

#include <openssl/err.h>

#include <cstdio>

#include <fmt/core.h>

namespace dltune::serve {

namespace {

int openssl_version(TlsVersion v) {
  switch (v) {
    case TlsVersion::kTls10:
      return TLS1_VERSION;
    case TlsVersion::kTls11:
      return TLS1_1_VERSION;
    case TlsVersion::kTls12:
      return TLS1_2_VERSION;
    case TlsVersion::kTls13:
      return TLS1_3_VERSION;
  }
  return TLS1_2_VERSION;
}

// The oldest error OpenSSL queued (the cause; later ones are its consequences), and the queue
// emptied.
std::string openssl_reason() {
  const unsigned long e = ::ERR_get_error();
  ::ERR_clear_error();
  if (e == 0) return "no reason given";
  char text[256];
  ::ERR_error_string_n(e, text, sizeof text);
  return text;
}

}  // namespace

bool configure_tls_context(SSL_CTX& ctx, const TlsServerConfig& tls, const std::string& file,
                           std::string& error) {
  ::ERR_clear_error();
  const auto failed = [&](const char* key, const std::string& path, const std::string& what) {
    error =
        fmt::format("{}: tls_server_config.{} {}: {}: {}", file, key, path, what, openssl_reason());
    return false;
  };
  // Debian's OpenSSL (security level 2) refuses TLS 1.0 and 1.1 whatever min_version says.
  if (::SSL_CTX_set_min_proto_version(&ctx, openssl_version(tls.min_version)) != 1)
    return failed("min_version", tls_version_name(tls.min_version), "not available");
  if (tls.max_version &&
      ::SSL_CTX_set_max_proto_version(&ctx, openssl_version(*tls.max_version)) != 1)
    return failed("max_version", tls_version_name(*tls.max_version), "not available");
  long options = SSL_OP_NO_RENEGOTIATION;
  if (tls.prefer_server_cipher_suites) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  ::SSL_CTX_set_options(&ctx, static_cast<unsigned long>(options));
  if (::SSL_CTX_use_certificate_chain_file(&ctx, tls.cert_file.c_str()) != 1)
    return failed("cert_file", tls.cert_file, "cannot load the certificate (PEM)");
  if (::SSL_CTX_use_PrivateKey_file(&ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return failed("key_file", tls.key_file, "cannot load the key (PEM, unencrypted)");
  if (::SSL_CTX_check_private_key(&ctx) != 1)
    return failed("key_file", tls.key_file, "is not the key of cert_file's certificate");
  if (tls.client_auth != ClientAuth::kNoClientCert) {
    if (::SSL_CTX_load_verify_locations(&ctx, tls.client_ca_file.c_str(), nullptr) != 1)
      return failed("client_ca_file", tls.client_ca_file, "cannot load the CA certificates");
    // The CAs' names go to the client in the handshake, so that it picks a matching certificate.
    STACK_OF(X509_NAME)* names = ::SSL_load_client_CA_file(tls.client_ca_file.c_str());
    if (names == nullptr)
      return failed("client_ca_file", tls.client_ca_file, "holds no CA certificate");
    ::SSL_CTX_set_client_CA_list(&ctx, names);
    int mode = SSL_VERIFY_PEER;
    if (tls.client_auth == ClientAuth::kRequireAndVerifyClientCert)
      mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    ::SSL_CTX_set_verify(&ctx, mode, nullptr);
    // A resumed session keeps its verified client: OpenSSL needs a context id to resume one.
    static constexpr unsigned char kContext[] = "dltune serve";
    ::SSL_CTX_set_session_id_context(&ctx, kContext, sizeof kContext - 1);
  } else {
    ::SSL_CTX_set_verify(&ctx, SSL_VERIFY_NONE, nullptr);
  }
  return true;
}

Result<std::unique_ptr<TlsContextReloader>> TlsContextReloader::load(const TlsServerConfig& tls,
                                                                     const std::string& file) {
  std::unique_ptr<TlsContextReloader> r(new TlsContextReloader());
  r->tls_ = tls;
  r->file_ = file;
  r->loaded_ = r->stamp();
  std::string error;
  r->ctx_ = r->build(error);
  if (r->ctx_ == nullptr) return fail(error);
  r->next_look_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  return r;
}

TlsContextReloader::~TlsContextReloader() {
  if (ctx_ != nullptr) ::SSL_CTX_free(ctx_);
}

TlsContextReloader::Stamp TlsContextReloader::stamp() const {
  Stamp s{};
  std::size_t i = 0;
  for (const std::string* path : {&tls_.cert_file, &tls_.key_file, &tls_.client_ca_file}) {
    struct stat st {};
    if (!path->empty() && ::stat(path->c_str(), &st) == 0) {
      s[i] = static_cast<long long>(st.st_dev);
      s[i + 1] = static_cast<long long>(st.st_ino);
      s[i + 2] = static_cast<long long>(st.st_size);
      s[i + 3] = static_cast<long long>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
    }
    i += 4;
  }
  return s;
}

SSL_CTX* TlsContextReloader::build(std::string& error) const {
  SSL_CTX* ctx = ::SSL_CTX_new(::TLS_server_method());
  if (ctx == nullptr) {
    error = file_ + ": cannot make a TLS context: " + openssl_reason();
    return nullptr;
  }
  if (!configure_tls_context(*ctx, tls_, file_, error)) {
    ::SSL_CTX_free(ctx);
    return nullptr;
  }
  return ctx;
}

SSL_CTX* TlsContextReloader::acquire() {
  const std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_look_) {
    next_look_ = now + std::chrono::seconds(1);
    const Stamp s = stamp();
    if (s != loaded_ && s != refused_) {
      std::string error;
      if (SSL_CTX* fresh = build(error); fresh != nullptr) {
        ::SSL_CTX_free(ctx_);  // connections that have it keep it (each SSL holds a reference)
        ctx_ = fresh;
        loaded_ = s;
        refused_ = {};
        std::fprintf(
            stderr, "%s\n",
            fmt::format("dltune serve: loaded the renewed certificate ({})", tls_.cert_file)
                .c_str());
      } else {
        refused_ = s;
        std::fprintf(stderr, "%s\n",
                     fmt::format("dltune serve: the certificate files changed but do not load, "
                                 "so the ones loaded before are still served: {}",
                                 error)
                         .c_str());
      }
    }
  }
  ::SSL_CTX_up_ref(ctx_);
  return ctx_;
}

}  // namespace dltune::serve
