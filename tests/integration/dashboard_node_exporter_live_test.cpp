// The Grafana dashboard's host panels where serve runs with --no-host-metrics and node_exporter
// exports the host: a real Prometheus scrapes two "hosts" (loopback addresses 127.0.0.1 and
// 127.0.0.2), each with a real node_exporter (Debian's prometheus-node-exporter) and a real
// `dltune serve`; on 127.0.0.1 serve exports no host metrics, on 127.0.0.2 it does. Every host
// panel's query, as Grafana sends it, must show 127.0.0.1 from node_exporter and 127.0.0.2 from
// dltune alone (node_exporter's series of a host that dltune covers are not drawn twice), and
// every node_exporter metric the dashboard names must be one node_exporter really exports.
#include <unistd.h>

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/prometheus.hpp"
#include "support/temp_tree.hpp"

namespace dashboard_node_exporter_live_test {
namespace {

using namespace std::chrono_literals;
using dltune::testing::free_port;
using dltune::testing::Process;

constexpr const char* kNodeExporter = "/usr/bin/prometheus-node-exporter";

// A host's dltune serve, listening on `address` (port chosen by serve).
std::optional<Process> start_serve(const std::string& address, bool host_metrics, int& port) {
  std::vector<std::string> argv = {DLTUNE_BINARY, "serve",      "--listen",   address + ":0",
                                   "--no-gpus",   "--no-check", "--interval", "500ms"};
  if (!host_metrics) argv.push_back("--no-host-metrics");
  std::optional<Process> p;
  p.emplace(argv);
  const auto port_text = p->wait_for(
      std::regex(std::regex_replace(address, std::regex("\\."), "\\.") + ":([0-9]+)"), 10s);
  port = port_text ? std::stoi(*port_text) : 0;
  return p;
}

TEST(DashboardNodeExporterLive, HostPanelsReadNodeExporterWhereServeHasNoHostMetrics) {
  for (const char* tool : {"/usr/bin/prometheus", kNodeExporter})
    if (::access(tool, X_OK) != 0)
      GTEST_SKIP() << tool << " is missing (Debian's prometheus, prometheus-node-exporter)";
  std::ifstream in(std::string(DLTUNE_SOURCE_DIR) + "/deploy/grafana/dltune-dashboard.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto dashboard = nlohmann::json::parse(ss.str());

  // The host panels: those whose queries name a node_exporter metric.
  struct Query {
    std::string panel, expr;
  };
  std::vector<Query> host_queries;
  std::set<std::string> node_names;
  const std::regex node_name("\\bnode_[a-zA-Z0-9_]+");
  for (const auto& p : dashboard["panels"]) {
    if (!p.contains("targets")) continue;
    for (const auto& t : p["targets"]) {
      auto expr = t["expr"].get<std::string>();
      if (expr.find("node_") == std::string::npos) continue;
      for (auto it = std::sregex_iterator(expr.begin(), expr.end(), node_name);
           it != std::sregex_iterator(); ++it)
        node_names.insert(it->str());
      for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
               {"$__rate_interval", "1m"}, {"$instance", ".*"}})
        for (auto at = expr.find(from); at != std::string::npos; at = expr.find(from, at))
          expr.replace(at, from.size(), to);
      host_queries.push_back({p["title"].get<std::string>(), expr});
    }
  }
  ASSERT_GE(host_queries.size(), 15u) << "every host panel has node_exporter's fallback";

  // Two hosts: node_exporter on each, serve without host metrics on the first, with on the
  // second.
  const int ne1 = free_port(), ne2 = free_port();
  auto exporter = [](const std::string& address) {
    return Process({kNodeExporter, "--web.listen-address=" + address, "--log.level=warn"});
  };
  Process node1 = exporter(fmt::format("127.0.0.1:{}", ne1));
  Process node2 = exporter(fmt::format("127.0.0.2:{}", ne2));
  int sp1 = 0, sp2 = 0;
  auto serve1 = start_serve("127.0.0.1", false, sp1);
  auto serve2 = start_serve("127.0.0.2", true, sp2);
  ASSERT_GT(sp1, 0) << serve1->err_text;
  ASSERT_GT(sp2, 0) << serve2->err_text;

  // What node_exporter exports here: every name the dashboard uses is one of them.
  {
    httplib::Client c("127.0.0.1", ne1);
    c.set_read_timeout(10);
    std::optional<httplib::Result> r;
    for (int i = 0; i < 50 && !(r && *r); ++i) {
      r.emplace(c.Get("/metrics"));
      if (!*r) std::this_thread::sleep_for(100ms);
    }
    ASSERT_TRUE(r && *r && (*r)->status == 200) << "node_exporter did not answer";
    for (const auto& n : node_names)
      EXPECT_TRUE((*r)->body.find("\n" + n + "{") != std::string::npos ||
                  (*r)->body.find("\n" + n + " ") != std::string::npos)
          << "the dashboard names " << n << ", which node_exporter 1.5 does not export here";
  }

  dltune::testing::TempTree dir;
  dltune::testing::PrometheusServer prometheus(
      dir.dir() / "prometheus",
      std::vector<std::string>{fmt::format("127.0.0.1:{}", ne1), fmt::format("127.0.0.2:{}", ne2),
                               fmt::format("127.0.0.1:{}", sp1), fmt::format("127.0.0.2:{}", sp2)});
  ASSERT_TRUE(prometheus.started());
  const auto up = prometheus.wait_for("count(up == 1) == 4", 30s);
  ASSERT_TRUE(up) << "not every target is up: " << prometheus.target_error() << "\n"
                  << prometheus.log();
  std::this_thread::sleep_for(3s);  // a rate needs two samples

  const std::string exporter1 = fmt::format("127.0.0.1:{}", ne1);
  const std::string dltune2 = fmt::format("127.0.0.2:{}", sp2);
  for (const auto& q : host_queries) {
    nlohmann::json result = nlohmann::json::array();
    std::set<std::string> instances;
    // Until both hosts are there (a rate's second sample, a counter's first increase).
    for (int i = 0; i < 40; ++i) {
      result = prometheus.query_all(q.expr);
      instances.clear();
      for (const auto& s : result) instances.insert(s["metric"].value("instance", ""));
      if (instances.contains(exporter1) && instances.contains(dltune2)) break;
      std::this_thread::sleep_for(250ms);
    }
    // Some series exist only where the host has them (the swap panel on a host without swap
    // still has a value: 0). Each host is drawn from one source: 127.0.0.1 from node_exporter,
    // 127.0.0.2 from dltune.
    EXPECT_TRUE(instances.contains(exporter1))
        << q.panel << ": no series from node_exporter for the host without dltune's host "
        << "metrics\n"
        << q.expr << "\n"
        << result.dump();
    EXPECT_TRUE(instances.contains(dltune2)) << q.panel << ": no dltune series for the other host\n"
                                             << q.expr << "\n"
                                             << result.dump();
    for (const auto& i : instances)
      EXPECT_TRUE(i == exporter1 || i == dltune2) << q.panel << ": drawn from " << i << " too\n"
                                                  << q.expr;
  }
}

}  // namespace
}  // namespace dashboard_node_exporter_live_test
