// dltune in a real one-node Slurm cluster of the test's own (tests/support/slurm_cluster.hpp),
// started from deploy/slurm/slurm.conf.example's lines: the health check that slurmd runs drains
// the node on a critical finding with dltune's reason, resumes it when the finding is fixed, and
// never touches a node an admin drained; bad input changes nothing. As root; the host's
// /dev/shm, which the tests shrink, is restored.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/prometheus.hpp"
#include "support/run.hpp"
#include "support/slurm_cluster.hpp"
#include "unit/gpu/fake_nvml_config.hpp"

namespace slurm_live_test {

using dltune::testing::run;
using dltune::testing::RunResult;
using dltune::testing::SlurmCluster;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace {

std::string explain(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// The size option of the /dev/shm mount that the host's processes see (the last one mounted
// there), from /proc/self/mountinfo's super options ("size=24683548k").
std::string shm_size() {
  std::ifstream in("/proc/self/mountinfo");
  std::string size;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, mp;
    f >> id >> parent >> dev >> root >> mp;
    if (mp != "/dev/shm") continue;
    const auto at = line.find(" size=", line.find(" - "));
    const auto at2 = at == std::string::npos ? line.find(",size=", line.find(" - ")) : at;
    if (at2 == std::string::npos) continue;
    const auto start = at2 + 6;
    size = line.substr(start, line.find_first_of(", \n", start) - start);
  }
  return size;
}

// /dev/shm shrunk to `size` for the test, its size put back at the end.
class ShmSize {
 public:
  ShmSize() : original_(shm_size()) {}
  ~ShmSize() {
    if (!original_.empty()) (void)run({"mount", "-o", "remount,size=" + original_, "/dev/shm"});
  }
  ShmSize(const ShmSize&) = delete;
  ShmSize& operator=(const ShmSize&) = delete;
  [[nodiscard]] std::string set(const std::string& size) const {
    if (original_.empty()) return "no size option on /dev/shm";
    const auto r = run({"mount", "-o", "remount,size=" + size, "/dev/shm"});
    return r.exit_code == 0 ? "" : r.err;
  }
  void restore() const { (void)set(original_); }

 private:
  std::string original_;
};

class SlurmLive : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto why = SlurmCluster::unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
  }
  // Starts this test's cluster; false (with the reason recorded as a failure) when it did not.
  bool start(SlurmCluster::Options options = {}) {
    options.dltune = DLTUNE_BINARY;
    cluster_ = std::make_unique<SlurmCluster>(options);
    EXPECT_EQ(cluster_->error(), "");
    return cluster_->error().empty();
  }
  RunResult health(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "slurm", "health"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto e = cluster_->env();
    e.insert(env.begin(), env.end());
    return run(argv, e);
  }
  std::unique_ptr<SlurmCluster> cluster_;
};

}  // namespace

// Unknown is never healthy: a node drained for a GPU's ECC errors stays drained while NVML cannot
// read that GPU, and is resumed once it reads clean. The GPU is the fake NVML's (this VM has
// none); the health check is run by hand, so that each step's NVML is the test's.
TEST_F(SlurmLive, ANodeDrainedForAGpuStaysDrainedWhileNvmlCannotJudgeIt) {
  ASSERT_TRUE(start());
  auto gpu = dltune::testing::fake_hgx(1);
  const auto step = [&](const nlohmann::json& config) {
    const dltune::testing::FakeNvmlConfig fake(config);
    return health({"--only", "gpu.ecc", "--json"},
                  {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}, {"FAKE_NVML_CONFIG", fake.path()}});
  };
  // An uncorrectable ECC error: drained for gpu.ecc.
  gpu["gpus"][0]["ecc_errors"]["volatile_uncorrected"] = 2;
  auto r = step(gpu);
  ASSERT_EQ(r.exit_code, 1) << explain(r);
  auto j = json::parse(r.out);
  EXPECT_EQ(j["action"], "drain");
  EXPECT_THAT(j["reason"].get<std::string>(), StartsWith("dltune: gpu.ecc: "));

  // The GPU lost: its ECC state cannot be read, so nothing fails, and the node stays drained
  // with a reason that says why.
  auto lost = gpu;
  lost["gpus"][0]["fail"] = {{"nvmlDeviceGetTotalEccErrors", 15}};  // NVML_ERROR_GPU_IS_LOST
  r = step(lost);
  ASSERT_EQ(r.exit_code, 1) << explain(r);
  j = json::parse(r.out);
  EXPECT_EQ(j["healthy"], true);  // nothing judged fails
  EXPECT_EQ(j["action"], "keep-unknown");
  EXPECT_THAT(j["reason"].get<std::string>(), StartsWith("dltune: not judged: gpu.ecc: "));
  EXPECT_THAT(j["reason"].get<std::string>(), HasSubstr("NVML_ERROR_GPU_IS_LOST"));
  ASSERT_EQ(j["unknown"].size(), 1u);
  EXPECT_EQ(j["unknown"][0]["unknown"], true);
  // Slurm has the new reason, and the next check leaves it as it is.
  r = step(lost);
  ASSERT_EQ(r.exit_code, 1) << explain(r);
  j = json::parse(r.out);
  EXPECT_EQ(j["action"], "none");
  EXPECT_THAT(j["state_before"].get<std::string>(), HasSubstr("DRAIN"));
  EXPECT_THAT(j["reason_before"].get<std::string>(), StartsWith("dltune: not judged: gpu.ecc"));

  // Read again and clean: resumed.
  gpu["gpus"][0]["ecc_errors"]["volatile_uncorrected"] = 0;
  r = step(gpu);
  EXPECT_EQ(r.exit_code, 0) << explain(r);
  j = json::parse(r.out);
  EXPECT_EQ(j["action"], "resume");
}

