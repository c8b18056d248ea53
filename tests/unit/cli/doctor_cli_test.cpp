// `dltune doctor` through the binary: the text report of a tree with nothing to read, and the
// events of a real recording's span stored for report (record, doctor and report as a user runs
// them one after the other).
#include <time.h>

#include <ctime>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "support/temp_tree.hpp"

namespace doctor_cli_test {

using dltune::testing::TempTree;

TEST(DoctorCli, ATreeWithNothingToReadSaysSoAndFails) {
  TempTree empty;
  empty.mkdir("var/log");
  const auto none =
      dltune::testing::run({DLTUNE_BINARY, "doctor", "--root", empty.dir().string(), "--boot"});
  EXPECT_EQ(none.exit_code, 1) << none.out << none.err;
  EXPECT_NE(none.out.find("no journal, and no kern.log"), std::string::npos) << none.out;
  // It opens with that fact and what to do, never with "Nothing found".
  EXPECT_EQ(none.out.rfind("dltune doctor: no kernel log could be read", 0), 0u) << none.out;
  EXPECT_NE(none.out.find("sudo dltune doctor"), std::string::npos) << none.out;
  EXPECT_EQ(none.out.find("Nothing found"), std::string::npos) << none.out;
}

TEST(DoctorCli, StoresTheEventsOfARecordingsSpanForReport) {
  // A real recording of this host (a second), and a tree whose kern.log has one event inside
  // that second and one a day before: only the first goes into the recording's "events".
  TempTree t;
  const auto db = (t.dir() / "run.db").string();
  const auto rec = dltune::testing::run({DLTUNE_BINARY, "record", "-o", db, "--duration", "1s",
                                         "--interval", "200ms", "-q", "--no-gpus"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  timespec after{};
  ::clock_gettime(CLOCK_REALTIME, &after);
  // RFC 3339 with microseconds: the event half a second before record returned. The recording
  // spans its second of sampling and ends when it is written, just before record exits, so that
  // time is inside it however slowly record started.
  const auto stamp = [](std::time_t t, long usec) {
    char buf[64];
    tm u{};
    ::gmtime_r(&t, &u);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &u);
    return std::string(buf) + "." + std::to_string(1000000 + usec).substr(1) + "Z";
  };
  const long at_us = after.tv_nsec / 1000 - 500000;
  const std::time_t inside_s = after.tv_sec + (at_us < 0 ? -1 : 0);
  const long inside_us = at_us < 0 ? at_us + 1000000 : at_us;
  t.mkdir("etc").write("var/log/kern.log",
                       stamp(after.tv_sec - 86400, 0) +
                           " h kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off.\n" +
                           stamp(inside_s, inside_us) +
                           " h kernel: INFO: task python3:42 blocked for more than 120 seconds.\n");
  const auto r = dltune::testing::run(
      {DLTUNE_BINARY, "doctor", "--root", t.dir().string(), "--since", "2d", "--recording", db});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("1 event(s) stored in"), std::string::npos) << r.out;
  const auto html = (t.dir() / "r.html").string();
  const auto rep = dltune::testing::run({DLTUNE_BINARY, "report", db, "-o", html});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("waited in the kernel (D state)"), std::string::npos);
  EXPECT_EQ(page.find("fallen off"), std::string::npos);
  // A --since window that starts after the recording reaches back to its start.
  const auto narrow = dltune::testing::run(
      {DLTUNE_BINARY, "doctor", "--root", t.dir().string(), "--since", "1s", "--recording", db});
  EXPECT_NE(narrow.out.find("1 event(s) stored in"), std::string::npos) << narrow.out;
  EXPECT_NE(narrow.out.find("the recording's start"), std::string::npos) << narrow.out;
  // Not a recording: refused, nothing read.
  const auto bad = dltune::testing::run({DLTUNE_BINARY, "doctor", "--recording", "/etc/hostname"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("/etc/hostname"), std::string::npos) << bad.err;
}

}  // namespace doctor_cli_test
