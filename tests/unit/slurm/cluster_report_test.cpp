// One Slurm job across its nodes: the judgement of what Prometheus had (the node that held the
// others back by its GPUs, its CPU throttling or its CPU stalls; OOM kills, idle GPUs, CPUs and
// memory asked for and left unused; the action for the worst), its JSON against docs/json.md,
// the URL grammar of --prometheus, and the query API's answers read or refused.
#include "slurm/cluster_report.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "serve/http_client.hpp"
#include "slurm/prometheus_api.hpp"
#include "support/build_paths.hpp"

namespace cluster_report_test {
namespace {

using dltune::slurm::ClusterUse;
using dltune::slurm::judge_cluster;
using dltune::slurm::NodeUse;
using dltune::slurm::PrometheusApi;
using ::testing::HasSubstr;

constexpr double kGiB = 1024.0 * 1024 * 1024;

NodeUse node(const std::string& name, double cpus_used, std::vector<double> gpus = {}) {
  NodeUse n;
  n.node = name;
  n.instance = name + ":9464";
  n.first_seen = 1000;
  n.last_seen = 1600;
  n.cpus = 16;
  n.cpus_used = cpus_used;
  n.throttled_share = 0;
  n.cpu_stall_share = 0.01;
  n.memory_peak_bytes = 40 * kGiB;
  n.memory_limit_bytes = 64 * kGiB;
  n.oom_kills = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    n.gpus.push_back({std::to_string(i), "GPU-" + name + std::to_string(i), gpus[i], 30 * kGiB});
  return n;
}

ClusterUse job(std::vector<NodeUse> nodes, bool running = true) {
  ClusterUse u;
  u.job_id = "812";
  u.source = "http://prom:9090";
  u.start = 1000;
  u.end = 1600;
  u.running = running;
  u.nodes = std::move(nodes);
  return u;
}

TEST(ClusterReport, TheNodeWhoseGpusWaitedLeastHeldTheOthersBack) {
  const auto r =
      judge_cluster(job({node("gpu-01", 14, {0.93, 0.95}), node("gpu-02", 14.5, {0.91, 0.9}),
                         node("gpu-03", 15.8, {0.31, 0.33})}));
  EXPECT_EQ(r.held_back_by, "gpu-03");
  EXPECT_THAT(r.held_back_why,
              HasSubstr("busy 32% of the time, GPU 0 the least (31%), the other 2 node(s)' 92%"));
  EXPECT_THAT(r.held_back_why, HasSubstr("15.8 of 16 CPUs used"));
  EXPECT_THAT(r.action, HasSubstr("on gpu-03: `dltune profile --slurm-job 812`"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_THAT(r.findings[0], HasSubstr("gpu-03 held the others back"));
  // Its own idle GPUs are the straggler's finding, not another one.
  for (const auto& f : r.findings) EXPECT_THAT(f, ::testing::Not(HasSubstr("under half")));
  EXPECT_NEAR(*r.gpu_pct, (0.93 + 0.95 + 0.91 + 0.9 + 0.31 + 0.33) / 6 * 100, 1e-9);
  EXPECT_NEAR(*r.cpu_pct, (14 + 14.5 + 15.8) / 48 * 100, 1e-9);

  // Ended: the action says where to look, not to profile what no longer runs.
  const auto ended =
      judge_cluster(job({node("gpu-01", 14, {0.93}), node("gpu-03", 15, {0.3})}, false));
  EXPECT_EQ(ended.held_back_by, "gpu-03");
  EXPECT_THAT(ended.action, HasSubstr("look at gpu-03 first"));
}

TEST(ClusterReport, NoNodeStandsOutWhenTheirGpusAreAlikeOrAllIdle) {
  // 0.7 against 0.9: above 0.6 of it.
  auto even = judge_cluster(job({node("a", 14, {0.9}), node("b", 14, {0.7})}));
  EXPECT_EQ(even.held_back_by, "");
  EXPECT_EQ(even.action, "");
  EXPECT_TRUE(even.findings.empty()) << ::testing::PrintToString(even.findings);
  // Every node idle (median under 20%): no straggler, but GPUs that wait on every node.
  auto idle = judge_cluster(job({node("a", 14, {0.1}), node("b", 14, {0.02})}));
  EXPECT_EQ(idle.held_back_by, "");
  ASSERT_EQ(idle.findings.size(), 1u);
  EXPECT_THAT(idle.findings[0], HasSubstr("busy under half the time (a 10%, b 2%)"));
  EXPECT_THAT(idle.action, HasSubstr("dltune profile --slurm-job 812"));
  // One node: nothing to compare with.
  EXPECT_EQ(judge_cluster(job({node("a", 14, {0.95})})).held_back_by, "");
}

TEST(ClusterReport, WithoutGpusTheNodeThrottledOrStalledForCpuHeldTheOthersBack) {
  auto a = node("cpu-1", 15), b = node("cpu-2", 15), c = node("cpu-3", 6);
  c.throttled_share = 0.62;
  a.throttled_share = 0.02;
  auto r = judge_cluster(job({a, b, c}));
  EXPECT_EQ(r.held_back_by, "cpu-3");
  EXPECT_THAT(r.held_back_why,
              HasSubstr("throttled it in 62% of its periods, the other nodes in 1%"));
  // Throttling alike everywhere: nobody stands out by it; a CPU stall that does.
  for (auto* n : {&a, &b, &c}) n->throttled_share = 0.3;
  c.cpu_stall_share = 0.4;
  r = judge_cluster(job({a, b, c}));
  EXPECT_EQ(r.held_back_by, "cpu-3");
  EXPECT_THAT(r.held_back_why, HasSubstr("waited for a CPU 40% of the time"));
  // Under 10%: noise, whatever the ratio.
  c.cpu_stall_share = 0.05;
  EXPECT_EQ(judge_cluster(job({a, b, c})).held_back_by, "");
}

TEST(ClusterReport, OomKillsComeFirstThenCpusAndMemoryLeftUnused) {
  auto a = node("n1", 3.2), b = node("n2", 2.9);
  b.oom_kills = 2;
  b.memory_peak_bytes = 64 * kGiB;
  auto r = judge_cluster(job({a, b}));
  ASSERT_GE(r.findings.size(), 2u);
  EXPECT_THAT(r.findings[0], HasSubstr("2 process(es) of the job were killed for memory on n2"));
  EXPECT_THAT(r.action, HasSubstr("--mem=98304M or more"));  // 64 GiB and a half
  // CPUs: 6.1 of 32; the busiest node used 3.2: ask for 4 a node.
  EXPECT_THAT(r.findings[1], HasSubstr("used 6.1 of the 32 CPUs it was given (19%)"));

  // Without the kills: the CPUs' action, then memory's finding (a peak of 10 GiB of 64).
  a.memory_peak_bytes = b.memory_peak_bytes = 10 * kGiB;
  b.oom_kills = 0;
  r = judge_cluster(job({a, b}));
  EXPECT_THAT(r.action, HasSubstr("ask for 4 CPUs per node"));
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_THAT(r.findings[1], HasSubstr("peaked at 10 GiB against a limit of 64 GiB per node"));
  // Alone, memory's action: the peak and a half, in whole GiB.
  a.cpus_used = b.cpus_used = 15.5;
  r = judge_cluster(job({a, b}));
  EXPECT_EQ(r.action,
            "ask for --mem=15G per node (its peak and a half), leaving the rest to "
            "other jobs");
  // A node without a limit: memory is not judged.
  b.memory_limit_bytes.reset();
  EXPECT_EQ(judge_cluster(job({a, b})).action, "");
}

TEST(ClusterReport, JsonHasEveryKeyOfDocsJsonMd) {
  auto a = node("gpu-01", 14, {0.9});
  a.quota_cpus.reset();
  const auto j = to_json(judge_cluster(job({a, node("gpu-02", 15, {0.2})})));
  EXPECT_EQ(j["schema"], "dltune.slurm-report/1");
  EXPECT_EQ(j["held_back_by"], "gpu-02");
  EXPECT_EQ(j["nodes"][0]["cpu_quota_cpus"], nullptr);
  EXPECT_EQ(j["nodes"][0]["first_seen"], "1970-01-01T00:16:40Z");
  EXPECT_EQ(j["seconds"], 600);
  EXPECT_EQ(to_json(judge_cluster(job({node("x", 15)})))["action"], nullptr);
  std::ifstream in(std::string(DLTUNE_SOURCE_DIR) + "/docs/json.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const auto at = doc.find("schema `dltune.slurm-report/1`");
  ASSERT_NE(at, std::string::npos);
  const auto section = doc.substr(at, doc.find("\n## ", at) - at);
  for (const auto& [k, v] : j.items())
    EXPECT_NE(section.find("`" + k + "`"), std::string::npos) << k;
  for (const auto& [k, v] : j["nodes"][0].items())
    EXPECT_NE(section.find("`" + k + "`"), std::string::npos) << k;
  for (const auto& [k, v] : j["nodes"][0]["gpus"][0].items())
    EXPECT_NE(section.find("`" + k + "`"), std::string::npos) << k;
  // The text names each node and the one that held the others back.
  const auto text = render_text(judge_cluster(job({a, node("gpu-02", 15, {0.2})})));
  EXPECT_THAT(text, HasSubstr("Slurm job 812 on 2 node(s)"));
  EXPECT_THAT(text, HasSubstr("\n  gpu-02 "));
  EXPECT_THAT(text, HasSubstr("! gpu-02 held the others back"));
}

TEST(HttpUrl, ParsedOrRefusedNamingWhatWasExpected) {
  using dltune::serve::parse_http_url;
  auto u = parse_http_url("http://prom.cluster:9090");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_FALSE(u->tls);
  EXPECT_EQ(u->host, "prom.cluster");
  EXPECT_EQ(u->port, 9090);
  EXPECT_EQ(u->prefix, "");
  u = parse_http_url("https://ops%40lab:p%3Ass@prom.example.org/prometheus/");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->prefix, "/prometheus");
  EXPECT_EQ(u->user, "ops@lab");
  EXPECT_EQ(u->password, "p:ss");
  EXPECT_EQ(u->text(), "https://prom.example.org:443/prometheus");  // no credentials
  u = parse_http_url("http://[fd00::7]:9090");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_EQ(u->host, "fd00::7");
  EXPECT_EQ(u->text(), "http://[fd00::7]:9090");
  EXPECT_EQ(parse_http_url("http://10.0.0.1")->port, 80);

  const std::pair<const char*, const char*> bad[] = {
      {"prom:9090", "no http:// or https://"},
      {"ftp://prom", "no http:// or https://"},
      {"http://", "no host"},
      {"http://:9090", "no host"},
      {"http://prom:0", "port '0' is not a number from 1 to 65535"},
      {"http://prom:99999", "port '99999'"},
      {"http://prom:", "':' and no port"},
      {"http://prom:9090/?x=1", "a query or fragment"},
      {"http://prom /x", "a space or control byte"},
      {"http://fd00::7:9090", "without [brackets]"},
      {"http://[fd00::7:9090", "without its ']'"},
      {"http://u:%zz@prom", "a bad %-escape"},
  };
  for (const auto& [text, says] : bad) {
    const auto r = parse_http_url(text);
    ASSERT_FALSE(r) << text;
    EXPECT_THAT(r.error().message(), HasSubstr(says)) << text;
    if (std::string_view(says).find("%-escape") == std::string_view::npos)
      EXPECT_THAT(r.error().message(), HasSubstr("expected http://HOST[:PORT][/PATH]")) << text;
  }
}

TEST(PrometheusApi, AnswersAreReadAndAnythingElseIsSaid) {
  auto v = PrometheusApi::parse_vector(
      200, R"({"status":"success","data":{"resultType":"vector","result":[)"
           R"({"metric":{"instance":"n1:9464"},"value":[1700000000.5,"7.25"]},)"
           R"({"metric":{"instance":"n2:9464"},"value":[1700000000.5,"NaN"]}]}})");
  ASSERT_TRUE(v) << v.error().message();
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].labels.at("instance"), "n1:9464");
  EXPECT_EQ((*v)[0].value, 7.25);
  EXPECT_TRUE(std::isnan((*v)[1].value));
  auto m = PrometheusApi::parse_matrix(
      200, R"({"status":"success","data":{"resultType":"matrix","result":[)"
           R"({"metric":{"instance":"n1"},"values":[[10,"1"],[11,"3"]]}]}})");
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ((*m)[0].points.size(), 2u);
  EXPECT_EQ((*m)[0].points[1], (std::pair<double, double>{11, 3}));

  const std::pair<std::string, const char*> bad[] = {
      {R"({"status":"error","errorType":"bad_data","error":"parse error at char 5"})",
       "Prometheus refused it (HTTP 400): parse error at char 5"},
      {"<html>404 page not found</html>", "is not Prometheus's query API: '<html>404"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[]}})", "no vector result"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}})",
       "is not {\"metric\""},
      {R"({"status":"success","data":{"resultType":"vector","result":[)"
       R"({"metric":{},"value":[1,"seven"]}]}})",
       "is not {\"metric\""},
  };
  for (const auto& [body, says] : bad) {
    const auto r = PrometheusApi::parse_vector(400, body);
    ASSERT_FALSE(r) << body;
    EXPECT_THAT(r.error().message(), HasSubstr(says)) << body;
  }
}

}  // namespace
}  // namespace cluster_report_test