TEST_F(SlurmLive, SlurmdsHealthCheckDrainsOnACriticalFindingAndResumesOnlyWhatItDrained) {
  const ShmSize shm;
  // slurmd runs the example's program every 2 s here (300 in the example), judging /dev/shm
  // alone so that nothing else about this host can drain the node.
  ASSERT_TRUE(start(
      {{}, {}, {{"HealthCheckInterval", "2"}}, {}, {{"dltune-healthcheck", "--only shm.size"}}}));
  const auto starts_with = [](const std::string& prefix) {
    return [prefix](const std::string& s) { return s.rfind(prefix, 0) == 0; };
  };
  const std::string err = shm.set("64M");
  if (!err.empty()) GTEST_SKIP() << "cannot remount /dev/shm here: " << err;

  // A critical finding: slurmd's health check drains the node, with dltune's reason.
  auto now = cluster_->wait_for(starts_with("drained|dltune: shm.size"), 30);
  ASSERT_THAT(now, StartsWith("drained|dltune: shm.size")) << cluster_->logs();
  EXPECT_THAT(now, HasSubstr("64 MiB")) << now;
  EXPECT_LE(now.size(), std::string("drained|").size() + 200) << now;

  // Running it by hand says the same and changes nothing more (exit 1: unhealthy).
  const auto again = health({"--only", "shm.size", "--json"});
  ASSERT_EQ(again.exit_code, 1) << explain(again);
  const auto j = json::parse(again.out);
  EXPECT_EQ(j["action"], "none");
  EXPECT_EQ(j["drained_by_dltune"], true);
  EXPECT_EQ(j["failing"][0]["id"], "shm.size");
  EXPECT_EQ(j["failing"][0]["severity"], "critical");

  // Fixed: the next health check resumes the node it drained.
  shm.restore();
  now = cluster_->wait_for(starts_with("idle|none"), 30);
  EXPECT_EQ(now, "idle|none") << cluster_->logs();

  // A node an admin drained stays drained, with the admin's reason, healthy or not.
  ASSERT_EQ(cluster_
                ->slurm({"scontrol", "update", "nodename=" + cluster_->node(), "state=drain",
                         "reason=disk swap by admin"})
                .exit_code,
            0);
  ASSERT_EQ(shm.set("64M"), "");
  ::sleep(5);  // two health checks
  EXPECT_EQ(cluster_->state_and_reason(), "drained|disk swap by admin");
  shm.restore();
  ::sleep(5);
  EXPECT_EQ(cluster_->state_and_reason(), "drained|disk swap by admin");
  const auto by_hand = health({"--only", "shm.size"});
  EXPECT_EQ(by_hand.exit_code, 0) << explain(by_hand);
  EXPECT_THAT(by_hand.out, HasSubstr("left as it is")) << by_hand.out;
  EXPECT_EQ(cluster_->state_and_reason(), "drained|disk swap by admin");
}

TEST_F(SlurmLive, DryRunJudgesAndChangesNothingAProfileSaysWhatIsCriticalAndABaselineDrains) {
  ASSERT_TRUE(start());
  // A profile of the admin's own makes a finding critical: more /dev/shm than any host has.
  const std::string profile = cluster_->dir() + "/demanding.toml";
  std::ofstream(profile) << "[profile]\nname = \"demanding\"\ndescription = \"test\"\n"
                            "[settings.\"shm.size\"]\nvalue = \">= 1125899906842624\"\n"
                            "severity = \"critical\"\n";
  const auto r = health({"--dry-run", "-p", profile, "--json"});
  ASSERT_EQ(r.exit_code, 1) << explain(r);
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["healthy"], false);
  EXPECT_EQ(j["action"], "drain");
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_THAT(j["reason"].get<std::string>(), StartsWith("dltune: shm.size: /dev/shm is "));
  EXPECT_EQ(cluster_->state_and_reason(), "idle|none");
  const auto text = health({"-n", "-p", profile});
  EXPECT_THAT(text.out, HasSubstr("would be drained")) << text.out;
  EXPECT_EQ(cluster_->state_and_reason(), "idle|none");
  // The same without --dry-run drains; the stock profile then finds nothing critical here
  // (judged on /dev/shm alone) and resumes it.
  EXPECT_EQ(health({"-p", profile}).exit_code, 1);
  EXPECT_THAT(cluster_->state_and_reason(), StartsWith("drained|dltune: shm.size"));
  const auto healed = health({"--only", "shm.size"});
  EXPECT_EQ(healed.exit_code, 0) << explain(healed);
  EXPECT_THAT(healed.out, HasSubstr("resumed")) << healed.out;
  // Just after a resume the controller marks the node not responding ("idle*") until it pings.
  EXPECT_EQ(cluster_->wait_for([](const std::string& s) { return s == "idle|none"; }, 30),
            "idle|none");

  // A hardware baseline that expects a GPU this host does not have drains the node, naming the
  // GPU; this host's own baseline (dltune baseline) finds it as it should be and resumes it.
  const std::string expects_gpu = cluster_->dir() + "/expects-gpu.toml";
  std::ofstream(expects_gpu) << "schema = \"dltune.baseline/1\"\n[gpus]\ncount = 1\n"
                                "[[gpus.device]]\npci_bus_id = \"0000:9a:00.0\"\n";
  const std::string own = cluster_->dir() + "/own.toml";
  const auto written = run({DLTUNE_BINARY, "baseline", "-o", own});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const auto drifted = health({"--only", "baseline.gpu", "--baseline", expects_gpu, "--json"});
  ASSERT_EQ(drifted.exit_code, 1) << explain(drifted);
  EXPECT_EQ(json::parse(drifted.out)["reason"],
            "dltune: baseline.gpu: GPU 0000:9a:00.0 missing: 1 expected, 0 seen");
  EXPECT_EQ(cluster_->state_and_reason(),
            "drained|dltune: baseline.gpu: GPU 0000:9a:00.0 missing: 1 expected, 0 seen");
  const auto as_built = health({"--only", "baseline.gpu", "--baseline", own});
  EXPECT_EQ(as_built.exit_code, 0) << explain(as_built);
  EXPECT_THAT(as_built.out, HasSubstr("resumed")) << as_built.out;
}

