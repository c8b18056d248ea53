// serve's TLS credentials (tls_context.hpp), in GnuTLS.
#include "serve/tls_context.hpp"

#include <gnutls/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/core.h>

namespace dltune::serve {

namespace {

const char* gnutls_version_name(TlsVersion v) {
  switch (v) {
    case TlsVersion::kTls10:
      return "VERS-TLS1.0";
    case TlsVersion::kTls11:
      return "VERS-TLS1.1";
    case TlsVersion::kTls12:
      return "VERS-TLS1.2";
    case TlsVersion::kTls13:
      return "VERS-TLS1.3";
  }
  return "VERS-TLS1.2";
}

gnutls_datum_t datum(const std::string& s) {
  return {reinterpret_cast<unsigned char*>(const_cast<char*>(s.data())),
          static_cast<unsigned int>(s.size())};
}

}  // namespace

std::string tls_priorities(const TlsServerConfig& tls) {
  std::string p = "NORMAL:-VERS-ALL";
  const auto newest = static_cast<int>(tls.max_version.value_or(TlsVersion::kTls13));
  for (int v = newest; v >= static_cast<int>(tls.min_version); --v)
    p += std::string(":+") + gnutls_version_name(static_cast<TlsVersion>(v));
  if (tls.prefer_server_cipher_suites) p += ":%SERVER_PRECEDENCE";
  return p;
}

Result<TlsFiles> read_tls_files(const TlsServerConfig& tls, const std::string& file) {
  TlsFiles files;
  const std::tuple<const char*, const std::string*, std::string*> wanted[] = {
      {"cert_file", &tls.cert_file, &files.cert_pem},
      {"key_file", &tls.key_file, &files.key_pem},
      {"client_ca_file", &tls.client_ca_file, &files.client_ca_pem}};
  for (const auto& [key, path, text] : wanted) {
    if (path->empty()) continue;
    const int err = read_regular_file(*path, 4 << 20, *text);
    if (err == EINVAL)
      return fail(fmt::format("{}: tls_server_config.{} {}: not a regular file", file, key, *path));
    if (err == EFBIG)
      return fail(fmt::format("{}: tls_server_config.{} {}: larger than 4 MiB", file, key, *path));
    if (err != 0)
      return fail(fmt::format("{}: tls_server_config.{}: cannot read", file, key), *path, err);
  }
  return files;
}

Result<std::shared_ptr<const TlsCredentials>> TlsCredentials::load(const TlsServerConfig& tls,
                                                                   const std::string& file,
                                                                   const TlsFiles& files) {
  const auto failed = [&](const char* key, const std::string& path, const std::string& what,
                          int rc) {
    return fail(fmt::format("{}: tls_server_config.{} {}: {}: {}", file, key, path, what,
                            ::gnutls_strerror(rc)));
  };
  // Parsed one by one first, so that an error names the file that holds it.
  {
    gnutls_x509_crt_t* chain = nullptr;
    unsigned int n = 0;
    const auto cert = datum(files.cert_pem);
    const int rc = ::gnutls_x509_crt_list_import2(&chain, &n, &cert, GNUTLS_X509_FMT_PEM,
                                                  GNUTLS_X509_CRT_LIST_FAIL_IF_UNSORTED);
    for (unsigned int i = 0; i < n; ++i) ::gnutls_x509_crt_deinit(chain[i]);
    ::gnutls_free(chain);
    if (rc < 0) return failed("cert_file", tls.cert_file, "cannot load the certificate (PEM)", rc);
    if (n == 0)
      return failed("cert_file", tls.cert_file, "holds no certificate (PEM)",
                    GNUTLS_E_NO_CERTIFICATE_FOUND);
  }
  {
    gnutls_x509_privkey_t key = nullptr;
    ::gnutls_x509_privkey_init(&key);
    const auto pem = datum(files.key_pem);
    const int rc =
        ::gnutls_x509_privkey_import2(key, &pem, GNUTLS_X509_FMT_PEM, nullptr, GNUTLS_PKCS_PLAIN);
    ::gnutls_x509_privkey_deinit(key);
    if (rc < 0)
      return failed("key_file", tls.key_file, "cannot load the key (PEM, unencrypted)", rc);
  }
  std::shared_ptr<TlsCredentials> c(new TlsCredentials());
  c->client_auth_ = tls.client_auth;
  if (const int rc = ::gnutls_certificate_allocate_credentials(&c->cred_); rc < 0)
    return fail(fmt::format("{}: cannot make TLS credentials: {}", file, ::gnutls_strerror(rc)));
  const auto cert = datum(files.cert_pem);
  const auto key = datum(files.key_pem);
  if (const int rc = ::gnutls_certificate_set_x509_key_mem2(c->cred_, &cert, &key,
                                                            GNUTLS_X509_FMT_PEM, nullptr, 0);
      rc < 0)
    return failed("key_file", tls.key_file,
                  rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH
                      ? "is not the key of cert_file's certificate"
                      : "cannot be used with cert_file's certificate",
                  rc);
  if (tls.client_auth != ClientAuth::kNoClientCert) {
    const auto ca = datum(files.client_ca_pem);
    const int n = ::gnutls_certificate_set_x509_trust_mem(c->cred_, &ca, GNUTLS_X509_FMT_PEM);
    if (n < 0)
      return failed("client_ca_file", tls.client_ca_file, "cannot load the CA certificates", n);
    if (n == 0)
      return failed("client_ca_file", tls.client_ca_file, "holds no CA certificate",
                    GNUTLS_E_NO_CERTIFICATE_FOUND);
  }
  return std::shared_ptr<const TlsCredentials>(std::move(c));
}

TlsCredentials::~TlsCredentials() {
  if (cred_ != nullptr) ::gnutls_certificate_free_credentials(cred_);
}

void TlsCredentials::apply(gnutls_session_t session) const {
  ::gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, cred_);
  if (client_auth_ == ClientAuth::kNoClientCert) {
    ::gnutls_certificate_server_set_request(session, GNUTLS_CERT_IGNORE);
    return;
  }
  // The client CAs' names go to the client in the certificate request, so that it picks a
  // matching certificate; the handshake verifies what it sends against them.
  ::gnutls_certificate_server_set_request(
      session, client_auth_ == ClientAuth::kRequireAndVerifyClientCert ? GNUTLS_CERT_REQUIRE
                                                                       : GNUTLS_CERT_REQUEST);
  ::gnutls_session_set_verify_cert(session, nullptr, 0);
}

