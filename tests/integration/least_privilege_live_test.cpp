// Least privilege: every command that does not need root works as an unprivileged
// user (nobody, through setpriv(1): exec'd argv, no shell) and says what it could not read; what
// needs root refuses with the reason; and tune's state (the journal and the copies of /etc
// files it keeps) is root's alone: 0700 directories, 0600 files.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/recording.hpp"
#include "support/build_paths.hpp"
#include "support/host_values.hpp"
#include "support/run.hpp"

namespace least_privilege_live_test {

using dltune::testing::run;
using dltune::testing::RunResult;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kNobody = 65534;

RunResult as_nobody(const std::vector<std::string>& args, int timeout = 60) {
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                   "--clear-groups", DLTUNE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, timeout);
}

std::string explain(const RunResult& r) {
  return fmt::format("exit {}\nstdout:\n{}\nstderr:\n{}", r.exit_code, r.out.substr(0, 4000),
                     r.err);
}

json parse(const RunResult& r) {
  auto j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << explain(r);
  return j;
}

// A sysctl set for the test and put back when it ends.
class SysctlFor {
 public:
  SysctlFor(std::string path, const std::string& value) : path_(std::move(path)) {
    old_ = dltune::testing::slurp(path_);
    dltune::testing::put(path_, value);
  }
  ~SysctlFor() {
    if (old_) dltune::testing::put(path_, *old_);
  }

 private:
  std::string path_;
  std::optional<std::string> old_;
};

class LeastPrivilegeLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "becoming nobody (setpriv) needs root";
    if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv here";
    dir_ = fs::path(::testing::TempDir()) / fmt::format("least_privilege_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::all);  // nobody writes its recordings here
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

}  // namespace

TEST_F(LeastPrivilegeLive, TheCommandsThatReadWorkAsNobodyAndSayWhatTheyCouldNotRead) {
  // env and check: a whole inventory and audit; whatever was unreadable is listed with why.
  const auto env = as_nobody({"env", "--json"});
  ASSERT_EQ(env.exit_code, 0) << explain(env);
  const auto facts = parse(env);
  ASSERT_TRUE(facts["problems"].is_array());
  for (const auto& p : facts["problems"]) {
    EXPECT_FALSE(p["fact"].get<std::string>().empty()) << p;
    EXPECT_FALSE(p["reason"].get<std::string>().empty()) << p;
  }
  EXPECT_FALSE(facts["cpu"].is_null());
  EXPECT_FALSE(facts["memory"].is_null());
  const auto check = as_nobody({"check", "--json"});
  const auto audit = parse(check);
  ASSERT_TRUE(audit.is_object()) << explain(check);
  EXPECT_EQ(audit["exit_code"], check.exit_code);
  EXPECT_FALSE(audit["findings"].empty());

  // doctor: the kernel ring buffer needs CAP_SYSLOG under dmesg_restrict=1; doctor says so and
  // reads what it can.
  {
    SysctlFor restrict_dmesg("/proc/sys/kernel/dmesg_restrict", "1");
    const auto doctor = as_nobody({"doctor", "--json"});
    EXPECT_TRUE(doctor.exit_code == 0 || doctor.exit_code == 1) << explain(doctor);
    const auto d = parse(doctor);
    EXPECT_NE(d["notes"].dump().find("cannot open /dev/kmsg"), std::string::npos) << d["notes"];
  }

  // top, record, report and profile: a job of nobody's own, recorded, reported, judged.
  const auto top = as_nobody({"top", "--once", "--no-gpus"});
  EXPECT_EQ(top.exit_code, 0) << explain(top);
  EXPECT_NE(top.out.find("CPU"), std::string::npos) << explain(top);
  const auto db = file("nobody.db");
  // A job that computes for 2 s whatever the machine's speed: about 20 samples, enough to judge.
  const auto rec =
      as_nobody({"record", "-o", db, "--interval", "100ms", "--no-gpus", "--", "/usr/bin/python3",
                 "-c", "import time\nend = time.time() + 2\nwhile time.time() < end: pass"},
                120);
  ASSERT_EQ(rec.exit_code, 0) << explain(rec);
  struct stat st {};
  ASSERT_EQ(::stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody) << "the recording is the user's own";
  {
    auto r = dltune::store::Recording::open(db);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_GE((*r)->size(), 10u);
  }
  const auto html = file("nobody.html");
  const auto report = as_nobody({"report", db, "-o", html});
  EXPECT_EQ(report.exit_code, 0) << explain(report);
  EXPECT_TRUE(fs::exists(html));
  const auto profile = as_nobody({"profile", "--json", db});
  EXPECT_TRUE(profile.exit_code == 0 || profile.exit_code == 1) << explain(profile);
  EXPECT_TRUE(parse(profile).contains("result")) << explain(profile);

  // tune plan reads only: it works; a change needs root and says so, changing nothing.
  const auto plan = as_nobody({"tune", "plan", "-p", "training", "--state-dir", file("state")});
  EXPECT_EQ(plan.exit_code, 0) << explain(plan);
  const auto apply =
      as_nobody({"tune", "apply", "-p", "training", "--yes", "--state-dir", file("state")});
  EXPECT_NE(apply.exit_code, 0) << explain(apply);
  EXPECT_NE(apply.err.find("root"), std::string::npos) << explain(apply);
  EXPECT_FALSE(fs::exists(file("state"))) << "a refused apply made its state directory";
}

TEST_F(LeastPrivilegeLive, TunesStateIsRootsAloneAndNobodyIsToldWhy) {
  const auto state = file("state");
  const std::vector<std::string> base = {DLTUNE_BINARY, "tune", "--state-dir", state};
  auto tune = [&](std::vector<std::string> args) {
    auto argv = base;
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  const dltune::testing::KernelDefaults defaults;  // something to tune even on a tuned host
  const auto planned = tune({"plan", "-p", "training", "--persist", "--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const auto plan = json::parse(planned.out);
  ASSERT_FALSE(plan["items"].empty()) << "nothing to tune: the test would prove nothing";
  dltune::testing::HostValues host(plan);
  const auto applied = tune({"apply", "-p", "training", "--persist", "--yes"});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;

  // Every directory 0700 and every file 0600, root's: the journal, its WAL, the lock and the
  // copies of /etc files.
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(state)) {
    struct stat st {};
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u) << e.path();
    if (S_ISDIR(st.st_mode)) {
      EXPECT_EQ(st.st_mode & 07777, 0700u) << e.path();
    } else {
      ++files;
      EXPECT_EQ(st.st_mode & 07777, 0600u) << e.path();
    }
  }
  struct stat top {};
  ASSERT_EQ(::stat(state.c_str(), &top), 0);
  EXPECT_EQ(top.st_mode & 07777, 0700u);
  EXPECT_GE(files, 1);

  // nobody can neither read it nor roll back, and is told why, with the file.
  const auto status = as_nobody({"tune", "--state-dir", state, "status"});
  EXPECT_EQ(status.exit_code, 1) << explain(status);
  EXPECT_NE(status.err.find(state + "/state.db"), std::string::npos) << explain(status);
  EXPECT_NE(status.err.find("run this with sudo"), std::string::npos) << explain(status);
  const auto rollback = as_nobody({"tune", "--state-dir", state, "rollback"});
  EXPECT_NE(rollback.exit_code, 0) << explain(rollback);

  const auto back = tune({"rollback"});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_TRUE(host.changed().empty()) << ::testing::PrintToString(host.changed());
}

}  // namespace least_privilege_live_test