TEST_F(SlurmLive, BadInputOrAControllerThatDoesNotAnswerChangesNothing) {
  ASSERT_TRUE(start({{},
                     {"NodeName=elsewhere NodeHostName=elsewhere-host NodeAddr=127.0.0.2 "
                      "CPUs=1 RealMemory=100 State=UNKNOWN"},
                     {},
                     {},
                     {}}));
  const auto unknown = health({"--node", "nosuch"});
  EXPECT_EQ(unknown.exit_code, 2) << explain(unknown);
  EXPECT_THAT(unknown.err, HasSubstr("Node nosuch not found")) << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("left as it is")) << unknown.err;

  const auto other = health({"--node", "elsewhere"});
  EXPECT_EQ(other.exit_code, 2) << explain(other);
  EXPECT_THAT(other.err, HasSubstr("runs on host elsewhere-host, not on this host")) << other.err;

  const auto profile = health({"-p", "no-such-profile"});
  EXPECT_EQ(profile.exit_code, 2) << explain(profile);
  EXPECT_THAT(profile.err, HasSubstr("no-such-profile")) << profile.err;

  const auto no_scontrol = health({}, {{"PATH", "/nonexistent"}});
  EXPECT_EQ(no_scontrol.exit_code, 2) << explain(no_scontrol);
  EXPECT_THAT(no_scontrol.err, HasSubstr("cannot run scontrol")) << no_scontrol.err;

  // A controller that does not answer (stopped): no verdict within --timeout, nothing drained.
  std::ifstream pid_file(cluster_->dir() + "/slurmctld.pid");
  pid_t ctld = 0;
  pid_file >> ctld;
  ASSERT_GT(ctld, 0);
  ASSERT_EQ(::kill(ctld, SIGSTOP), 0);
  const auto hung = health({"--drain-on", "warn", "--timeout", "2s"});
  ::kill(ctld, SIGCONT);
  EXPECT_EQ(hung.exit_code, 2) << explain(hung);
  EXPECT_THAT(hung.err, HasSubstr("no verdict within 2")) << hung.err;
  EXPECT_EQ(cluster_->state_and_reason(), "idle|none");

  // A controller that is gone: scontrol's own error, nothing drained.
  ::kill(ctld, SIGTERM);
  for (int i = 0; i < 100 && ::kill(ctld, 0) == 0; ++i) ::usleep(50'000);
  const auto gone = health({"--drain-on", "warn"});
  EXPECT_EQ(gone.exit_code, 2) << explain(gone);
  EXPECT_THAT(gone.err, HasSubstr("scontrol show node")) << gone.err;
}

// The example's TaskProlog gives every task of a real PyTorch job (DataLoader with workers)
// dltune's defaults, sized to the task's own CPUs, and keeps what the user set.
TEST_F(SlurmLive, TheTaskPrologGivesEachTaskTheDefaultsAndKeepsTheUsers) {
  ASSERT_TRUE(start());
  const std::string job = std::string(DLTUNE_SOURCE_DIR) + "/tests/jobs/slurm_task_env.py";
  // srun --export: exactly these variables (and Slurm's own) reach the tasks, whatever this
  // process's environment holds.
  const auto tasks = [&](const std::string& cpus_per_task, const std::string& ntasks,
                         const std::string& exports) {
    const auto r = cluster_->slurm({"srun", "-n", ntasks, "-c", cpus_per_task,
                                    "--export=PATH,HOME" + exports, "/usr/bin/python3", job},
                                   180);
    EXPECT_EQ(r.exit_code, 0) << explain(r) << cluster_->logs();
    std::vector<json> out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && line[0] == '{') out.push_back(json::parse(line));
    EXPECT_EQ(out.size(), static_cast<std::size_t>(std::stoi(ntasks))) << r.out;
    return out;
  };

  // Two tasks of one CPU each, bound by task/affinity: one thread each, the tuned allocator; the
  // user's MKL_NUM_THREADS kept.
  for (const auto& t : tasks("1", "2", ",MKL_NUM_THREADS=3")) {
    EXPECT_EQ(t["cpus"].size(), 1u) << t;
    EXPECT_EQ(t["env"]["OMP_NUM_THREADS"], "1") << t;
    EXPECT_EQ(t["env"]["MKL_NUM_THREADS"], "3") << t;  // (torch then sizes its pool by MKL's)
    EXPECT_EQ(t["env"]["MALLOC_MMAP_THRESHOLD_"], "33554432") << t;
    EXPECT_EQ(t["env"]["MALLOC_TRIM_THRESHOLD_"], "1073741824") << t;
    EXPECT_GT(t["steps"], 0) << t;
  }
  // The user's own OMP_NUM_THREADS and allocator settings are never replaced.
  for (const auto& t : tasks("1", "1", ",OMP_NUM_THREADS=2,MALLOC_TOP_PAD_=0")) {
    EXPECT_EQ(t["env"]["OMP_NUM_THREADS"], "2") << t;
    EXPECT_EQ(t["env"]["MALLOC_TOP_PAD_"], "0") << t;
    EXPECT_TRUE(t["env"]["MALLOC_MMAP_THRESHOLD_"].is_null()) << t;
  }
  // The job opts out: nothing of dltune's.
  for (const auto& t : tasks("1", "1", ",DLTUNE_TASK_PROLOG=off")) {
    EXPECT_TRUE(t["env"]["OMP_NUM_THREADS"].is_null()) << t;
    EXPECT_TRUE(t["env"]["MALLOC_MMAP_THRESHOLD_"].is_null()) << t;
  }
  // A task with the whole machine's CPUs and its DataLoader workers named: threads = CPUs -
  // workers.
  const int machine = static_cast<int>(std::thread::hardware_concurrency());
  if (machine >= 2) {
    for (const auto& t : tasks(std::to_string(machine), "1", ",DLTUNE_WORKERS=1")) {
      EXPECT_EQ(t["cpus"].size(), static_cast<std::size_t>(machine)) << t;
      EXPECT_EQ(t["env"]["OMP_NUM_THREADS"], std::to_string(machine - 1)) << t;
      EXPECT_EQ(t["torch_threads"], machine - 1) << t;
      EXPECT_EQ(t["workers"], 1) << t;
    }
  }
}

