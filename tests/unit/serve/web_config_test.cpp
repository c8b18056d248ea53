// serve --web-config: the exporter-toolkit's file (a whole good one, relative paths, each bad key
// and value refused with FILE:LINE and the key), and basic auth against bcrypt hashes.
#include "serve/web_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "serve/basic_auth.hpp"
#include "serve/http.hpp"

namespace dltune::serve::web_config_test {
namespace {

// Openwall crypt_blowfish's test vectors (its wrapper.c), made by that implementation, not by
// the libcrypt under test: password "U*U" at cost 5.
constexpr const char* kUU = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
constexpr const char* kUUStar = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK";

Result<WebConfig> parse(const std::string& text) {
  return parse_web_config(text, "web.yml", "/etc/dltune");
}

// The message of a refusal, or "" when the text parsed.
std::string refusal(const std::string& text) {
  auto w = parse(text);
  return w ? std::string() : w.error().message();
}

TEST(WebConfig, ReadsTheToolkitsFileWithPathsFromItsDirectory) {
  const auto w = parse(R"(# node_exporter's web config, as its users write it
tls_server_config:
  cert_file: node.crt
  key_file: /etc/ssl/private/node.key
  client_ca_file: ca/clients.pem
  client_auth_type: RequireAndVerifyClientCert
  min_version: TLS13
  max_version: TLS13
  prefer_server_cipher_suites: false
http_server_config:
  http2: true
  headers:
    Strict-Transport-Security: max-age=31536000
    X-Frame-Options: deny
    X-Content-Type-Options: ""
basic_auth_users:
  alice: $2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze
  bob: "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
rate_limit:
  interval: 1s
  burst: 20
)");
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->file, "web.yml");
  ASSERT_TRUE(w->tls);
  EXPECT_EQ(w->tls->cert_file, "/etc/dltune/node.crt");
  EXPECT_EQ(w->tls->key_file, "/etc/ssl/private/node.key");
  EXPECT_EQ(w->tls->client_ca_file, "/etc/dltune/ca/clients.pem");
  EXPECT_EQ(w->tls->client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(w->tls->min_version, TlsVersion::kTls13);
  EXPECT_EQ(w->tls->max_version, TlsVersion::kTls13);
  EXPECT_FALSE(w->tls->prefer_server_cipher_suites);
  ASSERT_EQ(w->headers.size(), 2u);  // the empty one is unset
  EXPECT_EQ(w->headers[0],
            (std::pair<std::string, std::string>{"Strict-Transport-Security", "max-age=31536000"}));
  EXPECT_EQ(w->headers[1].first, "X-Frame-Options");
  ASSERT_EQ(w->basic_auth_users.size(), 2u);
  EXPECT_EQ(w->basic_auth_users.at("bob"), "$2b$" + std::string(kUU).substr(4));
  EXPECT_EQ(w->rate_limit.interval_ns, 1'000'000'000);
  EXPECT_EQ(w->rate_limit.burst, 20);
  EXPECT_TRUE(w->authenticates());
}

TEST(WebConfig, DefaultsAndTheEmptyFile) {
  const auto empty = parse("");
  ASSERT_TRUE(empty) << empty.error().message();
  EXPECT_FALSE(empty->tls);
  EXPECT_TRUE(empty->basic_auth_users.empty());
  EXPECT_FALSE(empty->authenticates());
  const auto tls = parse("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n");
  ASSERT_TRUE(tls) << tls.error().message();
  EXPECT_EQ(tls->tls->min_version, TlsVersion::kTls12);  // the toolkit's default
  EXPECT_FALSE(tls->tls->max_version);
  EXPECT_EQ(tls->tls->client_auth, ClientAuth::kNoClientCert);
  EXPECT_FALSE(tls->authenticates()) << "TLS alone asks nobody who they are";
  // Relative to a relative file's directory, or to where serve runs when it has none.
  const auto here =
      parse_web_config("tls_server_config: {cert_file: ../a.crt, key_file: a.key}", "web.yml", "");
  ASSERT_TRUE(here) << here.error().message();
  EXPECT_EQ(here->tls->cert_file, "../a.crt");
  EXPECT_EQ(here->tls->key_file, "a.key");
  const auto sub = parse_web_config("tls_server_config: {cert_file: ./x/../a.crt, key_file: k}",
                                    "conf/web.yml", "conf");
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->tls->cert_file, "conf/a.crt");
}

TEST(WebConfig, RefusesEachBadKeyAndValueNamingFileLineAndKey) {
  struct Case {
    std::string text, says;
  };
  const std::string tls = "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n";
  const std::vector<Case> cases = {
      {"tls_config:\n  cert_file: a\n", "web.yml:1: tls_config: unknown key (expected"},
      {"- a\n- b\n", "web.yml: expected a mapping"},
      {"tls_server_config: [\n", "not valid YAML"},
      {"tls_server_config: a.crt\n", "web.yml:1: tls_server_config: expected a mapping"},
      {"tls_server_config:\n  key_file: a.key\n",
       "web.yml:2: tls_server_config.cert_file: missing"},
      {"tls_server_config:\n  cert_file: a.crt\n", "tls_server_config.key_file: missing"},
      {"tls_server_config:\n  cert_file: \n  key_file: k\n",
       "web.yml:2: tls_server_config.cert_file: expected a file name"},
      {tls + "  certfile: b\n",
       "web.yml:4: tls_server_config.certfile: unknown key (expected "
       "cert_file, key_file"},
      {tls + "  cert_file: b\n", "web.yml:4: tls_server_config.cert_file: given twice"},
      {tls + "  cert: |\n    -----BEGIN CERTIFICATE-----\n",
       "tls_server_config.cert: inline PEM is not supported"},
      {tls + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
       "tls_server_config.cipher_suites: is not supported"},
      {tls + "  client_allowed_sans: [a]\n", "tls_server_config.client_allowed_sans: is not"},
      {tls + "  min_version: TLS14\n",
       "web.yml:4: tls_server_config.min_version: expected TLS10, TLS11, TLS12 or TLS13, not "
       "'TLS14'"},
      {tls + "  min_version: TLS13\n  max_version: TLS12\n",
       "web.yml:5: tls_server_config.max_version: is older than min_version TLS13"},
      {tls + "  client_auth_type: RequireAnyClientCert\n",
       "tls_server_config.client_auth_type: RequireAnyClientCert takes a client certificate "
       "without verifying it"},
      {tls + "  client_auth_type: VerifyAlways\n",
       "expected NoClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert, not "
       "'VerifyAlways'"},
      {tls + "  client_auth_type: RequireAndVerifyClientCert\n",
       "tls_server_config.client_auth_type: needs client_ca_file"},
      {tls + "  client_ca_file: ca.pem\n",
       "web.yml:4: tls_server_config.client_ca_file: given without client_auth_type"},
      {tls + "  prefer_server_cipher_suites: yes please\n",
       "tls_server_config.prefer_server_cipher_suites: expected true or false, not 'yes please'"},
      {"basic_auth_users:\n  alice: password\n",
       "web.yml:2: basic_auth_users.alice: expected a bcrypt hash"},
      {"basic_auth_users:\n  alice: $2x$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW\n",
       "basic_auth_users.alice: expected a bcrypt hash"},
      {"basic_auth_users:\n  alice: $2y$03$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW\n",
       "basic_auth_users.alice: expected a bcrypt hash"},
      {"basic_auth_users:\n  alice: [a]\n", "basic_auth_users.alice: expected a bcrypt hash"},
      {std::string("basic_auth_users:\n  al:ice: ") + kUU + "\n",
       "basic_auth_users.al:ice: a user name cannot hold ':'"},
      {std::string("basic_auth_users:\n  alice: ") + kUU + "\n  alice: " + kUU + "\n",
       "web.yml:3: basic_auth_users.alice: given twice"},
      {"basic_auth_users: alice\n", "basic_auth_users: expected a mapping"},
      {"http_server_config:\n  http2: maybe\n", "http_server_config.http2: expected true or false"},
      {"http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
       "web.yml:3: http_server_config.headers.X-Frame-Options: expected deny or sameorigin"},
      {"http_server_config:\n  headers:\n    X-Powered-By: dltune\n",
       "http_server_config.headers.X-Powered-By: unknown header"},
      {"http_server_config:\n  timeout: 5s\n", "http_server_config.timeout: unknown key"},
      {"rate_limit:\n  interval: soon\n  burst: 1\n",
       "web.yml:2: rate_limit.interval: expected a duration such as 1s or 500ms, not 'soon'"},
      {"rate_limit:\n  interval: 1s\n  burst: -1\n", "rate_limit.burst: expected a whole number"},
      {"rate_limit:\n  interval: 1s\n", "rate_limit.burst: expected at least 1 with an interval"},
      {"rate_limit:\n  every: 1s\n", "rate_limit.every: unknown key"},
  };
  for (const auto& c : cases) {
    const auto said = refusal(c.text);
    EXPECT_NE(said.find(c.says), std::string::npos) << c.text << "\nsaid: " << said;
  }
  // A rate limit of 0 is none (as the toolkit's).
  const auto off = parse("rate_limit:\n  interval: 0\n  burst: 0\n");
  ASSERT_TRUE(off) << off.error().message();
  EXPECT_EQ(off->rate_limit.interval_ns, 0);
}

TEST(WebConfig, LoadNamesAMissingFileAndWhatItNamesThatCannotBeRead) {
  const auto dir =
      std::filesystem::path(::testing::TempDir()) / ("web_config_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "web.yml").string();
  std::ofstream(file) << "tls_server_config:\n  cert_file: serve.crt\n  key_file: serve.key\n";
  std::ofstream(dir / "serve.crt") << "not read here";
  auto w = load_web_config(file);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message(), file + ": tls_server_config.key_file: cannot read " +
                                     (dir / "serve.key").string() + ": No such file or directory");
  std::ofstream(dir / "serve.key") << "not read here";
  w = load_web_config(file);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->tls->key_file, (dir / "serve.key").string());
  auto none = load_web_config((dir / "nope.yml").string());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("--web-config: cannot read"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(BasicAuth, BcryptOfKnownHashesAndOfEachPrefix) {
  EXPECT_TRUE(is_bcrypt_hash(kUU));
  EXPECT_FALSE(is_bcrypt_hash("$1$abc$def"));
  EXPECT_FALSE(is_bcrypt_hash(std::string(kUU).substr(0, 59)));
  EXPECT_TRUE(bcrypt_matches("U*U", kUU));
  EXPECT_TRUE(bcrypt_matches("U*U*", kUUStar));
  EXPECT_FALSE(bcrypt_matches("U*U*", kUU));
  EXPECT_FALSE(bcrypt_matches("", kUU));
  EXPECT_FALSE(bcrypt_matches(std::string("U*U\0x", 5), kUU)) << "a NUL is not a C string's end";
  // $2b$ and $2y$ (htpasswd -B, PHP) compute the same as $2a$ for such passwords.
  for (const char* prefix : {"$2b$", "$2y$"}) {
    const auto hash = prefix + std::string(kUU).substr(4);
    EXPECT_TRUE(bcrypt_matches("U*U", hash)) << prefix;
    EXPECT_FALSE(bcrypt_matches("U*V", hash)) << prefix;
  }
  // Only the first 72 bytes count (bcrypt's own limit): Openwall's vector says so.
  EXPECT_TRUE(bcrypt_matches(
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 "
      "are ignored",
      "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui"));
}

TEST(BasicAuth, TheAuthorizationHeader) {
  std::string user, password;
  ASSERT_TRUE(parse_basic_authorization("Basic YWxpY2U6VSpV", user, password));  // alice:U*U
  EXPECT_EQ(user, "alice");
  EXPECT_EQ(password, "U*U");
  ASSERT_TRUE(parse_basic_authorization("basic   YTpiOmM=", user, password));  // a:b:c
  EXPECT_EQ(user, "a");
  EXPECT_EQ(password, "b:c");
  ASSERT_TRUE(parse_basic_authorization("Basic YTo=", user, password));  // "a:"
  EXPECT_EQ(password, "");
  for (const char* bad : {"", "Bearer YWxpY2U6VSpV", "Basic", "Basic YWxpY2U",
                          "Basic YWxpY2U===", "Basic YWxp!2U6", "Basic YWxpY2U6 VSpV"})
    EXPECT_FALSE(parse_basic_authorization(bad, user, password)) << bad;
}

TEST(BasicAuth, AllowsTheRightPasswordOnlyAndRemembersIt) {
  BasicAuth auth({{"alice", kUU}, {"bob", kUUStar}});
  EXPECT_TRUE(auth.allows("Basic YWxpY2U6VSpV"));       // alice:U*U
  EXPECT_TRUE(auth.allows("Basic YWxpY2U6VSpV"));       // remembered: the same answer
  EXPECT_FALSE(auth.allows("Basic YWxpY2U6VSpVKg=="));  // alice:U*U* (bob's password)
  EXPECT_TRUE(auth.allows("Basic Ym9iOlUqVSo="));       // bob:U*U*
  EXPECT_FALSE(auth.allows("Basic Ym9iOlUqVQ=="));      // bob:U*U (alice's password)
  EXPECT_FALSE(auth.allows("Basic ZXZlOlUqVQ=="));      // eve:U*U, an unknown user
  EXPECT_FALSE(auth.allows(""));
  EXPECT_FALSE(auth.allows("Basic YWxpY2U6"));  // alice with no password
}

TEST(ExposureWarning, SaysTheRiskAndTheFixOffLoopbackOnly) {
  const auto everywhere = *parse_listen("0.0.0.0:9464");
  EXPECT_FALSE(exposure_warning(*parse_listen("127.0.0.1:9464"), nullptr));
  EXPECT_FALSE(exposure_warning(*parse_listen("[::1]:9464"), nullptr));
  const auto bare = exposure_warning(everywhere, nullptr);
  ASSERT_TRUE(bare);
  for (const char* s : {"0.0.0.0:9464", "metrics", "process", "job", "--web-config"})
    EXPECT_NE(bare->find(s), std::string::npos) << s << ": " << *bare;
  const auto tls_only = *parse("tls_server_config: {cert_file: a, key_file: b}");
  const auto no_auth = exposure_warning(everywhere, &tls_only);
  ASSERT_TRUE(no_auth);
  EXPECT_NE(no_auth->find("basic_auth_users"), std::string::npos) << *no_auth;
  const auto auth_only = *parse(std::string("basic_auth_users: {a: '") + kUU + "'}");
  const auto clear = exposure_warning(everywhere, &auth_only);
  ASSERT_TRUE(clear);
  EXPECT_NE(clear->find("clear text"), std::string::npos) << *clear;
  auto both = auth_only;
  both.tls = tls_only.tls;
  EXPECT_FALSE(exposure_warning(everywhere, &both));
}

}  // namespace
}  // namespace dltune::serve::web_config_test
