// `dltune serve --web-config` and `--no-host-metrics` on the command line: a good file is taken
// (--once checks it too), a bad one, a missing one, and a certificate OpenSSL cannot load are
// refused with exit status 2 and nothing served. The TLS side itself is tested live
// (tests/integration/serve_tls_live_test.cpp).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace serve_web_config_cli_test {

namespace fs = std::filesystem;
using dltune::testing::run;

namespace {

class ServeWebConfigCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("serve_web_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // Not PEM: --once never loads them, the server does (and refuses these).
    std::ofstream(dir_ / "serve.crt") << "not a certificate\n";
    std::ofstream(dir_ / "serve.key") << "not a key\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(ServeWebConfigCli, OnceTakesAGoodFileAndRefusesBadOnes) {
  const auto good =
      write("web.yml",
            "tls_server_config:\n  cert_file: serve.crt\n  key_file: serve.key\n"
            "basic_auth_users:\n"
            "  prometheus: $2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW\n");
  auto r = run({DLTUNE_BINARY, "serve", "--once", "--no-gpus", "--no-check", "--interval", "100ms",
                "--web-config", good});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dltune_build_info"), std::string::npos);

  const auto bad =
      write("bad.yml", "tls_server_config:\n  cert_file: serve.crt\n  keyfile: serve.key\n");
  r = run({DLTUNE_BINARY, "serve", "--once", "--no-gpus", "--no-check", "--web-config", bad});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(bad + ":3: tls_server_config.keyfile: unknown key"), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());

  const auto missing = write("missing.yml",
                             "tls_server_config:\n  cert_file: none.crt\n"
                             "  key_file: serve.key\n");
  r = run({DLTUNE_BINARY, "serve", "--once", "--no-gpus", "--no-check", "--web-config", missing});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("tls_server_config.cert_file: cannot read " + (dir_ / "none.crt").string()),
            std::string::npos)
      << r.err;

  r = run({DLTUNE_BINARY, "serve", "--once", "--no-gpus", "--no-check", "--web-config",
           (dir_ / "nope.yml").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--web-config: cannot read"), std::string::npos) << r.err;
}

TEST_F(ServeWebConfigCli, ACertificateOpenSslCannotLoadServesNothing) {
  const auto file =
      write("web.yml", "tls_server_config:\n  cert_file: serve.crt\n  key_file: serve.key\n");
  const auto r = run({DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0", "--no-gpus", "--no-check",
                      "--web-config", file},
                     {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("tls_server_config.cert_file " + (dir_ / "serve.crt").string() +
                       ": cannot load the certificate"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("listening on"), std::string::npos) << r.err;
}

TEST_F(ServeWebConfigCli, NoHostMetricsLeavesTheHostToNodeExporter) {
  const auto r = run({DLTUNE_BINARY, "serve", "--once", "--no-gpus", "--no-check", "--interval",
                      "100ms", "--no-host-metrics"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("dltune_memory_total_bytes"), std::string::npos);
  EXPECT_EQ(r.out.find("dltune_cpu_seconds_total"), std::string::npos);
  EXPECT_NE(r.out.find("dltune_build_info"), std::string::npos);
  EXPECT_NE(r.out.find("dltune_samples_total"), std::string::npos);
}

}  // namespace

}  // namespace serve_web_config_cli_test