namespace {

// A batch job of the test's cluster on `cpus` CPUs running `python` (by default: hold 64 MiB
// and sleep): its id once it runs.
std::string running_job(
    const SlurmCluster& cluster, const std::string& cpus = "1",
    const std::string& python = "import time; b = bytearray(64 << 20); time.sleep(600)",
    const std::vector<std::string>& more = {}) {
  std::vector<std::string> argv = {"sbatch",     "--parsable", "-c",        cpus,
                                   "--mem=300M", "-o",         "/dev/null", "--chdir=/tmp"};
  argv.insert(argv.end(), more.begin(), more.end());
  // Debian's interpreter by its path: a python3 found on PATH may be a shell shim (pyenv's) that
  // top would catch before it execs the interpreter.
  argv.insert(argv.end(), {"--wrap", "exec /usr/bin/python3 -c '" + python + "'"});
  const auto sub = cluster.slurm(argv);
  EXPECT_EQ(sub.exit_code, 0) << explain(sub);
  const std::string id = sub.out.substr(0, sub.out.find_first_of(";\n"));
  for (int i = 0; i < 120; ++i) {
    const auto q = cluster.slurm({"squeue", "-h", "-j", id, "-o", "%T"});
    if (q.out.rfind("RUNNING", 0) == 0) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ADD_FAILURE() << "job " << id << " did not start\n" << cluster.logs();
  return id;
}

}  // namespace

TEST_F(SlurmLive, AJobIsFollowedByTopAndServedWithItsIdAndUserToPrometheus) {
  using namespace std::chrono_literals;
  if (::access(dltune::testing::PrometheusServer::kBinary, X_OK) != 0)
    GTEST_SKIP() << dltune::testing::PrometheusServer::kBinary
                 << " is missing (Debian's prometheus)";
  ASSERT_TRUE(start());
  const auto id = running_job(*cluster_);
  ASSERT_FALSE(id.empty());

  // top follows the job's processes on this node: they are in its steps' and tasks' groups.
  RunResult top;
  for (int i = 0; i < 40; ++i) {
    top =
        run({DLTUNE_BINARY, "top", "--slurm-job", id, "--once", "--no-gpus"}, {{"COLUMNS", "120"}});
    if (top.exit_code == 0 && top.out.find("python3 -c import tim") != std::string::npos) break;
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_EQ(top.exit_code, 0) << explain(top);
  EXPECT_THAT(top.out, HasSubstr("python3 -c import tim")) << top.out;
  EXPECT_THAT(top.out, HasSubstr("slurmstepd: [" + id + ".batch]")) << top.out;
  EXPECT_THAT(top.out, HasSubstr("/job_" + id)) << "the title names the job's group";
  // A job this node does not run: the jobs it does are named, nothing shown.
  const auto missing = run({DLTUNE_BINARY, "top", "--slurm-job", "999999", "--once"});
  EXPECT_EQ(missing.exit_code, 2) << explain(missing);
  EXPECT_THAT(missing.err, HasSubstr("--slurm-job 999999"));
  EXPECT_THAT(missing.err, HasSubstr("its Slurm jobs: " + id));
  EXPECT_EQ(missing.out, "");

  // serve finds the job by itself; Prometheus scrapes it and has the job's series by its id.
  dltune::testing::Process serve({DLTUNE_BINARY, "serve", "--listen", "127.0.0.1:0", "--interval",
                                  "500ms", "--no-check", "--no-gpus"});
  ASSERT_GT(serve.pid, 0);
  const auto port = serve.wait_for(std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)"), 10s);
  ASSERT_TRUE(port) << serve.err_text;
  char dir[] = "/tmp/dltune-slurm-prom-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  {
    dltune::testing::PrometheusServer prometheus(dir, std::stoi(*port));
    ASSERT_TRUE(prometheus.started());
    const auto memory =
        prometheus.wait_for("dltune_job_memory_bytes{slurm_job_id=\"" + id + "\"}", 30s);
    ASSERT_TRUE(memory) << "no series of job " << id << " in Prometheus after 30 s\n"
                        << prometheus.log() << serve.rest_of_stderr();
    EXPECT_GE(std::stod(*memory), 64.0 * 1024 * 1024) << "the job's bytearray";
    const auto procs =
        prometheus.query("dltune_job_processes{slurm_job_id=\"" + id + "\",user=\"root\"}");
    ASSERT_TRUE(procs) << "the job's user is root here (sbatch as root)";
    EXPECT_GE(std::stoi(*procs), 1);
    // Summed by job, as over a job's nodes: the job's own series are those without a step.
    EXPECT_EQ(prometheus
                  .query("sum by (slurm_job_id) (dltune_job_memory_limit_bytes{slurm_job_id=\"" +
                         id + "\",step=\"\"})")
                  .value_or(""),
              std::to_string(300 * 1024 * 1024))
        << "--mem=300M is the job's memory limit";
    // Its batch step has series of its own, labelled with the step, holding the job's process.
    const auto step = prometheus.query("dltune_job_memory_bytes{slurm_job_id=\"" + id +
                                       "\",step=\"batch\",user=\"root\"}");
    ASSERT_TRUE(step) << "no series of the job's batch step";
    EXPECT_GE(std::stod(*step), 64.0 * 1024 * 1024) << "the bytearray is the batch step's";
  }
  std::filesystem::remove_all(dir);
}

TEST_F(SlurmLive, ARunningJobIsJudgedByEfficiencyAndProfileWithTheReason) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs for the job";
  // The node has two GPUs in Slurm's gres (device files of the test's own) and the job is given
  // both.
  SlurmCluster::Options options;
  options.gpus = 2;
  ASSERT_TRUE(start(options));
  const auto id = running_job(*cluster_, "2", "while True: pass", {"--gres=gpu:2"});
  ASSERT_FALSE(id.empty());
  std::this_thread::sleep_for(std::chrono::seconds(1));  // past python's start
  const auto r = run({DLTUNE_BINARY, "slurm", "efficiency", id, "--duration", "3s", "--json"});
  ASSERT_EQ(r.exit_code, 0) << explain(r);
  const auto e = json::parse(r.out);
  EXPECT_EQ(e["schema"], "dltune.slurm-efficiency/1");
  EXPECT_EQ(e["cpus"], 2) << "its cpuset: -c 2";
  EXPECT_GT(e["cpus_used"].get<double>(), 0.6) << e;
  EXPECT_LT(e["cpus_used"].get<double>(), 1.3) << e;
  EXPECT_FALSE(e["cpu_from_processes"].get<bool>()) << "its group is in cpuacct here";
  ASSERT_FALSE(e["findings"].empty()) << e;
  EXPECT_THAT(e["findings"][0].get<std::string>(), HasSubstr("asked for 2 CPUs and used"));
  EXPECT_THAT(e["findings"][0].get<std::string>(), HasSubstr("one process does the work (python3"));
  EXPECT_THAT(e["action"].get<std::string>(), HasSubstr("--cpus-per-task=1"));
  EXPECT_EQ(e["memory_limit_bytes"], 300 * 1024 * 1024);
  EXPECT_TRUE(e["gpus"].empty()) << "no GPU here";
  // With GPUs (the fake libnvidia-ml, loaded as the driver's): the one the job's process uses,
  // 12% busy, is the job's; the other, busy with another process, was given to the job by Slurm
  // (its SLURM_JOB_GPUS) and the job never used it: that leads the findings.
  {
    std::string pid;
    for (const auto& g : SlurmCluster::cgroup_roots())
      if (g.find("/memory/") != std::string::npos) {
        std::error_code ec;
        for (const auto& f : std::filesystem::recursive_directory_iterator(g, ec))
          if (f.path().filename() == "cgroup.procs" &&
              f.path().string().find("/job_" + id + "/step_batch/") != std::string::npos) {
            std::ifstream in(f.path());
            std::string first;
            if (in >> first) pid = first;
          }
      }
    ASSERT_FALSE(pid.empty()) << "no process in job " << id << "'s batch step";
    const std::string config = cluster_->dir() + "/nvml.json";
    std::ofstream(config)
        << R"({"gpus": [{"name": "NVIDIA A100-SXM4-80GB", "memory_total_bytes": 85899345920,)"
        << R"( "utilization": {"gpu": 12, "memory": 3}, "processes": [{"pid": )" << pid
        << R"(, "used_memory_bytes": 2147483648}]}, {"name": "NVIDIA A100-SXM4-80GB",)"
        << R"( "utilization": {"gpu": 99, "memory": 50},)"
        << R"( "processes": [{"pid": 1, "used_memory_bytes": 1}]}]})";
    const auto g = run({DLTUNE_BINARY, "slurm", "efficiency", id, "--duration", "2s", "--json"},
                       {{"DLTUNE_NVML_LIBRARY", DLTUNE_FAKE_NVML}, {"FAKE_NVML_CONFIG", config}});
    ASSERT_EQ(g.exit_code, 0) << explain(g);
    const auto ge = json::parse(g.out);
    ASSERT_EQ(ge["gpus"].size(), 2u) << ge.dump(2);
    EXPECT_EQ(ge["gpus"][0]["index"], 0);
    EXPECT_EQ(ge["gpus"][0]["utilization_pct"], 12.0);
    EXPECT_EQ(ge["gpus"][0]["memory_bytes"], 2147483648u);
    EXPECT_EQ(ge["gpus"][0]["allocated"], true);
    EXPECT_EQ(ge["gpus"][0]["used"], true);
    EXPECT_EQ(ge["gpus"][1]["index"], 1);
    EXPECT_EQ(ge["gpus"][1]["allocated"], true) << "Slurm gave it";
    EXPECT_EQ(ge["gpus"][1]["used"], false) << "pid 1 is not the job's";
    EXPECT_EQ(ge["gpus"][1]["memory_bytes"], 0u);
    ASSERT_GE(ge["findings"].size(), 2u) << ge.dump(2);
    EXPECT_THAT(ge["findings"][0].get<std::string>(),
                HasSubstr("Slurm gave the job 2 GPU(s) and none of its processes used GPU 1"));
    EXPECT_THAT(ge["findings"][1].get<std::string>(), HasSubstr("GPU 0 12%"));
    EXPECT_THAT(ge["findings"][1].get<std::string>(), Not(HasSubstr("GPU 1 ")));
    EXPECT_THAT(ge["action"].get<std::string>(), HasSubstr("--gres=gpu:1"));
  }
  // The text says the same; bad input changes nothing and names the input.
  const auto text = run({DLTUNE_BINARY, "slurm", "efficiency", id, "--duration", "1s"});
  EXPECT_EQ(text.exit_code, 0) << explain(text);
  EXPECT_THAT(text.out, HasSubstr("Action: ask for 1 CPU (--cpus-per-task=1)"));
  for (const std::string bad : {"999999", "abc"}) {
    const auto b = run({DLTUNE_BINARY, "slurm", "efficiency", bad, "--duration", "1s"});
    EXPECT_EQ(b.exit_code, 2) << explain(b);
    EXPECT_THAT(b.err, HasSubstr("--slurm-job " + bad));
    EXPECT_EQ(b.out, "");
  }
  // The Epilog by hand on a job that still runs here is refused, its watch left running.
  const auto early = run({DLTUNE_BINARY, "slurm", "epilog", "--job", id, "--state-dir",
                          cluster_->state_dir(), "--report-dir", cluster_->report_dir()});
  EXPECT_EQ(early.exit_code, 2) << explain(early);
  EXPECT_THAT(early.err, HasSubstr("still runs on this node"));
  EXPECT_FALSE(std::filesystem::exists(cluster_->report_dir() + "/job-" + id + ".json"));
  (void)cluster_->slurm({"scancel", id});

