// `dltune slurm report` against a real Prometheus that scrapes two `dltune serve` processes
// standing for two nodes of one Slurm job. Each serve reads a host tree of its own (--root: its
// hostname, the job's v2 group below slurmstepd.scope with an 8-CPU cpuset, a memory limit and
// peak, two processes in its step) and a fake NVML of its own (two GPUs, each running one of
// the job's processes). While Prometheus scrapes, the test advances the groups' CPU counters as
// a kernel would: node-a uses 7.2 CPUs, node-b, the slowed one, 3.0 with its CPU quota
// throttling 60% of its periods, and its GPUs a third as busy. The report must find both nodes by
// their names, measure each one's use, and name node-b as the node that held the other back; a
// job Prometheus never saw is bad input naming the window.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unit/gpu/fake_nvml_config.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/prometheus.hpp"
#include "support/run.hpp"
#include "support/temp_tree.hpp"

namespace slurm_report_live_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using dltune::testing::Process;
using dltune::testing::TempTree;

constexpr const char* kJob = "4242";
constexpr const char* kJobDir = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_4242";
constexpr double kGiB = 1024.0 * 1024 * 1024;

// One node: its tree, its fake NVML's config, its serve.
struct Node {
  std::string name;
  double cpus_used = 0;              // what its counter advances by, per second
  double throttled_share = 0;        // of its 10 periods a second
  std::array<unsigned, 2> sm_pct{};  // each GPU's share used by the job's process on it
  std::uint64_t peak = 0;
  TempTree tree;
  fs::path nvml_config;
  std::optional<Process> serve;
  int port = 0;

