// `dltune tune` on this machine's real kernel, as root: apply the training profile, read every
// value back, roll back, and compare with the values before, byte for byte; the same after a
// crash injected after each change in turn. Every value a test touches is restored at the end,
// even when the test fails (HostValues).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/build_paths.hpp"
#include "support/host_values.hpp"
#include "support/run.hpp"

namespace tune_live_test {

using dltune::testing::atime_of;
using dltune::testing::HostValues;
using dltune::testing::kSysctlDropin;
using dltune::testing::kTmpfilesDropin;
using dltune::testing::put;
using dltune::testing::run;
using dltune::testing::slurp;
using dltune::testing::value_of;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

class TuneLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "tune changes /proc/sys and /sys: needs root";
    state_ = fs::path(::testing::TempDir()) / ("tune_state_" + std::to_string(::getpid()));
    fs::remove_all(state_);
    defaults_ = std::make_unique<dltune::testing::KernelDefaults>();
    const auto plan = tune({"plan", "-p", "training", "--persist", "--json"});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    plan_ = json::parse(plan.out);
    ASSERT_GT(live_changes(), 0) << "nothing to tune on this host: the test would prove nothing";
    host_ = std::make_unique<HostValues>(plan_);
  }
  void TearDown() override {
    host_.reset();
    defaults_.reset();
    fs::remove_all(state_);
  }
  dltune::testing::RunResult tune(std::vector<std::string> args,
                                  std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {DLTUNE_BINARY, "tune", "--state-dir", state_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, env);
  }
  int live_changes() const {
    int n = 0;
    for (const auto& i : plan_["items"]) n += static_cast<int>(i["changes"].size());
    return n;
  }

  fs::path state_;
  json plan_;
  std::unique_ptr<dltune::testing::KernelDefaults> defaults_;  // restored after host_
  std::unique_ptr<HostValues> host_;
};

}  // namespace

