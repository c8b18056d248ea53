// Kernel lines from syslog files (doctor): both line formats, rotations plain and
// gzip'd read oldest first, --since windows, a truncated .gz and an overlong line, and
// `dltune doctor --root` on such a tree. The trees are made by the test (the .gz with zlib).
#include <sys/stat.h>
#include <utime.h>
#include <zlib.h>

#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnose/doctor.hpp"
#include "diagnose/journal.hpp"
#include "diagnose/kernel_log.hpp"
#include "diagnose/syslog_files.hpp"
#include "support/run.hpp"
#include "support/temp_tree.hpp"

namespace syslog_files_test {

using namespace dltune::diagnose;
using dltune::testing::TempTree;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

void gzip(const std::filesystem::path& path, const std::string& text, bool truncate = false) {
  gzFile f = ::gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ::gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  ::gzclose(f);
  if (truncate) std::filesystem::resize_file(path, std::filesystem::file_size(path) - 12);
}

void set_mtime(const std::filesystem::path& path, std::time_t t) {
  utimbuf u{t, t};
  ASSERT_EQ(::utime(path.c_str(), &u), 0);
}

std::time_t utc(int y, int mo, int d, int h, int mi, int s) {
  tm t{};
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = s;
  return ::timegm(&t);
}

}  // namespace

TEST(SyslogLines, Rfc3339AndTraditionalKernelLines) {
  // Debian 12's rsyslog default (RFC 3339, with the zone).
  auto l = parse_syslog_line(
      "2026-11-30T14:05:01.250000+01:00 gpu-07 kernel: [12345.678901] NVRM: Xid "
      "(PCI:0000:3b:00): 79, GPU has fallen off the bus.\n",
      0);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->wall_ns,
            static_cast<std::int64_t>(utc(2026, 11, 30, 13, 5, 1)) * kSecond + 250'000'000);
  EXPECT_EQ(l->text, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  l = parse_syslog_line("2026-11-30T13:05:01Z gpu-07 kernel: EXT4-fs error (device sda1): x", 0);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->wall_ns, static_cast<std::int64_t>(utc(2026, 11, 30, 13, 5, 1)) * kSecond);
  // The traditional format: local time, the year from the file (TZ=UTC for the test).
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  const std::time_t mtime = utc(2026, 11, 30, 23, 0, 0);
  l = parse_syslog_line(
      "Nov 30 14:05:01 gpu-07 kernel: [ 5.123] INFO: task python3:42 blocked "
      "for more than 120 seconds.",
      mtime);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->wall_ns, static_cast<std::int64_t>(utc(2026, 11, 30, 14, 5, 1)) * kSecond);
  EXPECT_EQ(l->text, "INFO: task python3:42 blocked for more than 120 seconds.");
  l = parse_syslog_line("Nov  3 01:02:03 h kernel: x", mtime);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->wall_ns, static_cast<std::int64_t>(utc(2026, 11, 3, 1, 2, 3)) * kSecond);
  // December's lines in a file last written in January belong to the year before.
  l = parse_syslog_line("Dec 31 23:59:59 h kernel: x", utc(2027, 1, 1, 0, 10, 0));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->wall_ns, static_cast<std::int64_t>(utc(2026, 12, 31, 23, 59, 59)) * kSecond);
  // Not the kernel's, or not a line.
  for (const char* bad : {"Nov 30 14:05:01 gpu-07 sshd[12]: Accepted publickey", "",
                          "Xyz 30 14:05:01 h kernel: x", "2026-11-30T14:05:01 h kernel: x",
                          "2026-13-30T14:05:01+0100 h kernel: x", "Nov 30 14:05 h kernel: x"})
    EXPECT_FALSE(parse_syslog_line(bad, mtime)) << bad;
  ::unsetenv("TZ");
  ::tzset();
}

