// `dltune serve --web-config` live: certificates made by the openssl CLI for this test, serve
// over TLS with basic auth, a real Prometheus scraping it over https with basic_auth and
// tls_config's ca_file (up == 1), and what is refused: no password, a wrong password, an unknown
// user, plain HTTP to the TLS port, a client that does not trust the certificate; the wrong
// password never appears in serve's output. Then client certificates
// (RequireAndVerifyClientCert): a client with one signed by the CA is served, one without is not;
// a certificate renewed on disk is served without a restart.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/prometheus.hpp"
#include "support/run.hpp"

namespace serve_tls_live_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using dltune::testing::Process;
using dltune::testing::run;

constexpr const char* kOpenssl = "/usr/bin/openssl";
// Openwall crypt_blowfish's test vector: the bcrypt hash of "U*U" at cost 5.
constexpr const char* kHash = "$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
constexpr const char* kPassword = "U*U";
constexpr const char* kWrongPassword = "wrong-Pa55word-not-to-be-logged";

// A CA, a server certificate for 127.0.0.1 and a client certificate it signed, in `dir`.
bool make_certificates(const fs::path& dir, std::string& why) {
  const auto ec_key = std::vector<std::string>{"-newkey", "ec", "-pkeyopt",
                                               "ec_paramgen_curve:prime256v1", "-nodes"};
  auto step = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), kOpenssl);
    const auto r = run(argv, {}, 60);
    if (r.exit_code != 0) why += fmt::format("{}: {}\n", fmt::join(argv, " "), r.err);
    return r.exit_code == 0;
  };
  const auto p = [&](const char* name) { return (dir / name).string(); };
  std::ofstream(dir / "server.ext") << "basicConstraints=CA:FALSE\n"
                                       "subjectAltName=IP:127.0.0.1\n"
                                       "extendedKeyUsage=serverAuth\n";
  std::ofstream(dir / "client.ext") << "basicConstraints=CA:FALSE\n"
                                       "extendedKeyUsage=clientAuth\n";
  std::vector<std::string> ca = {"req", "-x509"};
  ca.insert(ca.end(), ec_key.begin(), ec_key.end());
  ca.insert(ca.end(), {"-keyout", p("ca.key"), "-out", p("ca.crt"), "-days", "2", "-subj",
                       "/CN=dltune test CA"});
  if (!step(ca)) return false;
  for (const char* who : {"serve", "client"}) {
    std::vector<std::string> req = {"req"};
    req.insert(req.end(), ec_key.begin(), ec_key.end());
    req.insert(req.end(), {"-keyout", p(fmt::format("{}.key", who).c_str()), "-out",
                           p(fmt::format("{}.csr", who).c_str()), "-subj",
                           fmt::format("/CN={}", std::string(who) == "serve" ? "127.0.0.1" : who)});
    if (!step(req)) return false;
    if (!step({"x509", "-req", "-in", p(fmt::format("{}.csr", who).c_str()), "-CA", p("ca.crt"),
               "-CAkey", p("ca.key"), "-CAcreateserial", "-days", "2", "-out",
               p(fmt::format("{}.crt", who).c_str()), "-extfile",
               p(std::string(who) == "serve" ? "server.ext" : "client.ext")}))
      return false;
  }
  ::chmod(p("serve.key").c_str(), 0600);  // as a real key is: serve reads it before dropping root
  return true;
}

