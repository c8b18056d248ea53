// `dltune run` on this machine's real kernel and cgroups, as root: a real PyTorch training job
// (Debian's python3-torch, CPU, a DataLoader with workers) and small jobs that hit the limits.
// Every test checks that the job's cgroup is gone afterwards.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/host_values.hpp"
#include "support/run.hpp"

namespace run_live_test {

using dltune::testing::run;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kJob = std::string(DLTUNE_SOURCE_DIR) + "/tests/jobs/train_cpu.py";

std::string slurp(const fs::path& p) {
  return dltune::testing::slurp(p.string()).value_or("");
}

// Every directory named `name` under any cgroup hierarchy's dltune group.
std::vector<std::string> leftovers(const std::string& name) {
  std::vector<std::string> out;
  for (const auto& h : fs::directory_iterator("/sys/fs/cgroup")) {
    for (const auto& p : {h.path() / "dltune" / name, fs::path("/sys/fs/cgroup/dltune") / name})
      if (fs::exists(p)) out.push_back(p.string());
  }
  return out;
}

class RunLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "run creates cgroups: needs root";
    name_ = "test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (name_.size() > 64) name_.resize(64);
    dir_ = fs::path(::testing::TempDir()) / ("run_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::all);
  }
  void TearDown() override {
    if (!name_.empty()) {
      const auto left = leftovers(name_);
      EXPECT_TRUE(left.empty()) << left.front();
    }
    fs::remove_all(dir_);
  }
  // dltune run --name NAME --json SUMMARY --force OPTIONS -- COMMAND (a test may run twice)
  dltune::testing::RunResult dltune_run(std::vector<std::string> options,
                                        std::vector<std::string> command,
                                        std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "run",    "--name",
                                     name_,         "--json", (dir_ / "summary.json").string(),
                                     "--force"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return run(argv, env, 300);
  }
  json summary() const { return json::parse(slurp(dir_ / "summary.json")); }

  std::string name_;
  fs::path dir_;
};

// Every key of the summary (at any depth, below "environment" only names) appears in backquotes
// in docs/json.md's section for it.
std::vector<std::string> undocumented(const json& j, const std::string& doc,
                                      const std::string& where = "") {
  std::vector<std::string> out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (doc.find("`" + k + "`") == std::string::npos) out.push_back(where + k);
    if (k == "environment") continue;
    for (auto& m : undocumented(v, doc, where + k + ".")) out.push_back(m);
  }
  return out;
}

std::string run_section_of_the_docs() {
  const auto doc = slurp(std::string(DLTUNE_SOURCE_DIR) + "/docs/json.md");
  const auto start = doc.find("## `dltune run --json FILE`");
  const auto end = doc.find("\n## ", start + 1);
  return start == std::string::npos ? "" : doc.substr(start, end - start);
}

// The JSON line the training job prints last.
json job_report(const std::string& out) {
  const auto start = out.rfind("{\"uid\"");
  return start == std::string::npos ? json() : json::parse(out.substr(start));
}

}  // namespace