// Found by fuzz_kernel_log: a line that is only the start of an RFC 3339 stamp was
// read past its end. The text lives in a buffer of exactly its size, so ASan sees any overread.
TEST(SyslogLines, ShortLinesAreNeverReadPastTheirEnd) {
  for (const std::string text : {"4184", "2026-11-30T12:00:0", "2026-11-30T12:00:00", "Nov 30",
                                 "Nov 30 12:00:00", "2026-11-30T12:00:00+01", ""}) {
    std::unique_ptr<char[]> exact(new char[text.size() + 1]);
    std::copy(text.begin(), text.end(), exact.get());
    const std::string_view line(exact.get(), text.size());
    EXPECT_FALSE(parse_syslog_line(line, 1'700'000'000)) << text;
  }
}

TEST(SyslogFiles, RotationsOldestFirstGzipTooWithWindowsAndDamage) {
  TempTree t;
  const std::string x =
      "2026-11-28T10:00:00Z h kernel: NVRM: Xid (PCI:0000:3b:00): 48, Double Bit ECC Error\n";
  t.write("var/log/kern.log.1",
          "2026-11-29T10:00:00Z h kernel: INFO: task pt_data_worker:77 blocked for more than "
          "120 seconds.\n" +
              std::string(70000, 'y') + " kernel: too long\n" +
              "2026-11-29T11:00:00Z h sshd[1]: not the kernel\n")
      .write("var/log/kern.log",
             "2026-11-30T10:00:00Z h kernel: Memory cgroup out of memory: Killed process 9 "
             "(python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 "
             "pgtables:1kB oom_score_adj:0\n")
      .write("var/log/syslog",
             "2026-11-30T10:00:00Z h kernel: nvme nvme0: I/O 1 QID 2 timeout, "
             "aborting\n")
      .write("var/log/kern.log.notes", "ignored\n");
  gzip(t.dir() / "var/log/kern.log.2.gz", x);
  gzip(t.dir() / "var/log/kern.log.3.gz", x + x, true);  // truncated: an error, not a crash
  const auto root = dltune::host::Root::at(t.dir());
  ASSERT_TRUE(root);
  const auto files = syslog_files(*root);
  EXPECT_EQ(files, (std::vector<std::string>{"/var/log/kern.log.3.gz", "/var/log/kern.log.2.gz",
                                             "/var/log/kern.log.1", "/var/log/kern.log"}));
  const auto xids = builtin_xid_table();
  ASSERT_TRUE(xids);
  EventCollector c(*xids);
  std::vector<std::string> from;
  const auto any = [](std::string_view) { return true; };
  const auto st =
      read_syslog(*root, files, 0, 0, any, [&](const std::string& p, const SyslogLine& l) {
        from.push_back(p);
        c.add(l.wall_ns, p, l.text);
      });
  const auto events = c.finish();
  std::vector<std::string> kinds;
  for (const auto& e : events) kinds.push_back(e.event.kind);
  // The truncated file gives what it could before the damage (at least its first line), and says
  // so; the overlong line is skipped and counted; syslog is not read beside kern.log.
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(kinds.back(), "oom_kill");
  EXPECT_EQ(events[events.size() - 2].event.kind, "hung_task");
  EXPECT_EQ(events[events.size() - 2].source, "/var/log/kern.log.1");
  EXPECT_EQ(events[events.size() - 3].source, "/var/log/kern.log.2.gz");
  EXPECT_EQ(events[events.size() - 3].event.fields.at("xid"), "48");
  EXPECT_EQ(st.skipped, 1u);
  ASSERT_EQ(st.errors.size(), 1u);
  EXPECT_NE(st.errors[0].find("kern.log.3.gz"), std::string::npos) << st.errors[0];
  for (const auto& p : from) EXPECT_NE(p, "/var/log/syslog");
  // A window: only the last day's kill; files last written before it are not opened.
  for (const auto& f : files) set_mtime(t.dir() / f.substr(1), utc(2026, 11, 30, 12, 0, 0));
  set_mtime(t.dir() / "var/log/kern.log.3.gz", utc(2026, 11, 28, 12, 0, 0));
  EventCollector w(*xids);
  const auto st2 =
      read_syslog(*root, files, utc(2026, 11, 30, 0, 0, 0) * kSecond, 0, any,
                  [&](const std::string& p, const SyslogLine& l) { w.add(l.wall_ns, p, l.text); });
  const auto recent = w.finish();
  ASSERT_EQ(recent.size(), 1u);
  EXPECT_EQ(recent[0].event.kind, "oom_kill");
  EXPECT_TRUE(st2.errors.empty()) << "the damaged file was last written before the window";
  // Without kern.log, syslog is the source.
  TempTree only;
  only.write("var/log/syslog", "x\n").write("var/log/messages", "y\n");
  EXPECT_EQ(syslog_files(*dltune::host::Root::at(only.dir())),
            (std::vector<std::string>{"/var/log/syslog"}));
}

TEST(SyslogFiles, DoctorReadsATreeGivenWithRoot) {
  TempTree t;
  t.write("var/log/kern.log",
          "2026-11-30T10:00:00Z h kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off "
          "the bus.\n"
          "2026-11-30T10:00:01Z h kernel: pcieport 0000:00:01.0: AER: Corrected error "
          "received: 0000:3b:00.0\n")
      .write("proc/vmstat", "nr_free_pages 1\ncompact_stall 12\ncompact_fail 3\n");
  // The library call that `dltune doctor --root DIR --boot` makes.
  const auto& xids = builtin_xid_table();
  ASSERT_TRUE(xids);
  const auto root = dltune::host::Root::at(t.dir());
  ASSERT_TRUE(root);
  const auto report = doctor(DoctorRequest{}, *root, *xids);
  EXPECT_EQ(report.exit_code(), 2);  // a critical event
  const auto j = to_json(report);
  EXPECT_EQ(j["counts"]["xid"], 1);
  EXPECT_EQ(j["counts"]["aer"], 1);
  EXPECT_EQ(j["events"][0]["source"], "/var/log/kern.log");
  EXPECT_EQ(j["counts"]["compaction_stall"], 1);  // from the tree's /proc/vmstat
  EXPECT_NE(j.dump().find("\"compact_fail\":\"3\""), std::string::npos);
  EXPECT_NE(j["notes"].dump().find("no /dev/kmsg"), std::string::npos);
  EXPECT_TRUE(report.critical.has_value());
  EXPECT_EQ(report.syslog_files, 1u);
  EXPECT_FALSE(report.first_action.empty());
}

TEST(Journal, DoctorReadsTheKernelsEntriesOfARealJournalFile) {
  // A real journal file, written by systemd-journal-remote from the journal export format
  // (https://systemd.io/JOURNAL_EXPORT_FORMATS/), in the machine-id directory where journald
  // keeps them; the sshd entry is not the kernel's and is left out.
  TempTree t;
  t.mkdir("etc").mkdir("var/log/journal/0123456789abcdef0123456789abcdef");
  const auto dir = t.dir() / "var/log/journal/0123456789abcdef0123456789abcdef";
  t.write("export.txt",
          "__REALTIME_TIMESTAMP=1796050000000000\n__MONOTONIC_TIMESTAMP=1000\n"
          "_BOOT_ID=0123456789abcdef0123456789abcdef\n_TRANSPORT=kernel\nPRIORITY=3\n"
          "MESSAGE=NVRM: Xid (PCI:0000:3b:00): 48, Double Bit ECC Error\n\n"
          "__REALTIME_TIMESTAMP=1796050001000000\n__MONOTONIC_TIMESTAMP=2000\n"
          "_BOOT_ID=0123456789abcdef0123456789abcdef\n_TRANSPORT=syslog\n"
          "MESSAGE=INFO: task python3:1 blocked for more than 120 seconds.\n\n"
          "__REALTIME_TIMESTAMP=1796050002000000\n__MONOTONIC_TIMESTAMP=3000\n"
          "_BOOT_ID=0123456789abcdef0123456789abcdef\n_TRANSPORT=kernel\n"
          "MESSAGE=INFO: task pt_data_worker:77 blocked for more than 120 seconds.\n\n");
  const auto made = dltune::testing::run({"/lib/systemd/systemd-journal-remote",
                                          "--output=" + (dir / "system.journal").string(),
                                          (t.dir() / "export.txt").string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto root = dltune::host::Root::at(t.dir());
  ASSERT_TRUE(root);
  EXPECT_TRUE(has_journal(*root));
  const auto& xids = builtin_xid_table();
  ASSERT_TRUE(xids);
  const auto report = doctor(DoctorRequest{}, *root, *xids);
  EXPECT_TRUE(report.journal);
  const auto j = to_json(report);
  ASSERT_EQ(j["events"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["events"][0]["source"], "journal");
  EXPECT_EQ(j["events"][0]["fields"]["xid"], "48");
  EXPECT_EQ(j["events"][0]["time_ns"], 1796050000000000000);
  EXPECT_EQ(j["events"][1]["fields"]["task"], "pt_data_worker");
  EXPECT_EQ(report.exit_code(), 2);
  // A window after the first entry leaves it out.
  DoctorRequest late;
  late.since_wall_ns = 1796050001000000000;
  const auto later = doctor(late, *root, *xids);
  ASSERT_EQ(later.events.size(), 1u);
  EXPECT_EQ(later.events[0].event.fields.at("task"), "pt_data_worker");
}

}  // namespace syslog_files_test
