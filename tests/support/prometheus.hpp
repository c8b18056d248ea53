#pragma once
// A real Prometheus server for a live test (Debian's prometheus): it scrapes its targets every
// second from a directory of the test's own, and its query API answers instant queries. Its
// first scrape comes only after about 5.5 s (the scrape manager applies new targets on a 5 s
// tick). Killed with its process group when it goes.
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "support/process.hpp"

namespace dltune::testing {

class PrometheusServer {
 public:
  static constexpr const char* kBinary = "/usr/bin/prometheus";

  // `job_options`: more of the scrape job's keys, each line indented by four spaces (scheme,
  // basic_auth, tls_config).
  PrometheusServer(const std::filesystem::path& dir, int target_port,
                   const std::string& job_options = "")
      : PrometheusServer(dir, std::vector<int>{target_port}, job_options) {}
  // Several targets in one scrape job: each its own `instance`, as nodes are.
  PrometheusServer(const std::filesystem::path& dir, const std::vector<int>& target_ports,
                   const std::string& job_options = "")
      : PrometheusServer(dir, loopback(target_ports), job_options) {}
  // Targets as HOST:PORT (another loopback address stands for another host).
  PrometheusServer(const std::filesystem::path& dir, const std::vector<std::string>& addresses,
                   const std::string& job_options = "")
      : port_(free_port()) {
    std::filesystem::create_directories(dir / "data");
    std::string targets;
    for (const auto& a : addresses)
      targets += fmt::format("{}'{}'", targets.empty() ? "" : ", ", a);
    std::ofstream(dir / "prometheus.yml") << fmt::format(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: dltune\n{}    static_configs:\n"
        "      - targets: [{}]\n",
        job_options, targets);
    process_.emplace(std::vector<std::string>{
        kBinary, "--config.file=" + (dir / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir / "data").string(),
        fmt::format("--web.listen-address=127.0.0.1:{}", port_), "--log.level=warn"});
  }
  [[nodiscard]] bool started() const { return process_ && process_->pid > 0; }
  // Its HTTP API's URL.
  [[nodiscard]] std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }

  // Every series an instant query returns, as the API's JSON objects (`metric`, `value`); empty
  // when none (yet) or the query failed.
  nlohmann::json query_all(const std::string& q) {
    httplib::Client prom("127.0.0.1", port_);
    prom.set_read_timeout(5);
    auto r = prom.Get("/api/v1/query", httplib::Params{{"query", q}}, httplib::Headers{});
    if (!r || r->status != 200) return nlohmann::json::array();
    const auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded()) return nlohmann::json::array();
    return j["data"]["result"];
  }
  // The value of the first series an instant query returns; nullopt when none (yet).
  std::optional<std::string> query(const std::string& q) {
    httplib::Client prom("127.0.0.1", port_);
    prom.set_read_timeout(5);
    auto r = prom.Get("/api/v1/query", httplib::Params{{"query", q}}, httplib::Headers{});
    if (!r || r->status != 200) return std::nullopt;
    const auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["data"]["result"].empty()) return std::nullopt;
    return j["data"]["result"][0]["value"][1].get<std::string>();
  }
  // query() asked again every 250 ms until it has a value or `timeout` is over.
  std::optional<std::string> wait_for(const std::string& q, std::chrono::seconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    std::optional<std::string> v;
    while (!(v = query(q)) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    return v;
  }
  // The scrape target's last error ("" when the last scrape went well), for a failure's message.
  std::string target_error() {
    httplib::Client prom("127.0.0.1", port_);
    prom.set_read_timeout(5);
    auto r = prom.Get("/api/v1/targets");
    if (!r || r->status != 200) return "(no answer from /api/v1/targets)";
    const auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["data"]["activeTargets"].empty()) return "(no active target)";
    return j["data"]["activeTargets"][0].value("lastError", "");
  }
  // What it said on stderr (its warnings), for a failure's message.
  std::string log() { return process_ ? process_->rest_of_stderr() : std::string(); }
  void stop() { process_.reset(); }

 private:
  static std::vector<std::string> loopback(const std::vector<int>& ports) {
    std::vector<std::string> out;
    for (const int p : ports) out.push_back(fmt::format("127.0.0.1:{}", p));
    return out;
  }
  int port_ = 0;
  std::optional<Process> process_;
};

}  // namespace dltune::testing