  // profile --slurm-job: the bottleneck of a real training job from its group's processes.
  // A heavy model with cheap data (profile_live_test's compute-bound job), as a batch job on two
  // CPUs: its processes are python and its DataLoader worker, below slurmstepd in its group.
  const std::string job = std::string(DLTUNE_SOURCE_DIR) + "/tests/jobs/train_profile.py";
  const auto sub = cluster_->slurm(
      {"sbatch", "--parsable", "-c", "2", "--mem=2G", "-o", cluster_->dir() + "/job.out",
       "--chdir=/tmp", "--wrap",
       "exec /usr/bin/python3 " + job + " --workers 1 --channels 64 --layers 3 --seconds 90"});
  ASSERT_EQ(sub.exit_code, 0) << explain(sub);
  const std::string job_id = sub.out.substr(0, sub.out.find_first_of(";\n"));
  // The training loop runs (once the first job has left its CPUs): its progress line counts
  // steps.
  bool steps = false;
  for (int i = 0; i < 360 && !steps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    std::ifstream out(cluster_->dir() + "/job.out");
    std::stringstream progress;
    progress << out.rdbuf();
    steps = progress.str().find("it/s]") != std::string::npos;
  }
  ASSERT_TRUE(steps) << "the job did not start training\n" << cluster_->logs();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // Meanwhile a recording of the job is kept, for its efficiency's reason below.
  const std::string recording = cluster_->dir() + "/job.db";
  dltune::testing::Process record({DLTUNE_BINARY, "record", "--slurm-job", job_id, "-o", recording,
                                   "--duration", "10s", "--interval", "250ms", "--no-gpus",
                                   "--quiet"});
  const auto p = run({DLTUNE_BINARY, "profile", "--slurm-job", job_id, "--duration", "10s",
                      "--json", "--no-gpus"});
  ASSERT_EQ(p.exit_code, 0) << explain(p);
  const auto j = json::parse(p.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << explain(p);
  EXPECT_EQ(j["result"].value("rule", ""), "compute-bound-cpu") << j.dump(2);
  EXPECT_THAT(j.dump(), HasSubstr("Slurm job " + job_id)) << "the source names the job";
  ASSERT_EQ(record.wait_exit(std::chrono::seconds(30)), 0) << record.rest_of_stderr();
  // efficiency --recording: the numbers, and why from the recording's verdict.
  const auto why = run({DLTUNE_BINARY, "slurm", "efficiency", job_id, "--duration", "2s",
                        "--recording", recording, "--json"});
  ASSERT_EQ(why.exit_code, 0) << explain(why);
  const auto w = json::parse(why.out, nullptr, false);
  ASSERT_TRUE(w.is_object()) << explain(why);
  EXPECT_EQ(w["bottleneck"]["rule"], "compute-bound-cpu") << w.dump(2);
  EXPECT_EQ(w["bottleneck"]["verdict"], j["result"]["verdict"]) << w.dump(2);
  EXPECT_EQ(w["bottleneck"]["recording"], recording);
  EXPECT_GE(w["bottleneck"]["samples"].get<int>(), 10) << w.dump(2);
  const auto why_text = run(
      {DLTUNE_BINARY, "slurm", "efficiency", job_id, "--duration", "1s", "--recording", recording});
  EXPECT_EQ(why_text.exit_code, 0) << explain(why_text);
  EXPECT_THAT(why_text.out, HasSubstr("Bottleneck ("));
  EXPECT_THAT(why_text.out, HasSubstr("of recording " + recording +
                                      "): " + j["result"]["verdict"].get<std::string>()));
  // Another job's recording is refused, naming whose it is; nothing is measured.
  const auto other =
      run({DLTUNE_BINARY, "slurm", "efficiency", id, "--duration", "1s", "--recording", recording});
  EXPECT_EQ(other.exit_code, 2) << explain(other);
  EXPECT_THAT(other.err, HasSubstr("not a recording of Slurm job " + id));
  EXPECT_THAT(other.err, HasSubstr("it is job " + job_id + "'s"));
  EXPECT_EQ(other.out, "");
  // A job this node does not run changes nothing and says which it runs.
  const auto missing = run({DLTUNE_BINARY, "profile", "--slurm-job", "999999", "--duration", "2s"});
  EXPECT_EQ(missing.exit_code, 2) << explain(missing);
  EXPECT_THAT(missing.err, HasSubstr("999999"));
  (void)cluster_->slurm({"scancel", job_id});
}

namespace {

// Job `id`'s report once the Epilog has written it (null after `seconds`).
json job_report(const SlurmCluster& cluster, const std::string& id, int seconds = 90) {
  const std::string path = cluster.report_dir() + "/job-" + id + ".json";
  for (int i = 0; i < seconds * 4; ++i) {
    std::ifstream in(path);
    if (in) {
      std::stringstream s;
      s << in.rdbuf();
      auto j = json::parse(s.str(), nullptr, false);
      if (!j.is_discarded()) return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return nullptr;
}

std::string submit(const SlurmCluster& cluster, const std::string& mem, const std::string& python) {
  const auto sub =
      cluster.slurm({"sbatch", "--parsable", "-c", "1", "--mem=" + mem, "-o", "/dev/null",
                     "--chdir=/tmp", "--wrap", "exec /usr/bin/python3 -c '" + python + "'"});
  EXPECT_EQ(sub.exit_code, 0) << explain(sub);
  return sub.out.substr(0, sub.out.find_first_of(";\n"));
}

}  // namespace

TEST_F(SlurmLive, TheEpilogReportsEachJobWithItsPeakAndAnOomKillNamingItsVictim) {
  ASSERT_TRUE(start());
  // One job holds 150 MiB for 3 s and ends well; one asks for 100M and allocates 400 MiB.
  const auto ok = submit(*cluster_, "300M", "import time; b = bytearray(150 << 20); time.sleep(3)");
  const auto killed = submit(*cluster_, "100M", "b = bytearray(400 << 20)");
  ASSERT_FALSE(ok.empty());
  ASSERT_FALSE(killed.empty());

  const auto good = job_report(*cluster_, ok);
  ASSERT_FALSE(good.is_null()) << "no report of job " << ok << "\n" << cluster_->logs();
  EXPECT_EQ(good["schema"], "dltune.slurm-job-report/1");
  EXPECT_EQ(good["job_id"], ok);
  EXPECT_EQ(good["user"], "root");
  EXPECT_EQ(good["node"], cluster_->node());
  ASSERT_FALSE(good["record"].is_null()) << good.dump(2);
  EXPECT_GE(good["record"]["samples"].get<int>(), 2) << "the watcher sampled the running job";
  EXPECT_TRUE(good["record"]["ended"].get<bool>()) << "the Epilog stopped its watcher";
  const auto& e = good["efficiency"];
  EXPECT_GE(e["memory_peak_bytes"].get<std::uint64_t>(), 150u << 20) << e.dump(2);
  EXPECT_EQ(e["memory_limit_bytes"], 300 * 1024 * 1024);
  EXPECT_EQ(e["cpus"], 1);
  EXPECT_EQ(e["oom_kills"], 0);
  EXPECT_TRUE(good["events"].empty()) << good.dump(2);

  const auto bad = job_report(*cluster_, killed);
  ASSERT_FALSE(bad.is_null()) << "no report of job " << killed << "\n" << cluster_->logs();
  bool victim = false;
  for (const auto& ev : bad["events"])
    if (ev["kind"] == "oom_kill" && ev["fields"]["task"] == "python3" &&
        ev["fields"]["cgroup"].get<std::string>().find("/job_" + killed + "/") != std::string::npos)
      victim = true;
  EXPECT_TRUE(victim) << "the kernel's kill of python3 in the job's cgroup\n" << bad.dump(2);
  ASSERT_FALSE(bad["efficiency"].is_null()) << bad.dump(2);
  EXPECT_GE(bad["efficiency"]["oom_kills"].get<int>(), 1);
  EXPECT_THAT(bad["action"].get<std::string>(), HasSubstr("ask for more memory"));

  // Both jobs' numbers as metrics for node_exporter's textfile collector, in a form promtool
  // takes. Each Epilog writes its job's report, then the metrics file from every report: the
  // later job's may have written its report and not yet the file (waited for, with a bound).
  std::string prom;
  for (int i = 0; i < 80; ++i) {
    prom = run({"cat", cluster_->textfile()}).out;
    if (prom.find("slurm_job_id=\"" + ok + "\"") != std::string::npos &&
        prom.find("slurm_job_id=\"" + killed + "\"") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_THAT(prom, HasSubstr("dltune_slurm_job_oom_kills{slurm_job_id=\"" + killed +
                              "\",user=\"root\"} 1"));
  EXPECT_THAT(prom, HasSubstr("dltune_slurm_job_memory_limit_bytes{slurm_job_id=\"" + ok +
                              "\",user=\"root\"} 314572800"));
  if (::access("/usr/bin/promtool", X_OK) == 0) {
    const auto check = run({"sh", "-c", "promtool check metrics < " + cluster_->textfile()});
    EXPECT_EQ(check.exit_code, 0) << explain(check) << prom;
  }

  // The watchers are gone with their state; efficiency reads a finished job's report back.
  EXPECT_TRUE(std::filesystem::is_empty(cluster_->state_dir()));
  const auto text =
      run({DLTUNE_BINARY, "slurm", "efficiency", killed, "--report-dir", cluster_->report_dir()});
  EXPECT_EQ(text.exit_code, 0) << explain(text);
  EXPECT_THAT(text.out, HasSubstr("Slurm job " + killed + " on " + cluster_->node()));
  EXPECT_THAT(text.out, HasSubstr("killed for memory: python3 (pid "));
  EXPECT_THAT(text.out, HasSubstr("Action: ask for more memory: --mem=150M or more"))
      << "half again its limit, which it reached";
  const auto none =
      run({DLTUNE_BINARY, "slurm", "efficiency", "999999", "--report-dir", cluster_->report_dir()});
  EXPECT_EQ(none.exit_code, 2) << explain(none);
  EXPECT_THAT(none.err, HasSubstr("no report of it in " + cluster_->report_dir()));
  // By hand, a job id that is not one changes nothing.
  const auto wrong = run(
      {DLTUNE_BINARY, "slurm", "epilog", "--job", "../x", "--report-dir", cluster_->report_dir()});
  EXPECT_EQ(wrong.exit_code, 2) << explain(wrong);
  EXPECT_THAT(wrong.err, HasSubstr("not a Slurm job id"));
}

// `srun dltune run --memory 100M -- ...` in a step of 1 GiB: the job's groups are made inside the
// task's (the job itself sees them in /proc/self/cgroup), its 100 MiB binds (the kernel kills it
// there, not at the step's 1 GiB), the CPU quota is a share of the allocation, and when the step
// ends nothing of dltune's is left in it, so that Slurm removes the job's groups.
TEST_F(SlurmLive, RunInsideAJobNestsInTheStepsGroupAndItsLimitBinds) {
  ASSERT_TRUE(start());
  // One CPU of the host's (all of them on a host of one).
  const int host_cpus = static_cast<int>(std::thread::hardware_concurrency());
  const int cpus = 1;
  const std::string python =
      "import sys; sys.stdout.write(open('/proc/self/cgroup').read()); sys.stdout.flush(); "
      "b = bytearray(300 << 20)";
  // --json -: the summary alone on standard output, the job's own on standard error.
  const auto r = cluster_->slurm(
      {"srun", "-n1", "-c", std::to_string(cpus), "--mem=1G", DLTUNE_BINARY, "run", "--json", "-",
       "--memory", "100M", "--cpu-quota", "50%", "--", "/usr/bin/python3", "-c", python},
      180);
  ASSERT_NE(r.out.find('{'), std::string::npos) << explain(r) << cluster_->logs();
  const auto j = json::parse(r.out.substr(r.out.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << explain(r);
  ASSERT_TRUE(j["slurm"].is_object()) << j.dump(2);
  const std::string id = j["slurm"]["job_id"];
  EXPECT_EQ(j["slurm"]["step"], "0");
  const std::string name = j["name"];
  const std::string inside = "/job_" + id + "/step_0/task_0/dltune/" + name;
  // The job ran in the groups inside the task's: the memory one among them.
  EXPECT_THAT(r.err, ::testing::ContainsRegex(":memory:/slurm[^\n]*" + inside + "\n"))
      << "the job's own /proc/self/cgroup\n"
      << explain(r);
  bool memory_dir = false;
  for (const auto& d : j["cgroup"]["directories"])
    if (d.get<std::string>().starts_with("/sys/fs/cgroup/memory/slurm") &&
        d.get<std::string>().ends_with(inside))
      memory_dir = true;
  EXPECT_TRUE(memory_dir) << j["cgroup"].dump(2);
  // The limit binds: killed at 100 MiB inside a step allowed 1 GiB.
  EXPECT_EQ(j["cgroup"]["verified"]["memory_bytes"], 100 * 1024 * 1024);
  EXPECT_GE(j["cgroup"]["stats"]["oom_kills"].get<int>(), 1) << j.dump(2);
  EXPECT_LE(j["cgroup"]["stats"]["memory_peak_bytes"].get<std::uint64_t>(), 101u << 20);
  bool victim = false;
  for (const auto& v : j["oom_victims"])
    if (v["task"] == "python3") victim = true;
  EXPECT_TRUE(victim) << j["oom_victims"].dump();
  // Half of the allocation's CPUs, not of the host's.
  EXPECT_DOUBLE_EQ(j["cgroup"]["verified"]["cpu_quota_cpus"].get<double>(), cpus / 2.0);
  bool noted = false;
  const std::string note = fmt::format("Slurm job {}'s on this node, ", id);
  for (const auto& n : j["notes"])
    if (n.get<std::string>().find(note) != std::string::npos &&
        n.get<std::string>().find(fmt::format("(1 of the host's {})", host_cpus)) !=
            std::string::npos)
      noted = true;
  EXPECT_TRUE(noted) << j["notes"].dump(2);
  // Nothing of dltune's is left in the step, so Slurm removes the job's groups at its end.
  std::set<std::string> left;
  for (int i = 0; i < 40; ++i) {
    left.clear();
    for (const auto& g : SlurmCluster::cgroup_roots()) {
      std::error_code ec;
      for (const auto& e : std::filesystem::recursive_directory_iterator(g, ec)) {
        const auto p = e.path().string();
        if (e.is_directory() && p.find("/job_" + id) != std::string::npos) left.insert(p);
      }
    }
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(left.empty()) << "job " << id
                            << "'s groups are still there: " << ::testing::PrintToString(left)
                            << "\n"
                            << cluster_->logs();
}

}  // namespace slurm_live_test
