// `dltune doctor` on this machine's kernel log: a real OOM kill that the
// test causes in a memory cgroup of its own, found with its victim; Xid and AER records written
// to /dev/kmsg (root may: Documentation/ABI/testing/dev-kmsg), found and explained. The injected
// records say "dltune-test" so that a person reading the log later can tell them from real ones;
// the cgroup is removed.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace doctor_live_test {

namespace fs = std::filesystem;
using dltune::testing::run;
using nlohmann::json;

namespace {

json doctor(const char* since, int* rc = nullptr) {
  const auto r = run({DLTUNE_BINARY, "doctor", "--json", "--since", since});
  if (rc != nullptr) *rc = r.exit_code;
  return json::parse(r.out, nullptr, false);
}

const json* find_event(const json& j, const std::string& kind, const std::string& key,
                       const std::string& value) {
  if (!j.is_object()) return nullptr;
  for (const auto& e : j["events"])
    if (e["kind"] == kind && e["fields"].value(key, "") == value) return &e;
  return nullptr;
}

}  // namespace

TEST(DoctorLive, ARealOomKillInATestCgroupIsFoundWithItsVictim) {
  if (::geteuid() != 0) GTEST_SKIP() << "a memory cgroup and /dev/kmsg need root";
  const fs::path mem = "/sys/fs/cgroup/memory";
  if (!fs::exists(mem / "memory.limit_in_bytes"))
    GTEST_SKIP() << "needs the cgroup v1 memory controller (this VM has it)";
  const auto group = mem / ("dltune-test-doctor-" + std::to_string(::getpid()));
  fs::create_directory(group);
  { std::ofstream(group / "memory.limit_in_bytes") << (64 << 20) << std::flush; }
  const pid_t child = ::fork();
  if (child == 0) {
    std::ofstream(group / "cgroup.procs") << ::getpid() << std::flush;
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    ::execl("/usr/bin/python3", "python3", "-c", "b = bytearray(400 * 2**20)",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  for (int i = 0; i < 100 && ::rmdir(group.c_str()) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(fs::exists(group));
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the allocation was not OOM-killed: " << status;
  int rc = 0;
  const auto j = doctor("10m", &rc);
  ASSERT_TRUE(j.is_object());
  const auto* e = find_event(j, "oom_kill", "pid", std::to_string(child));
  ASSERT_NE(e, nullptr) << j.dump(2);
  EXPECT_EQ((*e)["fields"]["task"], "python3");
  EXPECT_EQ((*e)["fields"]["scope"], "cgroup");
  EXPECT_NE((*e)["fields"]["cgroup"].get<std::string>().find(group.filename().string()),
            std::string::npos);
  EXPECT_EQ((*e)["severity"], "critical");
  EXPECT_EQ((*e)["raw"].size(), 2u);  // the oom-kill: line and the kill, joined
  // The OOM report before it: the group's usage against its 64 MiB limit, the largest task.
  EXPECT_NE((*e)["fields"].value("memory", "").find("limit 65536kB"), std::string::npos)
      << e->dump(2);
  EXPECT_NE((*e)["fields"].value("largest", "").find("python3 (pid " + std::to_string(child)),
            std::string::npos)
      << e->dump(2);
  EXPECT_EQ(rc, 2);  // a critical event
  EXPECT_GE(j["counts"]["oom_kill"].get<int>(), 1);
}

TEST(DoctorLive, AJobCgroupsOwnOomCountIsReportedWhenTheLogWindowMissesIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "a memory cgroup needs root";
  const fs::path parent = "/sys/fs/cgroup/memory/dltune";
  if (!fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    GTEST_SKIP() << "needs the cgroup v1 memory controller (this VM has it)";
  const bool made_parent = fs::create_directory(parent);
  const auto group = parent / ("doctor-test-" + std::to_string(::getpid()));
  fs::create_directory(group);
  std::ofstream(group / "memory.limit_in_bytes") << (48 << 20) << std::flush;
  const pid_t child = ::fork();
  if (child == 0) {
    std::ofstream(group / "cgroup.procs") << ::getpid() << std::flush;
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    ::execl("/usr/bin/python3", "python3", "-c", "b = bytearray(300 * 2**20)",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::waitpid(child, nullptr, 0);
  // The kill is now older than a 1 s window: only the group's own counter tells.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const auto j = doctor("1s");
  for (int i = 0; i < 100 && ::rmdir(group.c_str()) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (made_parent) ::rmdir(parent.c_str());
  EXPECT_FALSE(fs::exists(group));
  const auto name = "/dltune/" + group.filename().string();
  const auto* e = find_event(j, "oom_kill", "cgroup", name);
  ASSERT_NE(e, nullptr) << j.dump(2);
  EXPECT_EQ((*e)["source"], "cgroup");
  EXPECT_EQ((*e)["fields"]["count"], "1");
}

TEST(DoctorLive, InjectedXidAndAerRecordsAreFoundAndExplained) {
  if (::geteuid() != 0) GTEST_SKIP() << "writing to /dev/kmsg needs root";
  const std::string pid = std::to_string(::getpid());
  // One write(2) per record, as the interface wants, ending in a newline: a record without one
  // stays open for a continuation and no reader sees it until the next record comes.
  const auto inject = [](const std::string& record) {
    const int fd = ::open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok =
        ::write(fd, record.data(), record.size()) == static_cast<ssize_t>(record.size());
    ::close(fd);
    return ok;
  };
  ASSERT_TRUE(inject("<3>NVRM: Xid (PCI:0000:3b:00): 79, pid=" + pid +
                     ", name=dltune-test, GPU has fallen off the bus.\n"))
      << "the kernel refused a write to /dev/kmsg";
  ASSERT_TRUE(
      inject("<4>pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0 "
             "(dltune-test " +
             pid + ")\n"));
  int rc = 0;
  const auto j = doctor("2m", &rc);
  ASSERT_TRUE(j.is_object());
  const auto* x = find_event(j, "xid", "pid", pid);
  ASSERT_NE(x, nullptr) << j.dump(2);
  EXPECT_EQ((*x)["fields"]["xid"], "79");
  EXPECT_EQ((*x)["fields"]["pci"], "0000:3b:00");
  EXPECT_NE((*x)["explanation"].get<std::string>().find("fallen off the bus"), std::string::npos);
  EXPECT_NE((*x)["action"].get<std::string>().find("Reboot"), std::string::npos);
  const auto* a = find_event(j, "aer", "device", "0000:3b:00.0 (dltune-test " + pid + ")");
  ASSERT_NE(a, nullptr) << j.dump(2);
  EXPECT_EQ((*a)["fields"]["severity"], "Corrected");
  EXPECT_EQ((*a)["severity"], "warning");
  EXPECT_EQ(rc, 2);
  // The text view has the summary and the one action first.
  const auto text = run({DLTUNE_BINARY, "doctor", "--since", "2m"});
  EXPECT_NE(text.out.find("Summary:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Do this first:"), std::string::npos) << text.out;
  // A window that starts after them does not show them (--since 1s, 2.5 s later; the kernel's
  // record clock and CLOCK_MONOTONIC agreed within 5 ms here).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(find_event(doctor("1s"), "xid", "pid", pid), nullptr);
}

TEST(DoctorLive, AProcessNearItsOpenFileLimitIsARisk) {
  // A Python process with a nofile limit of 100 and 92 files open: 95% or more with its own
  // standard streams and Python's.
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl("/usr/bin/python3", "python3", "-c",
            "import resource, time\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))\n"
            "files = [open('/dev/null') for _ in range(92)]\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const json* e = nullptr;
  json j;
  for (int i = 0; i < 50 && e == nullptr; ++i) {  // until the files are open (bounded)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    j = doctor("1m");
    e = find_event(j, "fd_exhaustion", "pid", std::to_string(child));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_NE(e, nullptr) << j.dump(2);
  EXPECT_EQ((*e)["fields"]["limit"], "100");
  EXPECT_EQ((*e)["source"], "/proc");
}

TEST(DoctorLive, FollowPrintsEachNewEventAsItComes) {
  if (::geteuid() != 0) GTEST_SKIP() << "writing to /dev/kmsg needs root";
  char out_path[] = "/tmp/dltune-doctor-follow-XXXXXX";
  const int out_fd = ::mkstemp(out_path);
  ASSERT_GE(out_fd, 0);
  const pid_t p = ::fork();
  if (p == 0) {
    ::dup2(out_fd, 1);
    ::execl(DLTUNE_BINARY, DLTUNE_BINARY, "doctor", "--follow", "--json", "--since", "1s",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto text = [&] {
    std::ifstream in(out_path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const auto wait_for = [&](const std::string& what) {
    for (int i = 0; i < 100; ++i) {  // bounded: 10 s
      if (text().find(what) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  EXPECT_TRUE(wait_for("dltune.doctor/1")) << text();  // the report comes first
  const std::string marker = "pid=" + std::to_string(p) + ", name=dltune-test-follow";
  {
    const std::string record = "<3>NVRM: Xid (PCI:0000:3b:00): 94, " + marker + ", Contained.\n";
    const int fd = ::open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::write(fd, record.data(), record.size()), static_cast<ssize_t>(record.size()));
    ::close(fd);
  }
  EXPECT_TRUE(wait_for(marker)) << text();
  ::kill(p, SIGINT);
  int status = 0;
  ::waitpid(p, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // One JSON object per line: the report, then the event.
  std::istringstream lines(text());
  std::string line, last;
  int n = 0;
  while (std::getline(lines, line))
    if (!line.empty()) {
      EXPECT_FALSE(json::parse(line, nullptr, false).is_discarded()) << line;
      last = line;
      ++n;
    }
  EXPECT_GE(n, 2);
  EXPECT_EQ(json::parse(last, nullptr, false)["fields"]["xid"], "94");
  ::close(out_fd);
  ::unlink(out_path);
}

TEST(DoctorLive, BadInputChangesNothing) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--since", "yesterday"},
                                                                {"--since", "0s"},
                                                                {"--since", "1h", "--boot"},
                                                                {"--follow", "--root", "/tmp"}}) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "doctor"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1];
    EXPECT_NE(r.err.find("dltune doctor:"), std::string::npos) << r.err;
  }
}

}  // namespace doctor_live_test