// The status line a raw request gets, "" when none.
std::string raw_status_line(int port, const std::string& request) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  std::string answer;
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::send(s, request.data(), request.size(), MSG_NOSIGNAL) > 0) {
    char buf[4096];
    for (;;) {
      const auto n = ::recv(s, buf, sizeof buf, 0);
      if (n <= 0) break;
      answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(s);
  return answer.substr(0, answer.find("\r\n"));
}

class ServeTlsLive : public ::testing::Test {
 protected:
  void SetUp() override {
    // A TLS client's write to a connection serve has refused (no client certificate) is a
    // SIGPIPE: OpenSSL writes without MSG_NOSIGNAL. Restored after the test.
    old_sigpipe_ = ::signal(SIGPIPE, SIG_IGN);
    for (const char* tool : {kOpenssl, dltune::testing::PrometheusServer::kBinary})
      if (::access(tool, X_OK) != 0)
        GTEST_SKIP() << tool << " is missing (Debian's openssl and prometheus)";
    dir_ = fs::path(::testing::TempDir()) / fmt::format("serve_tls_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "web");
    // serve drops root for nobody, and Prometheus reads the CA: the directory must let them in.
    ::chmod(dir_.c_str(), 0755);
    ::chmod((dir_ / "web").c_str(), 0755);
    std::string why;
    ASSERT_TRUE(make_certificates(dir_ / "web", why)) << why;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
    ::signal(SIGPIPE, old_sigpipe_);
  }

  // serve with `web_config` (its paths relative to web/), on a free loopback port.
  std::unique_ptr<Process> start_serve(const std::string& web_config, int& port,
                                       const std::vector<std::string>& more = {}) {
    const auto file = dir_ / "web" / "web.yml";
    std::ofstream(file) << web_config;
    std::vector<std::string> argv = {DLTUNE_BINARY,  "serve",      "--listen",   "127.0.0.1:0",
                                     "--interval",   "500ms",      "--no-check", "--no-gpus",
                                     "--web-config", file.string()};
    argv.insert(argv.end(), more.begin(), more.end());
    auto serve = std::make_unique<Process>(argv);
    const auto port_text =
        serve->wait_for(std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)"), 15s);
    EXPECT_TRUE(port_text) << serve->err_text;
    port = port_text ? std::stoi(*port_text) : 0;
    return serve;
  }

  std::string ca() const { return (dir_ / "web" / "ca.crt").string(); }
  fs::path dir_;
  sighandler_t old_sigpipe_ = SIG_DFL;
};

TEST_F(ServeTlsLive, PrometheusScrapesOverTlsWithBasicAuthAndTheRestIsRefused) {
  int port = 0;
  auto serve = start_serve(fmt::format("tls_server_config:\n"
                                       "  cert_file: serve.crt\n"
                                       "  key_file: serve.key\n"
                                       "basic_auth_users:\n"
                                       "  prometheus: {}\n",
                                       kHash),
                           port);
  ASSERT_GT(port, 0);

  // Prometheus first: its first scrape comes after about 5.5 s.
  std::optional<dltune::testing::PrometheusServer> prometheus;
  prometheus.emplace(dir_ / "prometheus", port,
                     fmt::format("    scheme: https\n"
                                 "    basic_auth:\n"
                                 "      username: prometheus\n"
                                 "      password: '{}'\n"
                                 "    tls_config:\n"
                                 "      ca_file: {}\n",
                                 kPassword, ca()));
  ASSERT_TRUE(prometheus->started());

  httplib::SSLClient https("127.0.0.1", port);
  https.set_ca_cert_path(ca());
  https.enable_server_certificate_verification(true);
  https.set_connection_timeout(5);
  https.set_read_timeout(15);

  // No password, a wrong one, an unknown user: 401 with a Basic challenge, and no metric.
  for (const auto& [user, password] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"prometheus", kWrongPassword}, {"eve", kPassword}}) {
    httplib::Headers headers;
    if (!user.empty()) headers.emplace(httplib::make_basic_authentication_header(user, password));
    for (const char* path : {"/metrics", "/healthz", "/"}) {
      auto r = https.Get(path, headers);
      ASSERT_TRUE(r) << path << ": " << httplib::to_string(r.error());
      EXPECT_EQ(r->status, 401) << user << " " << path;
      EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Basic") << path;
      EXPECT_EQ(r->body.find("dltune_"), std::string::npos) << path;
    }
  }
  // The right password: served (the first answer may come before the first sample: 503).
  https.set_basic_auth("prometheus", kPassword);
  int status = 0;
  std::string body;
  for (int i = 0; i < 50 && status != 200; ++i) {
    if (i > 0) std::this_thread::sleep_for(100ms);
    auto r = https.Get("/metrics");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    status = r->status;
    body = r->body;
  }
  EXPECT_EQ(status, 200);
  EXPECT_NE(body.find("dltune_samples_total"), std::string::npos);
  auto health = https.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  // Plain HTTP to the TLS port: a 400 that says why, never the metrics.
  EXPECT_EQ(raw_status_line(port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
            "HTTP/1.0 400 Bad Request");
  {
    httplib::Client plain("127.0.0.1", port);
    plain.set_connection_timeout(5);
    plain.set_read_timeout(5);
    plain.set_basic_auth("prometheus", kPassword);
    auto r = plain.Get("/metrics");
    if (r) {
      EXPECT_EQ(r->status, 400);
      EXPECT_NE(r->body.find("HTTPS"), std::string::npos) << r->body;
    }
  }
  // A client that does not trust the certificate ends at the handshake.
  {
    httplib::SSLClient untrusting("127.0.0.1", port);
    untrusting.set_ca_cert_path((dir_ / "web" / "client.crt").string());  // not the CA
    untrusting.enable_server_certificate_verification(true);
    untrusting.set_basic_auth("prometheus", kPassword);
    auto r = untrusting.Get("/metrics");
    EXPECT_FALSE(r);
  }

  // Prometheus scraped it over https with basic auth: up is 1 and the series are there.
  std::optional<std::string> up;
  const auto until = std::chrono::steady_clock::now() + 20s;
  while ((!up || *up != "1") && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(250ms);
    up = prometheus->query("up{job=\"dltune\"}");
  }
  ASSERT_TRUE(up) << "Prometheus scraped nothing in 20 s\n" << prometheus->log();
  EXPECT_EQ(*up, "1") << prometheus->target_error() << "\n" << prometheus->log();
  EXPECT_TRUE(prometheus->query("dltune_samples_total")) << prometheus->target_error();
  prometheus.reset();

  ::kill(serve->pid, SIGTERM);
  EXPECT_EQ(serve->wait_exit(15s), 0) << serve->err_text;
  const auto said = serve->rest_of_stderr();
  EXPECT_EQ(said.find(kWrongPassword), std::string::npos) << said;
  EXPECT_EQ(said.find("not a loopback"), std::string::npos) << said;
}

TEST_F(ServeTlsLive, ClientCertificatesSignedByTheCaOnly) {
  int port = 0;
  auto serve = start_serve(
      "tls_server_config:\n"
      "  cert_file: serve.crt\n"
      "  key_file: serve.key\n"
      "  client_ca_file: ca.crt\n"
      "  client_auth_type: RequireAndVerifyClientCert\n"
      "  min_version: TLS13\n",
      port);
  ASSERT_GT(port, 0);
  const auto web = dir_ / "web";
  httplib::SSLClient with_cert("127.0.0.1", port, (web / "client.crt").string(),
                               (web / "client.key").string());
  with_cert.set_ca_cert_path(ca());
  with_cert.enable_server_certificate_verification(true);
  int status = 0;
  for (int i = 0; i < 50 && status != 200; ++i) {
    if (i > 0) std::this_thread::sleep_for(100ms);
    auto r = with_cert.Get("/healthz");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    status = r->status;
  }
  EXPECT_EQ(status, 200);
  // Without a certificate: the handshake fails (in TLS 1.3 the client may learn it only when it
  // reads), and nothing is served.
  httplib::SSLClient without("127.0.0.1", port);
  without.set_ca_cert_path(ca());
  without.enable_server_certificate_verification(true);
  auto r = without.Get("/healthz");
  EXPECT_FALSE(r && r->status == 200);
  ::kill(serve->pid, SIGTERM);
  EXPECT_EQ(serve->wait_exit(15s), 0) << serve->err_text;
}

// A certificate renewed on disk is served without a restart, as certbot and cert-manager renew
// one: new files moved over the old. serve has dropped root for nobody, so a renewed key that
// only root may read does not load: the old certificate is still served and serve says why;
// once the key is readable by serve's user, the new one is served.
TEST_F(ServeTlsLive, ARenewedCertificateIsServedWithoutARestart) {
  int port = 0;
  auto serve =
      start_serve("tls_server_config: {cert_file: serve.crt, key_file: serve.key}\n", port);
  ASSERT_GT(port, 0);
  // The renewal: another CA's certificate for the same name, so that a client tells them apart.
  const auto next = dir_ / "next";
  fs::create_directories(next);
  ::chmod(next.c_str(), 0755);
  std::string why;
  ASSERT_TRUE(make_certificates(next, why)) << why;
  // Which CA's certificate serve presents to a new connection: "old", "new" or "" (neither).
  auto served = [&] {
    for (const auto& [name, ca_file] :
         {std::pair<std::string, fs::path>{"old", dir_ / "web" / "ca.crt"},
          std::pair<std::string, fs::path>{"new", next / "ca.crt"}}) {
      httplib::SSLClient c("127.0.0.1", port);
      c.set_ca_cert_path(ca_file.string());
      c.enable_server_certificate_verification(true);
      c.set_connection_timeout(5);
      if (auto r = c.Get("/"); r && r->status == 200) return name;
    }
    return std::string();
  };
  EXPECT_EQ(served(), "old");
  auto renew = [&](mode_t key_mode) {
    for (const char* f : {"serve.crt", "serve.key"}) {
      fs::copy_file(next / f, dir_ / "web" / (std::string(f) + ".tmp"),
                    fs::copy_options::overwrite_existing);
      ::chmod((dir_ / "web" / (std::string(f) + ".tmp")).c_str(),
              std::string(f) == "serve.key" ? key_mode : 0644);
      fs::rename(dir_ / "web" / (std::string(f) + ".tmp"), dir_ / "web" / f);
    }
  };
  // A key of root's alone: not loaded, the old one served, and serve says so.
  renew(0600);
  std::this_thread::sleep_for(1200ms);  // serve looks at the files at most once a second
  EXPECT_EQ(served(), "old");
  EXPECT_TRUE(serve->wait_for(std::regex("do not load, so the ones loaded before are still "
                                         "served: [^\n]*serve\\.key"),
                              5s))
      << serve->err_text;
  // Readable by serve's user: the renewed certificate, on the same process.
  renew(0644);
  std::this_thread::sleep_for(1200ms);
  std::string now;
  for (int i = 0; i < 20 && (now = served()) != "new"; ++i) std::this_thread::sleep_for(200ms);
  EXPECT_EQ(now, "new");
  EXPECT_TRUE(serve->wait_for(std::regex("loaded the renewed certificate"), 5s)) << serve->err_text;
  ::kill(serve->pid, SIGTERM);
  EXPECT_EQ(serve->wait_exit(15s), 0) << serve->err_text;
}

// A client that starts a handshake and sends it a byte a second holds a worker until the
// handshake's deadline (the header deadline, 2 s), no longer; the other worker serves meanwhile.
// Both connections come from 127.0.0.1, which may hold both workers here (with one slot an
// address, as --max-connections 2 alone gives, the second would be refused while the first is
// held, and the test would race the deadline).
TEST_F(ServeTlsLive, ADrippedHandshakeEndsAtTheDeadline) {
  int port = 0;
  auto serve = start_serve("tls_server_config: {cert_file: serve.crt, key_file: serve.key}\n", port,
                           {"--max-connections", "2", "--max-connections-per-address", "2"});
  ASSERT_GT(port, 0);
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ASSERT_EQ(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  // A TLS record header (handshake, TLS 1.0 framing, 512 bytes to come), then a byte a second.
  const unsigned char header[] = {0x16, 0x03, 0x01, 0x02, 0x00};
  const auto start = std::chrono::steady_clock::now();
  bool closed = false;
  std::chrono::steady_clock::duration took{};
  for (std::size_t i = 0; i < 20 && !closed; ++i) {
    const unsigned char byte = i < sizeof header ? header[i] : 0x01;
    if (::send(s, &byte, 1, MSG_NOSIGNAL) != 1) closed = true;
    if (i == 1) {  // meanwhile (the handshake is held), the other worker answers
      httplib::SSLClient https("127.0.0.1", port);
      https.set_ca_cert_path(ca());
      https.enable_server_certificate_verification(true);
      auto r = https.Get("/metrics");
      ASSERT_TRUE(r) << httplib::to_string(r.error());
      EXPECT_TRUE(r->status == 200 || r->status == 503) << r->status;
    }
    pollfd p{s, POLLIN, 0};
    if (::poll(&p, 1, 1000) > 0) {
      char buf[64];
      closed = ::recv(s, buf, sizeof buf, 0) <= 0;  // the end, or a reset
    }
    if (closed) took = std::chrono::steady_clock::now() - start;
  }
  ::close(s);
  EXPECT_TRUE(closed) << "the dripping handshake still held a worker after 20 s";
  EXPECT_LT(took, 6s) << "cut at the handshake's deadline (2 s), not later";
  ::kill(serve->pid, SIGTERM);
  EXPECT_EQ(serve->wait_exit(15s), 0) << serve->err_text;
}

}  // namespace

}  // namespace serve_tls_live_test