TEST_F(TuneLive, ApplyVerifiesEveryValueAndRollbackRestoresThemByteForByte) {
  const auto apply = tune({"apply", "-p", "training", "--persist", "--yes", "--json"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  // Every value now reads back as the plan said.
  for (const auto& i : plan_["items"]) {
    for (const auto& c : i["changes"]) {
      if (c["kind"] == "file" || c["implied"] == true) continue;
      const auto value = value_of(c);
      ASSERT_TRUE(value) << c["target"];
      std::string now = *value;
      std::string norm;
      std::istringstream words(now);
      for (std::string w; words >> w;) norm += (norm.empty() ? "" : " ") + w;
      if (c["kind"] == "sysfs" && now.find('[') != std::string::npos) {
        EXPECT_NE(now.find("[" + c["new"].get<std::string>() + "]"), std::string::npos) << now;
      } else {
        EXPECT_EQ(norm, c["new"]) << c["target"];
      }
    }
  }
  const auto dropin = slurp(kSysctlDropin);
  ASSERT_TRUE(dropin);
  EXPECT_NE(dropin->find("vm.swappiness = 10"), std::string::npos) << *dropin;
  struct stat st {};
  ASSERT_EQ(::stat(kSysctlDropin, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  // The sysfs values for boot, in tmpfiles.d's own format.
  const auto tmpfiles = slurp(kTmpfilesDropin);
  ASSERT_TRUE(tmpfiles);
  EXPECT_NE(
      tmpfiles->find("\nw /sys/kernel/mm/transparent_hugepage/defrag - - - - defer+madvise\n"),
      std::string::npos)
      << *tmpfiles;
  const auto status = tune({"status", "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_TRUE(json::parse(status.out)["drift"].empty());

  const auto rb = tune({"rollback"});
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  const auto history = json::parse(tune({"history", "--json"}).out);
  EXPECT_EQ(history["transactions"][0]["state"], "rolled_back");
}

TEST_F(TuneLive, ACrashAfterAnyChangeIsFoundAndRolledBackExactly) {
  if (!DLTUNE_TEST_HOOKS) GTEST_SKIP() << "built without the test hooks (DLTUNE_TEST_HOOKS=OFF)";
  const int n = live_changes();
  ASSERT_GT(n, 1);
  for (int k = 1; k <= n; ++k) {
    const auto crashed = tune({"apply", "-p", "training", "--persist", "--yes"},
                              {{"DLTUNE_TEST_CRASH_AFTER", std::to_string(k)}});
    // An implied change (the kernel's own) is not counted: past the last real one apply finishes.
    if (crashed.exit_code == 0) {
      ASSERT_EQ(tune({"rollback"}).exit_code, 0);
      break;
    }
    ASSERT_EQ(crashed.term_signal, SIGKILL) << "crash after change " << k << ": " << crashed.err;
    const auto status = tune({"status"});
    EXPECT_EQ(status.exit_code, 1);
    EXPECT_NE(status.out.find("UNFINISHED"), std::string::npos) << status.out;
    // Any other command warns too.
    const auto again = tune({"apply", "-p", "training", "--yes"});
    EXPECT_NE(again.exit_code, 0);
    EXPECT_NE(again.err.find("left unfinished"), std::string::npos) << again.err;
    const auto rb = tune({"rollback"});
    ASSERT_EQ(rb.exit_code, 0) << "after a crash at change " << k << ": " << rb.err;
    EXPECT_TRUE(host_->changed().empty())
        << "after a crash at change " << k << ": " << ::testing::PrintToString(host_->changed());
  }
}

TEST_F(TuneLive, DriftIsReportedAndRollbackStillRestoresTheOriginal) {
  ASSERT_EQ(tune({"apply", "-p", "training", "--only", "vm.swappiness", "--yes"}).exit_code, 0);
  put("/proc/sys/vm/swappiness", "42\n");
  const auto status = tune({"status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.out.find("drift       vm.swappiness"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("now 42"), std::string::npos) << status.out;
  ASSERT_EQ(tune({"rollback"}).exit_code, 0);
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
}

// A reboot where nothing reads the drop-ins: the live values are back to the kernel's, and
// `tune apply --boot` writes what the drop-ins hold. `tune status` says who reads each drop-in
// at boot on this host (this VM's init is not systemd: nobody).
TEST_F(TuneLive, ApplyBootWritesTheDropinsAgainAfterAReboot) {
  const auto before_swappiness = slurp("/proc/sys/vm/swappiness");
  const auto before_defrag = slurp("/sys/kernel/mm/transparent_hugepage/defrag");
  ASSERT_TRUE(before_swappiness && before_defrag);
  const auto apply =
      tune({"apply", "-p", "training", "--only", "vm.swappiness,thp.defrag", "--persist", "--yes"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  ASSERT_TRUE(slurp(kSysctlDropin)) << "no sysctl.d drop-in after --persist";
  ASSERT_TRUE(slurp(kTmpfilesDropin)) << "no tmpfiles.d drop-in after --persist";

  const auto status = json::parse(tune({"status", "--json"}).out);
  const bool systemd = fs::is_directory("/run/systemd/system");
  bool saw_sysctl = false;
  for (const auto& f : status["boot"]["files"]) {
    if (f["file"] != kSysctlDropin) continue;
    saw_sysctl = true;
    EXPECT_TRUE(f["exists"]);
    if (systemd)
      EXPECT_EQ(f["applied_by"], "systemd-sysctl.service");
    else
      EXPECT_TRUE(f["applied_by"].is_null() ||
                  f["applied_by"].get<std::string>().find("rc.local") != std::string::npos)
          << f.dump();
  }
  EXPECT_TRUE(saw_sysctl) << status.dump(2);
  if (!systemd) {
    const auto text = tune({"status"}).out;
    EXPECT_NE(text.find("dltune tune apply --boot"), std::string::npos) << text;
  }

  // The reboot, as far as these values go: the kernel's values again.
  put("/proc/sys/vm/swappiness", *before_swappiness);
  put("/sys/kernel/mm/transparent_hugepage/defrag", "madvise\n");
  const auto drift = tune({"status"});
  EXPECT_NE(drift.out.find("drift       vm.swappiness"), std::string::npos) << drift.out;

  const auto boot = tune({"apply", "--boot", "--json"});
  ASSERT_EQ(boot.exit_code, 0) << boot.out << boot.err;
  const auto b = json::parse(boot.out);
  EXPECT_EQ(b["schema"], "dltune.tune.boot/1");
  EXPECT_EQ(b["failed"], 0) << b.dump(2);
  EXPECT_EQ(b["written"], 2) << b.dump(2);
  EXPECT_EQ(slurp("/proc/sys/vm/swappiness").value_or(""), "10\n");
  EXPECT_NE(
      slurp("/sys/kernel/mm/transparent_hugepage/defrag").value_or("").find("[defer+madvise]"),
      std::string::npos);
  EXPECT_EQ(tune({"status"}).out.find("drift       "), std::string::npos);
  // Bad input: a profile with --boot.
  EXPECT_EQ(tune({"apply", "--boot", "-p", "training"}).exit_code, 2);

  // Rollback still restores the values before the transaction, and removes the drop-ins.
  ASSERT_EQ(tune({"rollback"}).exit_code, 0);
  EXPECT_EQ(slurp("/proc/sys/vm/swappiness"), before_swappiness);
  EXPECT_EQ(slurp("/sys/kernel/mm/transparent_hugepage/defrag"), before_defrag);
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  // Nothing left to write.
  const auto nothing = tune({"apply", "--boot"});
  EXPECT_EQ(nothing.exit_code, 0);
  EXPECT_NE(nothing.out.find("nothing to write"), std::string::npos) << nothing.out;
}

TEST_F(TuneLive, AValueTheKernelRefusesStopsTheTransactionAndUndoesWhatWasDone) {
  const auto profile = fs::path(::testing::TempDir()) / "refused.toml";
  put(profile.string(),
      "[profile]\nname = \"refused\"\n"
      "[settings.\"vm.overcommit_memory\"]\nvalue = 1\nreason = \"r\"\nsource = \"s\"\n"
      // Past the kernel's range (1 to 3000), which the profile check does not know for this
      // sysctl (it does for vm.swappiness: that value never reaches the kernel).
      "[settings.\"vm.watermark_scale_factor\"]\nvalue = 5000\nreason = \"r\"\nsource = "
      "\"s\"\n");
  const auto r = tune({"apply", "-p", profile.string(), "--yes"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("vm.watermark_scale_factor"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/proc/sys/vm/watermark_scale_factor"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Invalid argument"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rolled back"), std::string::npos) << r.err;
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
  const auto history = json::parse(tune({"history", "--json"}).out);
  EXPECT_EQ(history["transactions"][0]["state"], "failed");
}

TEST_F(TuneLive, NotRootChangesNothing) {
  const auto r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", DLTUNE_BINARY,
                      "tune", "--state-dir", state_.string(), "apply", "-p", "training", "--yes"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("needs root"), std::string::npos) << r.err;
  EXPECT_TRUE(host_->changed().empty());
  EXPECT_FALSE(fs::exists(state_ / "state.db"));
}

// A tmpfs of the test's own, mounted relatime: mount.noatime remounts it live and back, and a
// remount behind tune's back is drift.
class TuneMountLive : public TuneLive {
 protected:
  void SetUp() override {
    TuneLive::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    dir_ = fs::path(::testing::TempDir()) / ("tune_mnt_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const auto m = run({"mount", "-t", "tmpfs", "-o", "relatime,size=1m", "dltune-test", dir_});
    if (m.exit_code != 0) GTEST_SKIP() << "cannot mount a tmpfs here: " << m.err;
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) (void)run({"umount", dir_.string()});
    fs::remove(dir_);
    TuneLive::TearDown();
  }
  fs::path dir_;
  bool mounted_ = false;
};

TEST_F(TuneMountLive, NoatimeIsARemountThatRollbackUndoes) {
  const std::string mp = dir_.string();
  ASSERT_EQ(atime_of(mp), "relatime");
  fs::create_directories(mp + "/imagenet");
  // A --data path that is not there is refused: a typo would judge / in its place.
  const auto typo = tune({"plan", "--only", "mount.noatime", "--data", mp + "/imagent"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("--data " + mp + "/imagent: No such file or directory"),
            std::string::npos)
      << typo.err;
  const auto plan = json::parse(
      tune({"plan", "--only", "mount.noatime", "--data", mp + "/imagenet", "--json"}).out);
  ASSERT_EQ(plan["items"][0]["changes"].size(), 1u) << plan.dump(2);
  EXPECT_EQ(plan["items"][0]["changes"][0]["target"], mp);
  EXPECT_EQ(plan["items"][0]["changes"][0]["old"], "relatime");
  const auto apply = tune({"apply", "--only", "mount.noatime", "--data", mp, "--yes"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_EQ(atime_of(mp), "noatime");
  EXPECT_EQ(tune({"status"}).exit_code, 0);
  // Someone remounts it: drift.
  ASSERT_EQ(run({"mount", "-o", "remount,bind,strictatime", mp}).exit_code, 0);
  const auto status = tune({"status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.out.find("drift       mount.noatime"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("now strictatime"), std::string::npos) << status.out;
  const auto rb = tune({"rollback"});
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_EQ(atime_of(mp), "relatime");
  // Its other flags were kept: still read-write, still the test's tmpfs.
  EXPECT_EQ(::access(mp.c_str(), W_OK), 0);
  EXPECT_TRUE(host_->changed().empty()) << ::testing::PrintToString(host_->changed());
}

TEST_F(TuneLive, ReadAheadOfTheDiskUnderTheDataIsSetAndRestored) {
  // A minimum above what the root disk has now, so that there is something to change.
  const auto before = json::parse(run({DLTUNE_BINARY, "env", "--json"}).out);
  std::uint64_t now_kb = 0;
  for (const auto& d : before["storage"]["block_devices"])
    if (d.contains("read_ahead_kb")) now_kb = std::max<std::uint64_t>(now_kb, d["read_ahead_kb"]);
  ASSERT_GT(now_kb, 0u);
  const auto profile = fs::path(::testing::TempDir()) / "readahead.toml";
  put(profile.string(),
      "[profile]\nname = \"readahead\"\n[settings.\"block.read_ahead_kb\"]\n"
      "value = \">= " +
          std::to_string(now_kb * 2) + "\"\nreason = \"r\"\nsource = \"s\"\n");
  const auto plan = json::parse(tune({"plan", "-p", profile.string(), "--json"}).out);
  const auto& changes = plan["items"][0]["changes"];
  if (changes.empty()) GTEST_SKIP() << "no disk under / here: " << plan.dump(2);
  HostValues disks(plan);
  const std::string target = changes[0]["target"];
  const auto old = slurp(target);
  ASSERT_EQ(tune({"apply", "-p", profile.string(), "--yes"}).exit_code, 0);
  EXPECT_EQ(slurp(target), std::to_string(now_kb * 2) + "\n");
  ASSERT_EQ(tune({"rollback"}).exit_code, 0);
  EXPECT_EQ(slurp(target), old);
  EXPECT_TRUE(disks.changed().empty()) << ::testing::PrintToString(disks.changed());
}

// The I/O scheduler of the disk under / (the data path by default): the scheduler that is not
// selected now among those the kernel offers, written, read back selected, and rolled back.
TEST_F(TuneLive, SchedulerOfTheDiskUnderTheDataIsSetAndRestored) {
  const auto check = json::parse(
      run({DLTUNE_BINARY, "check", "--only", "block.scheduler", "--data", "/", "--json"}).out);
  std::string file, now;
  std::vector<std::string> offered;
  for (const auto& f : check["findings"]) {
    if (f["id"] != "block.scheduler" || !f["applicable"].get<bool>()) continue;
    file = f["evidence"][0]["path"];
    const std::string raw = f["evidence"][0]["value"];  // "none [mq-deadline] kyber"
    std::istringstream words(raw);
    for (std::string w; words >> w;) {
      if (w.front() == '[') {
        w = w.substr(1, w.size() - 2);
        now = w;
      }
      offered.push_back(w);
    }
    break;
  }
  if (file.empty() || offered.size() < 2)
    GTEST_SKIP() << "no disk with two schedulers under / here: " << check.dump(2);
  const std::string other = offered[0] == now ? offered[1] : offered[0];
  const auto profile = fs::path(::testing::TempDir()) / "scheduler.toml";
  put(profile.string(),
      "[profile]\nname = \"scheduler\"\n[settings.\"block.scheduler\"]\nvalue = \"" + other +
          "\"\nreason = \"r\"\nsource = \"s\"\n");
  const auto plan = json::parse(tune({"plan", "-p", profile.string(), "--json"}).out);
  // The switch and, before it, the queue the kernel resets with it (journaled, not written).
  const auto& changes = plan["items"][0]["changes"];
  ASSERT_FALSE(changes.empty()) << plan.dump(2);
  EXPECT_EQ(changes.back()["target"], file);
  EXPECT_FALSE(changes.back()["implied"].get<bool>());
  for (std::size_t i = 0; i + 1 < changes.size(); ++i) {
    EXPECT_TRUE(changes[i]["implied"].get<bool>()) << plan.dump(2);
    EXPECT_TRUE(changes[i]["target"].get<std::string>().ends_with("/queue/nr_requests"));
  }
  HostValues disks(plan);
  const auto old = slurp(file);
  const auto apply = tune({"apply", "-p", profile.string(), "--yes"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_NE(slurp(file).value_or("").find("[" + other + "]"), std::string::npos)
      << slurp(file).value_or("(gone)");
  EXPECT_EQ(tune({"status"}).exit_code, 0);
  ASSERT_EQ(tune({"rollback"}).exit_code, 0);
  EXPECT_EQ(slurp(file), old);
  EXPECT_TRUE(disks.changed().empty()) << ::testing::PrintToString(disks.changed());
}

// The scheduler's queue of the disk under / with a switch of scheduler in the same transaction,
// the queue listed first: tune switches the scheduler first (which resets the queue), then
// raises the queue; rollback gives back the scheduler and then the queue the disk had before.
TEST_F(TuneLive, NrRequestsIsSetAfterTheSchedulerAndRollbackRestoresBoth) {
  const auto check = json::parse(
      run({DLTUNE_BINARY, "check", "--only", "block.nr_requests", "--data", "/", "--json"}).out);
  std::string nr_file, sched_file, now, other;
  for (const auto& f : check["findings"]) {
    if (f["id"] != "block.nr_requests" || !f["applicable"].get<bool>()) continue;
    nr_file = f["evidence"][0]["path"];
    sched_file = f["evidence"][1]["path"];
    std::istringstream words(f["evidence"][1]["value"].get<std::string>());
    for (std::string w; words >> w;) {
      if (w.front() == '[')
        now = w.substr(1, w.size() - 2);
      else if (w != "none" && other.empty())
        other = w;
    }
    break;
  }
  if (nr_file.empty() || other.empty())
    GTEST_SKIP() << "no disk under / with two schedulers other than none: " << check.dump(2);
  // A queue that is not the scheduler's default, so that its restoring shows.
  const auto original = slurp(nr_file);
  ASSERT_TRUE(original);
  struct Restore {
    std::string file, value;
    ~Restore() { put(file, value); }
  } restore{nr_file, *original};
  put(nr_file, "100\n");
  ASSERT_EQ(slurp(nr_file), "100\n");
  const auto profile = fs::path(::testing::TempDir()) / "nr_requests.toml";
  put(profile.string(),
      "[profile]\nname = \"queue\"\n[settings.\"block.nr_requests\"]\nvalue = \">= 300\"\n"
      "reason = \"r\"\nsource = \"s\"\n[settings.\"block.scheduler\"]\nvalue = \"" +
          other + "\"\nreason = \"r\"\nsource = \"s\"\n");
  const auto planned = tune({"plan", "-p", profile.string(), "--data", "/", "--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const auto plan = json::parse(planned.out);
  ASSERT_EQ(plan["items"].size(), 2u) << plan.dump(2);
  const auto& sched = plan["items"][0];
  ASSERT_EQ(sched["key"], "block.scheduler") << plan.dump(2);
  ASSERT_EQ(sched["changes"].size(), 2u) << plan.dump(2);
  EXPECT_EQ(sched["changes"][0]["target"], nr_file);
  EXPECT_TRUE(sched["changes"][0]["implied"].get<bool>());
  EXPECT_EQ(sched["changes"][0]["old"], "100");
  EXPECT_EQ(sched["changes"][1]["target"], sched_file);
  const auto& queue = plan["items"][1];
  ASSERT_EQ(queue["key"], "block.nr_requests");
  ASSERT_EQ(queue["changes"].size(), 1u) << plan.dump(2);
  EXPECT_EQ(queue["changes"][0]["new"], "300");
  HostValues disks(plan);
  const auto apply = tune({"apply", "-p", profile.string(), "--data", "/", "--yes"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_NE(slurp(sched_file).value_or("").find("[" + other + "]"), std::string::npos);
  EXPECT_EQ(slurp(nr_file), "300\n");
  const auto after = json::parse(run({DLTUNE_BINARY, "check", "-p", profile.string(), "--only",
                                      "block.nr_requests", "--data", "/", "--json"})
                                     .out);
  for (const auto& f : after["findings"]) EXPECT_EQ(f["severity"], "ok") << f.dump(2);
  ASSERT_EQ(tune({"rollback"}).exit_code, 0);
  EXPECT_NE(slurp(sched_file).value_or("").find("[" + now + "]"), std::string::npos);
  EXPECT_EQ(slurp(nr_file), "100\n");
  EXPECT_TRUE(disks.changed().empty()) << ::testing::PrintToString(disks.changed());
}

// The IRQs of this host's training NICs and GPUs (a virtio NIC here) moved to one CPU by a
// profile's CPU list, read back from /proc/irq, and rolled back to the affinity they had.
TEST_F(TuneLive, IrqAffinityIsSetFromTheProfilesCpusAndRolledBack) {
  auto online = slurp("/sys/devices/system/cpu/online");  // "0-1", "0-3,8-11", "0"
  ASSERT_TRUE(online);
  while (!online->empty() && !std::isdigit(static_cast<unsigned char>(online->back())))
    online->pop_back();
  const std::string first = online->substr(0, online->find_first_not_of("0123456789"));
  const std::string last = online->substr(online->find_last_not_of("0123456789") + 1);
  if (first == last) GTEST_SKIP() << "one CPU online: no other CPU to move IRQs to";
  // The last online CPU, then the first if every IRQ is there already.
  for (const std::string& cpu : {last, first}) {
    const auto profile = fs::path(::testing::TempDir()) / "irq.toml";
    put(profile.string(), "[profile]\nname = \"irq\"\n[settings.\"irq.affinity\"]\nvalue = \"" +
                              cpu + "\"\nreason = \"r\"\nsource = \"s\"\n");
    const auto planned = tune({"plan", "-p", profile.string(), "--json"});
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    const auto plan = json::parse(planned.out);
    if (plan["items"][0]["status"] == "not_applicable")
      GTEST_SKIP() << "no GPU or training NIC with IRQs here: " << plan.dump(2);
    const auto& changes = plan["items"][0]["changes"];
    if (changes.empty()) continue;
    HostValues irqs(plan);
    std::map<std::string, std::string> before;
    for (const auto& c : changes) {
      const std::string target = c["target"];
      EXPECT_TRUE(target.starts_with("/proc/irq/")) << target;
      before[target] = slurp(target).value_or("(gone)");
    }
    const auto apply = tune({"apply", "-p", profile.string(), "--yes"});
    ASSERT_EQ(apply.exit_code, 0) << apply.err;
    for (const auto& [target, old] : before) EXPECT_EQ(slurp(target), cpu + "\n") << target;
    const auto check =
        run({DLTUNE_BINARY, "check", "-p", profile.string(), "--only", "irq.affinity", "--json"});
    const auto checked = json::parse(check.out);
    for (const auto& f : checked["findings"]) EXPECT_EQ(f["severity"], "ok") << f.dump(2);
    ASSERT_EQ(tune({"rollback"}).exit_code, 0);
    for (const auto& [target, old] : before) EXPECT_EQ(slurp(target), old) << target;
    EXPECT_TRUE(irqs.changed().empty()) << ::testing::PrintToString(irqs.changed());
    return;
  }
  // An IRQ that one of the two CPUs does not cover alone is moved by that one's profile.
  FAIL() << "neither CPU " << last << " nor CPU " << first << " planned a change";
}

TEST_F(TuneLive, CgroupsSetsTheSwappinessOfExistingV1MemoryGroupsAndRollbackRestoresIt) {
  const fs::path memcg = "/sys/fs/cgroup/memory";
  if (!fs::exists(memcg / "memory.swappiness"))
    GTEST_SKIP() << "no cgroup-v1 memory controller at " << memcg;
  const fs::path group = memcg / ("dltune-test-" + std::to_string(::getpid()));
  ASSERT_TRUE(fs::create_directory(group));
  struct Remove {
    fs::path p;
    ~Remove() { ::rmdir(p.c_str()); }
  } remove{group};
  put((group / "memory.swappiness").string(), "61\n");
  const auto plan =
      json::parse(tune({"plan", "--only", "vm.swappiness", "--cgroups", "--json"}).out);
  HostValues groups(plan);
  bool listed = false;
  for (const auto& c : plan["items"][0]["changes"])
    if (c["target"] == (group / "memory.swappiness").string()) {
      listed = true;
      EXPECT_EQ(c["kind"], "cgroup");
      EXPECT_EQ(c["old"], "61");
    }
  ASSERT_TRUE(listed) << plan.dump(2);
  const auto apply = tune({"apply", "--only", "vm.swappiness", "--cgroups", "--yes"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_EQ(slurp((group / "memory.swappiness").string()), "10\n");
  EXPECT_EQ(slurp("/proc/sys/vm/swappiness"), "10\n");
  ASSERT_EQ(tune({"rollback"}).exit_code, 0);
  EXPECT_EQ(slurp((group / "memory.swappiness").string()), "61\n");
  EXPECT_TRUE(groups.changed().empty()) << ::testing::PrintToString(groups.changed());
}

}  // namespace tune_live_test