TEST_F(RunLive, APyTorchJobRunsAsTheSudoUserWithItsRateInTheSummary) {
  const auto r = dltune_run({"--cpus", "0", "--allocator", "glibc-tuned"},
                            {"/usr/bin/python3", kJob, "--samples", "640", "--workers", "1"},
                            {{"SUDO_UID", "65534"}, {"SUDO_GID", "65534"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto job = job_report(r.out);
  ASSERT_FALSE(job.is_null()) << r.out;
  EXPECT_EQ(job["uid"], 65534);
  EXPECT_EQ(job["gid"], 65534);
  EXPECT_EQ(job["cpus_allowed"], "0");
  EXPECT_EQ(job["env"]["OMP_NUM_THREADS"], "1");  // one CPU
  EXPECT_EQ(job["env"]["MALLOC_MMAP_THRESHOLD_"], "33554432");
  const auto s = summary();
  EXPECT_EQ(s["exit_code"], 0);
  EXPECT_EQ(s["user"], "nobody");
  EXPECT_EQ(s["placement"]["cpus"], "0");
  ASSERT_GT(s["progress"].value("samples", 0), 0) << s.dump(2);
  EXPECT_EQ(s["progress"]["unit"], "it/s");
  EXPECT_GT(s["progress"]["median_rate"].get<double>(), 0.0);
  // What tqdm printed and what the job measured itself agree in size (a loose, non-timing
  // check: the same order of magnitude).
  const double own = job["steps_per_second"];
  const double seen = s["progress"]["median_rate"];
  EXPECT_GT(seen, own / 10);
  EXPECT_LT(seen, own * 10);
  EXPECT_GT(s["cgroup"]["stats"].value("cpu_seconds", 0.0), 0.0);
  EXPECT_NE(r.err.find("dltune run:"), std::string::npos);  // the text summary
  const auto section = run_section_of_the_docs();
  ASSERT_FALSE(section.empty());
  EXPECT_TRUE(undocumented(s, section).empty())
      << ::testing::PrintToString(undocumented(s, section));
}

TEST_F(RunLive, AJobPastItsMemoryLimitIsKilledAndTheSummarySaysSo) {
  const auto r = dltune_run({"--memory", "100M", "--memory-swap", "0"},
                            {"/usr/bin/python3", "-c", "b = b'x' * (400 * 2**20)"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  const auto s = summary();
  EXPECT_EQ(s["signal"], SIGKILL);
  EXPECT_GE(s["cgroup"]["stats"]["oom_kills"].get<int>(), 1) << s.dump(2);
  // The victim, by name, from the kernel's own log.
  ASSERT_FALSE(s["oom_victims"].empty()) << s.dump(2);
  EXPECT_EQ(s["oom_victims"][0]["task"], "python3");
  EXPECT_EQ(s["oom_victims"][0]["constraint"], "CONSTRAINT_MEMCG");
  EXPECT_GT(s["oom_victims"][0]["pid"].get<int>(), 0);
  EXPECT_NE(r.err.find("python3 (pid"), std::string::npos) << r.err;
  EXPECT_EQ(s["cgroup"]["requested"]["memory_bytes"], 100u << 20);
  EXPECT_NE(r.err.find("OOM kills"), std::string::npos) << r.err;
  EXPECT_TRUE(undocumented(s, run_section_of_the_docs()).empty());
}

TEST_F(RunLive, AQuotaOfHalfACpuThrottlesABusyLoop) {
  const auto r =
      dltune_run({"--cpu-quota", "0.5", "--cpus", "0"},
                 {"/usr/bin/python3", "-c",
                  "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 1.5: pass"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = summary();
  const auto& st = s["cgroup"]["stats"];
  EXPECT_GT(st.value("throttled_seconds", 0.0), 0.0) << s.dump(2);
  EXPECT_GT(st.value("nr_throttled", 0), 0);
  // Half a CPU of a 1.5 s loop: well under the wall time (the bound is the quota, with room for
  // the interpreter's start).
  EXPECT_LT(st["cpu_seconds"].get<double>(), 0.75 * s["wall_seconds"].get<double>()) << s.dump(2);
  EXPECT_DOUBLE_EQ(s["cgroup"]["verified"]["cpu_quota_cpus"].get<double>(), 0.5);
}

TEST_F(RunLive, ExitStatusesAndSignalsPassThrough) {
  EXPECT_EQ(dltune_run({}, {"/bin/sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(dltune_run({}, {"/bin/sh", "-c", "kill -TERM $$"}).exit_code, 128 + SIGTERM);
  EXPECT_EQ(summary()["signal"], SIGTERM);
}

TEST_F(RunLive, TheJobsEnvironmentIsJudgedInTheSummary) {
  const auto r =
      dltune_run({}, {"/bin/true"}, {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_DEBUG", "TRACE"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto s = summary();
  std::set<std::string> vars;
  for (const auto& p : s["environment_problems"]) vars.insert(p["variable"].get<std::string>());
  EXPECT_TRUE(vars.count("NCCL_P2P_DISABLE")) << s.dump(2);
  EXPECT_TRUE(vars.count("NCCL_DEBUG")) << s.dump(2);
  EXPECT_NE(r.err.find("  environment    NCCL_DEBUG=TRACE is left on: unset NCCL_DEBUG"),
            std::string::npos)
      << r.err;
}

// A job bound to every online CPU that writes to disk with O_DIRECT and O_DSYNC: each write
// completes with an interrupt of the disk, counted on the job's CPUs, its IRQ named.
TEST_F(RunLive, TheDeviceInterruptsOnABoundJobsCpusAreInTheSummary) {
  auto online = slurp("/sys/devices/system/cpu/online");
  while (!online.empty() && online.back() == '\n') online.pop_back();
  ASSERT_FALSE(online.empty());
  const auto file = (dir_ / "direct").string();
  const std::vector<std::string> dd = {"dd",     "if=/dev/zero", "of=" + file,
                                       "bs=64k", "count=100",    "oflag=direct,dsync"};
  // Whether the file system takes O_DIRECT writes at all is asked of dd alone, so that a run
  // that fails is a failure of dltune, never a skip.
  if (const auto alone = run(dd); alone.exit_code != 0)
    GTEST_SKIP() << "no O_DIRECT writes on " << dir_ << "'s file system: " << alone.err;
  const auto r = dltune_run({"--cpus", online}, dd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = summary();
  const auto& irq = s["interrupts"];
  ASSERT_TRUE(irq.is_object()) << s.dump(2);
  EXPECT_EQ(irq["cpus"], online);
  EXPECT_GT(irq["count"].get<std::uint64_t>(), 0u) << irq.dump(2);
  ASSERT_FALSE(irq["top"].empty()) << irq.dump(2);
  std::uint64_t top = 0;
  for (const auto& t : irq["top"]) top += t["count"].get<std::uint64_t>();
  EXPECT_LE(top, irq["count"].get<std::uint64_t>());
  const int first = irq["top"][0]["irq"];
  EXPECT_TRUE(fs::exists("/proc/irq/" + std::to_string(first))) << first;
  EXPECT_NE(r.err.find("  interrupts     "), std::string::npos) << r.err;
  EXPECT_TRUE(undocumented(s, run_section_of_the_docs()).empty())
      << ::testing::PrintToString(undocumented(s, run_section_of_the_docs()));
  // Unbound, nothing is counted.
  const auto unbound = dltune_run({}, {"/bin/true"});
  ASSERT_EQ(unbound.exit_code, 0) << unbound.err;
  EXPECT_TRUE(summary()["interrupts"].is_null());
}

TEST_F(RunLive, WithJsonOnStandardOutputTheJobsOutputGoesToStandardError) {
  const auto r = run({DLTUNE_BINARY, "run", "--quiet", "--name", name_, "--json", "-", "--",
                      "/bin/sh", "-c", "echo job-stdout; echo job-stderr >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // `| jq` works: stdout is the summary alone.
  const auto j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["exit_code"], 3) << r.out;
  EXPECT_NE(r.err.find("job-stdout"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("job-stderr"), std::string::npos) << r.err;
}

TEST_F(RunLive, SigtermToDltuneReachesTheJob) {
  const auto ready = dir_ / "ready", got = dir_ / "got";
  const std::string script = "trap 'echo term > " + got.string() + "; exit 5' TERM; touch " +
                             ready.string() + "; while :; do sleep 0.05; done";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string summary_path = (dir_ / "summary.json").string();
    ::execl(DLTUNE_BINARY, DLTUNE_BINARY, "run", "--quiet", "--name", name_.c_str(), "--json",
            summary_path.c_str(), "--", "/bin/sh", "-c", script.c_str(), nullptr);
    ::_exit(127);
  }
  for (int i = 0; i < 600 && !fs::exists(ready); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(ready)) << "the job never started";
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 5);
  EXPECT_EQ(slurp(got), "term\n");
}

// The current CPU latency limit of PM QoS (the smallest request held, 2000000000 µs with none):
// what a read of /dev/cpu_dma_latency gives, an s32. nullopt when it cannot be read.
std::optional<std::int32_t> cpu_latency_limit() {
  const int fd = ::open("/dev/cpu_dma_latency", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::int32_t v = 0;
  const auto n = ::read(fd, &v, sizeof v);
  ::close(fd);
  return n == static_cast<ssize_t>(sizeof v) ? std::optional<std::int32_t>(v) : std::nullopt;
}

// A profile's cpu.latency_us is held on /dev/cpu_dma_latency while the job runs, and released
// when it ends.
TEST_F(RunLive, AProfilesCpuLatencyIsHeldWhileTheJobRunsAndReleasedAfter) {
  const auto before = cpu_latency_limit();
  if (!before) GTEST_SKIP() << "/dev/cpu_dma_latency cannot be read here (no PM QoS)";
  if (*before <= 7) GTEST_SKIP() << "another process holds a CPU latency of " << *before << " µs";
  const auto profile = dir_ / "latency.toml";
  std::ofstream(profile) << "[profile]\nname = \"latency\"\ninclude = [\"training\"]\n"
                            "[settings.\"cpu.latency_us\"]\nvalue = 7\n";
  const auto ready = dir_ / "ready", done = dir_ / "done";
  const std::string script =
      "touch " + ready.string() + "; while [ ! -e " + done.string() + " ]; do sleep 0.05; done";
  dltune::testing::RunResult r;
  std::thread job([&] { r = dltune_run({"-p", profile.string()}, {"/bin/sh", "-c", script}); });
  for (int i = 0; i < 600 && !fs::exists(ready); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool started = fs::exists(ready);
  const auto during = cpu_latency_limit();
  std::ofstream(done) << "";
  job.join();
  ASSERT_TRUE(started) << "the job never started: " << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(during, 7) << "while the job ran";
  EXPECT_EQ(cpu_latency_limit(), before) << "after it ended";
}

TEST_F(RunLive, BadInputCreatesNothing) {
  for (const auto& [opts, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--memory", "0"}, "--memory"},
           {{"--cpu-quota", "400%"}, "--cpu-quota"},
           {{"--cpus", "0-4096"}, "--cpus"},
           {{"--gpus", "0"}, "no NVIDIA GPU"},
       }) {
    const auto r = dltune_run(opts, {"/bin/true"});
    EXPECT_EQ(r.exit_code, 2) << opts[0] << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_TRUE(leftovers(name_).empty());
  }
  const auto missing = dltune_run({}, {"trian.py"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("trian.py"), std::string::npos) << missing.err;
  const auto none = run({DLTUNE_BINARY, "run"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no command"), std::string::npos) << none.err;
}

TEST_F(RunLive, NotRootIsRefusedWithWhatIsNeeded) {
  const auto r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", DLTUNE_BINARY,
                      "run", "--name", name_, "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("needs root"), std::string::npos) << r.err;
}

// `run --nproc 2`: dltune starts two ranks of a real DistributedDataParallel job (gloo), which
// meet through the environment it gives them and train; each in a group of its own inside the
// job's, on its own CPUs, with thread counts sized to them, as the invoking user.
TEST_F(RunLive, TwoDdpRanksTrainEachInItsOwnGroupOnItsOwnCpus) {
  const std::string ddp = std::string(DLTUNE_SOURCE_DIR) + "/tests/jobs/ddp_train.py";
  const auto r = dltune_run({"--nproc", "2"},
                            {"/usr/bin/python3", ddp, "--steps", "20", "--report", dir_.string()},
                            {{"SUDO_UID", "65534"}, {"SUDO_GID", "65534"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("trained 20 steps on 2 ranks"), std::string::npos) << r.out;
  const auto s = summary();
  ASSERT_EQ(s["ranks"].size(), 2u) << s.dump(2);
  EXPECT_TRUE(s["failed_rank"].is_null());
  const auto port = s["master_port"].get<std::string>();
  std::set<int> all;
  for (int rank = 0; rank < 2; ++rank) {
    const auto j = json::parse(slurp(dir_ / ("rank-" + std::to_string(rank) + ".json")));
    EXPECT_EQ(j["rank"], rank);
    EXPECT_EQ(j["world"], 2);
    EXPECT_EQ(j["local_rank"], rank);
    EXPECT_EQ(j["local_world_size"], 2);
    EXPECT_EQ(j["master_addr"], "127.0.0.1");
    EXPECT_EQ(j["master_port"], port);
    EXPECT_EQ(j["steps"], 20);
    // Its own group, inside the job's, in every hierarchy it is in.
    const std::string group = "/dltune/" + name_ + "/rank-" + std::to_string(rank);
    bool in_group = false;
    for (const auto& line : j["cgroup"])
      in_group = in_group || line.get<std::string>().ends_with(":" + group);
    EXPECT_TRUE(in_group) << j["cgroup"].dump();
    // Its CPUs are its own share, and its threads are sized to them.
    const auto& mine = s["ranks"][static_cast<std::size_t>(rank)];
    EXPECT_EQ(mine["rank"], rank);
    EXPECT_EQ(mine["exit_code"], 0);
    EXPECT_FALSE(mine["stopped"].get<bool>());
    EXPECT_GT(mine.value("cpu_seconds", 0.0), 0.0) << mine.dump(2);
    std::vector<int> cpus = j["cpus"];
    for (int c : cpus) EXPECT_TRUE(all.insert(c).second) << "CPU " << c << " is another rank's";
    EXPECT_EQ(j["torch_threads"], static_cast<int>(cpus.size()));
    EXPECT_EQ(j["omp"], std::to_string(cpus.size()));
  }
  if (std::thread::hardware_concurrency() >= 2) EXPECT_EQ(all.size(), 2u);
  EXPECT_EQ(s["user"], "nobody");
  EXPECT_NE(r.err.find("rank 1 "), std::string::npos) << r.err;
}

// A rank that dies stops the others (they would wait in the all-reduce for ever), and the summary
// says which rank failed and which were stopped; dltune exits with the failed rank's status.
TEST_F(RunLive, ARankThatFailsStopsTheOthersAndIsNamed) {
  const std::string ddp = std::string(DLTUNE_SOURCE_DIR) + "/tests/jobs/ddp_train.py";
  const auto r = dltune_run({"--nproc", "2"}, {"/usr/bin/python3", ddp, "--steps", "100000",
                                               "--fail-rank", "1", "--fail-after", "3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto s = summary();
  EXPECT_EQ(s["failed_rank"], 1) << s.dump(2);
  EXPECT_EQ(s["exit_code"], 3);
  EXPECT_EQ(s["ranks"][1]["exit_code"], 3);
  EXPECT_FALSE(s["ranks"][1]["stopped"].get<bool>());
  EXPECT_TRUE(s["ranks"][0]["stopped"].get<bool>()) << s.dump(2);
  EXPECT_NE(r.err.find("rank 1 failed first and dltune stopped the others"), std::string::npos)
      << r.err;
  // A launcher of its own is started once: --nproc only sizes its threads (whether Debian's
  // torchrun then starts or not).
  (void)dltune_run({"--nproc", "2"}, {"/usr/bin/python3", "-m", "torch.distributed.run", "--help"});
  const auto launcher = summary();
  EXPECT_TRUE(launcher["ranks"].empty()) << launcher.dump(2);
  EXPECT_NE(launcher["notes"].dump().find("only sizes each one's threads"), std::string::npos);
}

// A rank that runs out of GPU memory (the message PyTorch prints, from a CPU-only job here): run
// names it with its rank and actions, keeps it in the summary and the recording, profile leads
// with it, and doctor, writing the kernel's events into the recording, keeps it.
TEST_F(RunLive, ACudaOutOfMemoryInARanksOutputIsNamedRecordedAndProfiled) {
  const std::string script =
      "import os, sys, time\n"
      "time.sleep(1.5)\n"
      "if os.environ['RANK'] == '1':\n"
      "    sys.stderr.write('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
      "GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free. Of the allocated "
      "memory 70.12 GiB is allocated by PyTorch, and 6.50 GiB is reserved by PyTorch but "
      "unallocated.\\n')\n"
      "    sys.exit(1)\n"
      "time.sleep(60)\n";
  const auto rec = (dir_ / "job.db").string();
  const auto r = dltune_run({"--nproc", "2", "--record", rec}, {"/usr/bin/python3", "-c", script});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("job output"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("CUDA out of memory (rank 1): torch.OutOfMemoryError"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("expandable_segments:True"), std::string::npos) << r.err;
  const auto s = summary();
  ASSERT_EQ(s["output_events"].size(), 1u) << s.dump(2);
  const auto& e = s["output_events"][0];
  EXPECT_EQ(e["kind"], "cuda_oom");
  EXPECT_EQ(e["rank"], 1);
  EXPECT_EQ(e["fields"]["gpu"], "0");
  const auto missing = undocumented(s, run_section_of_the_docs());
  EXPECT_TRUE(missing.empty()) << missing.front();

  auto profile = run({DLTUNE_BINARY, "profile", rec}, {}, 120);
  EXPECT_EQ(profile.exit_code, 0) << profile.err;
  EXPECT_EQ(profile.out.rfind("FAILED: CUDA out of memory (rank 1): ", 0), 0u) << profile.out;
  EXPECT_NE(profile.out.find("action: 6.50 GiB was reserved by PyTorch but unallocated"),
            std::string::npos)
      << profile.out;
  const auto doctor = run({DLTUNE_BINARY, "doctor", "--recording", rec}, {}, 120);
  EXPECT_LE(doctor.exit_code, 2) << doctor.err;
  profile = run({DLTUNE_BINARY, "profile", rec, "--json"}, {}, 120);
  ASSERT_EQ(profile.exit_code, 0) << profile.err;
  EXPECT_EQ(json::parse(profile.out)["failed"]["kind"], "cuda_oom") << profile.out;
}

}  // namespace run_live_test