  Node(std::string n, double used, double throttled, std::array<unsigned, 2> sm,
       std::uint64_t peak_bytes)
      : name(std::move(n)),
        cpus_used(used),
        throttled_share(throttled),
        sm_pct(sm),
        peak(peak_bytes) {
    tree.write("proc/sys/kernel/hostname", name + "\n");
    tree.write("proc/stat",
               "cpu  300 0 100 1000 0 0 0 0 0 0\ncpu0 300 0 100 1000 0 0 0 0 0 0\n"
               "ctxt 10\nprocesses 5\nprocs_running 1\nprocs_blocked 0\n");
    tree.write("proc/meminfo", "MemTotal:       65536000 kB\nMemFree:        32768000 kB\n");
    tree.write("proc/vmstat", "pgfault 1\n");
    tree.write("proc/self/mountinfo",
               "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 "
               "cgroup2 rw,nsdelegate,memory_recursiveprot\n");
    const std::string j = kJobDir;
    tree.write(j + "/cgroup.procs", "");
    tree.write(j + "/cpuset.cpus.effective", "0-7\n");
    tree.write(j + "/cpu.max", "800000 100000\n");
    tree.write(j + "/memory.current", std::to_string(peak / 2) + "\n");
    tree.write(j + "/memory.peak", std::to_string(peak) + "\n");
    tree.write(j + "/memory.max", std::to_string(static_cast<std::uint64_t>(32 * kGiB)) + "\n");
    tree.write(j + "/memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
    tree.write(j + "/step_0/cgroup.procs", "5001\n5002\n");
    advance(0);
    auto config = dltune::testing::fake_hgx(2);
    for (unsigned g = 0; g < 2; ++g) {
      auto& gpu = config["gpus"][g];
      gpu["uuid"] = fmt::format("GPU-{}-{}", name, g);
      gpu["processes"] = {{{"pid", 5001 + g}, {"used_memory_bytes", 4294967296ull}}};
      gpu["process_utilization"] = {{{"pid", 5001 + g}, {"sm", sm_pct[g]}, {"mem", 10}}};
    }
    nvml_config = tree.dir() / "fake-nvml.json";
    std::ofstream(nvml_config) << config.dump();
  }

  // The job's cpu.stat after `seconds` of running: written in place at a fixed width, as the
  // kernel's file never reads back empty or torn (serve keeps it open and reads it again).
  void advance(double seconds) const {
    const double periods = 10 * seconds;
    const auto text = fmt::format(
        "usage_usec {:015d}\nuser_usec {:015d}\nsystem_usec {:015d}\nnr_periods {:015d}\n"
        "nr_throttled {:015d}\nthrottled_usec {:015d}\n",
        static_cast<long long>(cpus_used * seconds * 1e6),
        static_cast<long long>(cpus_used * seconds * 0.9e6),
        static_cast<long long>(cpus_used * seconds * 0.1e6), static_cast<long long>(periods),
        static_cast<long long>(periods * throttled_share),
        static_cast<long long>(periods * throttled_share * 20000));
    const auto path = tree.dir() / kJobDir / "cpu.stat";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(::pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    ::close(fd);
  }

  void start() {
    ::setenv("FAKE_NVML_CONFIG", nvml_config.c_str(), 1);
    ::setenv("DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML, 1);
    serve.emplace(std::vector<std::string>{DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0",
                                           "--interval", "500ms", "--no-check", "--root",
                                           tree.dir().string()});
    ::unsetenv("DLTUNE_NVML_LIBRARY");
    ::unsetenv("FAKE_NVML_CONFIG");
    ASSERT_GT(serve->pid, 0);
    const auto port_text =
        serve->wait_for(std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)"), 10s);
    ASSERT_TRUE(port_text) << serve->err_text;
    port = std::stoi(*port_text);
  }
};

const nlohmann::json* node_of(const nlohmann::json& report, const std::string& name) {
  for (const auto& n : report["nodes"])
    if (n["node"] == name) return &n;
  return nullptr;
}

TEST(SlurmReportLive, TwoNodesScrapedByPrometheusAndTheSlowOneNamed) {
  for (const char* tool : {"/usr/bin/prometheus"})
    if (::access(tool, X_OK) != 0) GTEST_SKIP() << tool << " is missing (Debian's prometheus)";
  Node a("node-a", 7.2, 0.0, {90, 90}, static_cast<std::uint64_t>(6 * kGiB));
  Node b("node-b", 3.0, 0.6, {40, 20}, static_cast<std::uint64_t>(5 * kGiB));
  ASSERT_NO_FATAL_FAILURE(a.start());
  ASSERT_NO_FATAL_FAILURE(b.start());
  TempTree prom_dir;
  dltune::testing::PrometheusServer prometheus(prom_dir.dir() / "prometheus", {a.port, b.port});
  ASSERT_TRUE(prometheus.started());

  // The counters advance as the job runs, until the test ends it.
  std::atomic<bool> stop{false};
  const auto began = std::chrono::steady_clock::now();
  std::thread clock([&] {
    while (!stop) {
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      a.advance(t);
      b.advance(t);
      std::this_thread::sleep_for(100ms);
    }
  });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop = true;
      t.join();
    }
  } join{stop, clock};

  // Both nodes' job series in Prometheus, then enough scrapes for rates (one a second).
  const auto both = prometheus.wait_for(
      "count(dltune_job_gpu_utilization_ratio{slurm_job_id=\"4242\",step=\"\"}) == 4", 30s);
  ASSERT_TRUE(both) << "Prometheus has not both nodes' job series after 30 s: "
                    << prometheus.target_error() << "\n"
                    << prometheus.log() << a.serve->rest_of_stderr() << b.serve->rest_of_stderr();
  std::this_thread::sleep_for(6s);

  auto report = [&](std::vector<std::string> more) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "slurm",        "report",
                                     kJob,          "--prometheus", prometheus.url()};
    argv.insert(argv.end(), more.begin(), more.end());
    return dltune::testing::run(argv);
  };
  const auto r = report({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "dltune.slurm-report/1");
  EXPECT_EQ(j["job_id"], kJob);
  EXPECT_EQ(j["running"], true);
  ASSERT_EQ(j["nodes"].size(), 2u) << j.dump(2);
  const auto* na = node_of(j, "node-a");
  const auto* nb = node_of(j, "node-b");
  ASSERT_TRUE(na && nb) << "the nodes by their hostnames (dltune_build_info): " << j.dump(2);
  EXPECT_NE((*na)["instance"], (*nb)["instance"]);
  for (const auto* n : {na, nb}) {
    EXPECT_EQ((*n)["cpus"], 8) << "the cpuset";
    EXPECT_EQ((*n)["cpu_quota_cpus"], 8);
    EXPECT_EQ((*n)["memory_limit_bytes"], 32 * kGiB);
    EXPECT_EQ((*n)["oom_kills"], 0);
    ASSERT_EQ((*n)["gpus"].size(), 2u) << n->dump(2);
    EXPECT_EQ((*n)["gpus"][0]["memory_bytes"], 4294967296.0);
  }
  EXPECT_NEAR((*na)["cpus_used"].get<double>(), 7.2, 0.8) << j.dump(2);
  EXPECT_NEAR((*nb)["cpus_used"].get<double>(), 3.0, 0.4) << j.dump(2);
  EXPECT_NEAR((*na)["cpu_throttled_share"].get<double>(), 0.0, 0.01);
  EXPECT_NEAR((*nb)["cpu_throttled_share"].get<double>(), 0.6, 0.1);
  EXPECT_NEAR((*na)["gpu_utilization"].get<double>(), 0.9, 0.01);
  EXPECT_NEAR((*nb)["gpu_utilization"].get<double>(), 0.3, 0.01);
  EXPECT_EQ((*na)["memory_peak_bytes"], 6 * kGiB);
  EXPECT_EQ((*nb)["memory_peak_bytes"], 5 * kGiB);
  EXPECT_GE(j["seconds"].get<double>(), 5.0);
  EXPECT_EQ(j["held_back_by"], "node-b") << j.dump(2);
  EXPECT_NE(j["held_back_why"].get<std::string>().find(
                "busy 30% of the time, GPU 1 the least (20%), the other 1 node(s)' 90%"),
            std::string::npos)
      << j["held_back_why"];
  const std::string action = j["action"];
  EXPECT_NE(action.find("on node-b"), std::string::npos) << action;
  EXPECT_NE(action.find("dltune profile --slurm-job 4242"), std::string::npos) << action;
  // A peak of 6 GiB of 32: the memory it never used.
  bool memory_said = false;
  for (const auto& f : j["findings"])
    memory_said |= f.get<std::string>().find("limit of 32 GiB") != std::string::npos;
  EXPECT_TRUE(memory_said) << j["findings"].dump(2);

  // The text: a line per node and the node named.
  const auto text = report({});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Slurm job 4242 on 2 node(s)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("node-b held the others back"), std::string::npos) << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex("\n  node-a +7\\.[0-9] of 8 "))) << text.out;

  // The job ends: its groups go, serve stops exporting them, Prometheus marks them stale. The
  // report is of the ended job: not running, and its span stops where its series stopped.
  stop = true;
  fs::remove_all(a.tree.dir() / kJobDir);
  fs::remove_all(b.tree.dir() / kJobDir);
  std::this_thread::sleep_for(4s);
  const auto ended = report({"--json"});
  ASSERT_EQ(ended.exit_code, 0) << ended.err;
  const auto e = nlohmann::json::parse(ended.out);
  EXPECT_EQ(e["running"], false) << e.dump(2);
  EXPECT_EQ(e["held_back_by"], "node-b");
  EXPECT_EQ(e["nodes"].size(), 2u);
  EXPECT_NE(e["action"].get<std::string>().find("node-b"), std::string::npos) << e["action"];

  // Within a shorter window too; a job Prometheus never saw is bad input naming the job and
  // the window.
  EXPECT_EQ(report({"--lookback", "1h"}).exit_code, 0);
  const auto missing = dltune::testing::run({DLTUNE_BINARY, "slurm", "report", "999",
                                             "--prometheus", prometheus.url(), "--lookback", "1h"});
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_NE(missing.err.find("no series of Slurm job 999 in the last 1 h"), std::string::npos)
      << missing.err;
  // A Prometheus that is not there: a failure, naming where it was asked.
  const int closed = dltune::testing::free_port();
  const auto refused = dltune::testing::run({DLTUNE_BINARY, "slurm", "report", kJob, "--prometheus",
                                             fmt::format("http://127.0.0.1:{}", closed)});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find(fmt::format("no answer from http://127.0.0.1:{}", closed)),
            std::string::npos)
      << refused.err;
}

}  // namespace
}  // namespace slurm_report_live_test
