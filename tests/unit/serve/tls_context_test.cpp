// serve's TLS credentials in GnuTLS: the priority string for the web config's versions (parsed by
// GnuTLS itself), and what loading the files refuses, each error naming the key and the file.
// The certificates are made here with GnuTLS's own API.
#include "serve/tls_context.hpp"

#include <gnutls/x509.h>
#include <gtest/gtest.h>

#include <ctime>
#include <string>

namespace dltune::serve::tls_context_test {
namespace {

std::string export_pem(int (*exporter)(void*, gnutls_x509_crt_fmt_t, gnutls_datum_t*), void* what) {
  gnutls_datum_t out{};
  if (exporter(what, GNUTLS_X509_FMT_PEM, &out) < 0) return "";
  std::string pem(reinterpret_cast<const char*>(out.data), out.size);
  ::gnutls_free(out.data);
  return pem;
}

// A self-signed certificate for CN=`name` and its key, PEM.
struct Pair {
  std::string cert, key;
};
Pair make_pair(const char* name) {
  gnutls_x509_privkey_t key = nullptr;
  gnutls_x509_crt_t crt = nullptr;
  ::gnutls_x509_privkey_init(&key);
  ::gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
  ::gnutls_x509_crt_init(&crt);
  ::gnutls_x509_crt_set_version(crt, 3);
  const unsigned char serial[] = {1};
  ::gnutls_x509_crt_set_serial(crt, serial, sizeof serial);
  const std::time_t now = std::time(nullptr);
  ::gnutls_x509_crt_set_activation_time(crt, now - 60);
  ::gnutls_x509_crt_set_expiration_time(crt, now + 86400);
  ::gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, name,
                                  static_cast<unsigned>(std::char_traits<char>::length(name)));
  ::gnutls_x509_crt_set_basic_constraints(crt, 1, -1);
  ::gnutls_x509_crt_set_key(crt, key);
  ::gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0);
  Pair p;
  p.cert = export_pem(
      [](void* c, gnutls_x509_crt_fmt_t f, gnutls_datum_t* o) {
        return ::gnutls_x509_crt_export2(static_cast<gnutls_x509_crt_t>(c), f, o);
      },
      crt);
  p.key = export_pem(
      [](void* k, gnutls_x509_crt_fmt_t f, gnutls_datum_t* o) {
        return ::gnutls_x509_privkey_export2(static_cast<gnutls_x509_privkey_t>(k), f, o);
      },
      key);
  ::gnutls_x509_crt_deinit(crt);
  ::gnutls_x509_privkey_deinit(key);
  return p;
}

TlsServerConfig config(ClientAuth auth = ClientAuth::kNoClientCert) {
  TlsServerConfig c;
  c.cert_file = "/etc/dltune/serve.crt";
  c.key_file = "/etc/dltune/serve.key";
  c.client_ca_file = auth == ClientAuth::kNoClientCert ? "" : "/etc/dltune/ca.pem";
  c.client_auth = auth;
  return c;
}

// The message of a refusal, or "" when the files loaded.
std::string refusal(const TlsServerConfig& c, const TlsFiles& files) {
  auto r = TlsCredentials::load(c, "web.yml", files);
  return r ? std::string() : r.error().message();
}

TEST(TlsPriorities, TheWebConfigsVersionsAndPreferenceInAStringGnuTlsTakes) {
  TlsServerConfig c;  // TLS12 and newer, the server's cipher order
  EXPECT_EQ(tls_priorities(c), "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE");
  c.min_version = TlsVersion::kTls13;
  c.prefer_server_cipher_suites = false;
  EXPECT_EQ(tls_priorities(c), "NORMAL:-VERS-ALL:+VERS-TLS1.3");
  c.min_version = TlsVersion::kTls10;
  c.max_version = TlsVersion::kTls12;
  EXPECT_EQ(tls_priorities(c), "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.1:+VERS-TLS1.0");
  for (const auto min : {TlsVersion::kTls10, TlsVersion::kTls12, TlsVersion::kTls13}) {
    c.min_version = min;
    c.max_version.reset();
    gnutls_priority_t p = nullptr;
    const char* where = nullptr;
    const auto text = tls_priorities(c);
    EXPECT_EQ(::gnutls_priority_init(&p, text.c_str(), &where), GNUTLS_E_SUCCESS)
        << text << " at " << (where != nullptr ? where : "?");
    if (p != nullptr) ::gnutls_priority_deinit(p);
  }
}

TEST(TlsCredentials, LoadsAPairAndRefusesEachBadFileByName) {
  const auto serve = make_pair("127.0.0.1");
  const auto other = make_pair("other");
  ASSERT_FALSE(serve.cert.empty());
  ASSERT_FALSE(serve.key.empty());
  EXPECT_EQ(refusal(config(), {serve.cert, serve.key, ""}), "");
  EXPECT_EQ(refusal(config(ClientAuth::kRequireAndVerifyClientCert),
                    {serve.cert, serve.key, other.cert + serve.cert}),
            "");

  auto said = refusal(config(), {serve.cert, other.key, ""});
  EXPECT_NE(said.find("web.yml: tls_server_config.key_file /etc/dltune/serve.key: is not the key "
                      "of cert_file's certificate"),
            std::string::npos)
      << said;
  said = refusal(config(), {"-----BEGIN CERTIFICATE-----\nnot base64\n", serve.key, ""});
  EXPECT_NE(said.find("tls_server_config.cert_file /etc/dltune/serve.crt: cannot load the "
                      "certificate (PEM)"),
            std::string::npos)
      << said;
  said = refusal(config(), {"", serve.key, ""});
  EXPECT_NE(said.find("tls_server_config.cert_file /etc/dltune/serve.crt"), std::string::npos)
      << said;
  said = refusal(config(), {serve.cert, "a key\n", ""});
  EXPECT_NE(said.find("tls_server_config.key_file /etc/dltune/serve.key: cannot load the key"),
            std::string::npos)
      << said;
  // A key is not a CA.
  said = refusal(config(ClientAuth::kVerifyClientCertIfGiven), {serve.cert, serve.key, serve.key});
  EXPECT_NE(said.find("tls_server_config.client_ca_file /etc/dltune/ca.pem: holds no CA "
                      "certificate"),
            std::string::npos)
      << said;
}

TEST(TlsCredentials, ReadingNamesTheFileThatCannotBeRead) {
  TlsServerConfig c = config();
  c.cert_file = "/nonexistent/dltune/serve.crt";
  auto files = read_tls_files(c, "web.yml");
  ASSERT_FALSE(files);
  EXPECT_NE(files.error().message().find("web.yml: tls_server_config.cert_file: cannot read"),
            std::string::npos)
      << files.error().message();
  EXPECT_NE(files.error().message().find("/nonexistent/dltune/serve.crt"), std::string::npos);
  c.cert_file = "/proc";
  files = read_tls_files(c, "web.yml");
  ASSERT_FALSE(files);
  EXPECT_NE(files.error().message().find("/proc: not a regular file"), std::string::npos)
      << files.error().message();
}

}  // namespace
}  // namespace dltune::serve::tls_context_test