Result<std::unique_ptr<TlsContextReloader>> TlsContextReloader::load(const TlsServerConfig& tls,
                                                                     const std::string& file,
                                                                     TlsFiles& files) {
  std::unique_ptr<TlsContextReloader> r(new TlsContextReloader());
  r->tls_ = tls;
  r->file_ = file;
  r->loaded_ = r->stamp();
  auto read = read_tls_files(tls, file);
  if (!read) return tl::unexpected(read.error());
  auto c = TlsCredentials::load(tls, file, *read);
  if (!c) return tl::unexpected(c.error());
  r->current_ = std::move(*c);
  files = std::move(*read);
  r->next_look_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  return r;
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

std::shared_ptr<const TlsCredentials> TlsContextReloader::acquire() {
  const std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now < next_look_) return current_;
  next_look_ = now + std::chrono::seconds(1);
  const Stamp s = stamp();
  if (s == loaded_ || s == refused_) return current_;
  auto read = read_tls_files(tls_, file_);
  Result<std::shared_ptr<const TlsCredentials>> fresh =
      read ? TlsCredentials::load(tls_, file_, *read) : tl::unexpected(read.error());
  if (fresh) {
    current_ = std::move(*fresh);  // connections that have the old ones keep them
    loaded_ = s;
    refused_ = {};
    std::fprintf(
        stderr, "%s\n",
        fmt::format("dltune serve: loaded the renewed certificate ({})", tls_.cert_file).c_str());
  } else {
    refused_ = s;
    std::fprintf(stderr, "%s\n",
                 fmt::format("dltune serve: the certificate files changed but do not load, so "
                             "the ones loaded before are still served: {}",
                             fresh.error().message())
                     .c_str());
  }
  return current_;
}

}  // namespace dltune::serve
