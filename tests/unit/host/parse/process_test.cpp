// The per-process parsers, with text copied from this VM's /proc (Debian 12, Linux 6.1).
#include <gtest/gtest.h>

#include "host/parse/process.hpp"

namespace process_test {

using namespace dltune::host::parse;

namespace {

// /proc/24193/stat of a bash on this VM.
constexpr std::string_view kBash =
    "24193 (bash) S 24191 24193 24193 0 -1 4194560 3394 39407 0 6 0 3 27 10 20 0 1 0 2077332 "
    "5124096 968 18446744073709551615 94573747978240 94573748767645 140731023624864 0 0 0 65536 4 "
    "1132560123 1 0 0 17 1 0 0 0 0 0 94573749000944 94573749049188 94574312624128 "
    "140731023629115 140731023629130 140731023629130 140731023630314 0\n";

// /proc/2/stat: kthreadd, a kernel thread (no memory, empty cmdline).
constexpr std::string_view kKthreadd =
    "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 23 0 0 18446744073709551615 0 0 0 "
    "0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

std::string with_comm(std::string_view comm) {
  std::string s = "1234 (";
  s += comm;
  s += ") R 1 1234 1234 0 -1 4194304 100 0 7 0 250 30 0 0 20 0 3 0 2078169 3133440 410 "
       "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  return s;
}

}  // namespace

TEST(ParseProcStat, RealBashLine) {
  const auto s = parse_proc_stat(kBash);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->pid, 24193);
  EXPECT_EQ(s->comm, "bash");
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->ppid, 24191);
  EXPECT_EQ(s->flags, 4194560u);  // field 9
  EXPECT_EQ(s->flags & kPfKthread, 0u);
  EXPECT_EQ(s->minflt, 3394u);  // field 10
  EXPECT_EQ(s->majflt, 0u);     // field 12
  EXPECT_EQ(s->utime, 0u);      // field 14
  EXPECT_EQ(s->stime, 3u);      // field 15
  EXPECT_EQ(s->threads, 1u);    // field 20
  EXPECT_EQ(s->start_ticks, 2077332u);
  EXPECT_EQ(s->rss_pages, 968u);
  EXPECT_EQ(s->startstack, 140731023624864u);  // field 28
  EXPECT_EQ(s->processor, 1);                  // field 39
}

TEST(ParseProcStat, KernelThread) {
  const auto s = parse_proc_stat(kKthreadd);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->comm, "kthreadd");
  EXPECT_EQ(s->ppid, 0);
  EXPECT_EQ(s->rss_pages, 0u);
  EXPECT_EQ(s->startstack, 0u);
  EXPECT_EQ(s->start_ticks, 23u);
  EXPECT_NE(s->flags & kPfKthread, 0u);  // 2129984 = 0x208040
}

TEST(ParseProcStat, NamesWithParenthesesAndSpaces) {
  for (const std::string_view comm : {"(sd-pam)", "a) b", "x) R 1 2 3", ") ", ""}) {
    const auto text = with_comm(comm);
    const auto s = parse_proc_stat(text);
    ASSERT_TRUE(s) << comm << ": " << s.error().message();
    EXPECT_EQ(s->comm, comm);
    EXPECT_EQ(s->state, 'R');
    EXPECT_EQ(s->ppid, 1);
    EXPECT_EQ(s->majflt, 7u);
    EXPECT_EQ(s->utime, 250u);
    EXPECT_EQ(s->stime, 30u);
    EXPECT_EQ(s->threads, 3u);
    EXPECT_EQ(s->processor, 1);
  }
}

TEST(ParseProcStat, TruncatedOrGarbledNamesTheItem) {
  // Cut after starttime: rss is the first field missing.
  const std::string cut(kBash.substr(0, kBash.find(" 5124096")));
  auto s = parse_proc_stat(cut);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("rss"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("/proc/PID/stat"), std::string::npos);

  s = parse_proc_stat("24193 (bash");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("/proc/PID/stat"), std::string::npos);

  std::string bad(kBash);
  bad.replace(bad.find(" 3394 "), 6, " 33x4 ");
  s = parse_proc_stat(bad);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("minflt"), std::string::npos) << s.error().message();

  EXPECT_FALSE(parse_proc_stat(""));
}

TEST(ParseProcSchedstat, RealAndBad) {
  const auto s = parse_proc_schedstat("0 51663 1\n");  // /proc/self/schedstat of a cat
  ASSERT_TRUE(s);
  EXPECT_EQ(s->run_ns, 0u);
  EXPECT_EQ(s->wait_ns, 51663u);
  EXPECT_EQ(s->timeslices, 1u);
  const auto big = parse_proc_schedstat("1843779233 93283711 20934\n");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->run_ns, 1843779233u);
  EXPECT_FALSE(parse_proc_schedstat("0 51663\n"));
  EXPECT_FALSE(parse_proc_schedstat("a b c\n"));
  EXPECT_FALSE(parse_proc_schedstat(""));
}

TEST(ParseProcStatus, Switches) {
  // The end of /proc/self/status on this VM.
  constexpr std::string_view kStatus =
      "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t25871\nVmRSS:\t    1640 kB\n"
      "Cpus_allowed_list:\t0-1\nMems_allowed_list:\t0\nvoluntary_ctxt_switches:\t12\n"
      "nonvoluntary_ctxt_switches:\t3\n";
  const auto s = parse_proc_status_switches(kStatus);
  EXPECT_EQ(s.voluntary, 12u);
  EXPECT_EQ(s.involuntary, 3u);
  const auto none = parse_proc_status_switches("Name:\tcat\n");
  EXPECT_FALSE(none.voluntary);
  EXPECT_FALSE(none.involuntary);
}

TEST(ParseProcIo, RealFile) {
  constexpr std::string_view kIo =
      "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 8192\n"
      "cancelled_write_bytes: 0\n";
  const auto io = parse_proc_io(kIo);
  EXPECT_EQ(io.rchar, 6976u);
  EXPECT_EQ(io.wchar, 0u);
  EXPECT_EQ(io.read_bytes, 4096u);
  EXPECT_EQ(io.write_bytes, 8192u);  // not cancelled_write_bytes
  EXPECT_FALSE(parse_proc_io("").rchar);
}

TEST(CmdlineText, JoinsTrimsAndCaps) {
  std::string out = "old";
  using namespace std::string_view_literals;
  cmdline_text("/process_api\0--firecracker-init\0--addr\0000.0.0.0:2\0"sv, out);
  EXPECT_EQ(out, "/process_api --firecracker-init --addr 0.0.0.0:2");
  cmdline_text(""sv, out);  // a kernel thread
  EXPECT_EQ(out, "");
  cmdline_text("python train.py\0\0\0\0"sv, out);  // setproctitle padding
  EXPECT_EQ(out, "python train.py");
  const std::string long_arg(1000, 'a');
  cmdline_text(long_arg, out);
  EXPECT_EQ(out.size(), kCmdlineMax);
}

TEST(EnvironValue, FindsTheNamedEntryOnlyWhole) {
  using namespace std::string_view_literals;
  const auto env = "LOCAL_RANK=1\0RANKS=9\0RANK=3\0WORLD_SIZE=4\0RANK=7\0"sv;
  EXPECT_EQ(environ_value(env, "RANK"), "3");  // not LOCAL_RANK's nor RANKS', the first RANK
  EXPECT_EQ(environ_value(env, "LOCAL_RANK"), "1");
  EXPECT_EQ(environ_value(env, "WORLD_SIZE"), "4");
  EXPECT_FALSE(environ_value(env, "MASTER_PORT"));
  EXPECT_EQ(environ_value("EMPTY=\0"sv, "EMPTY"), "");
  EXPECT_EQ(environ_value("LAST=x"sv, "LAST"), "x");  // no closing NUL (cut at a read's limit)
  EXPECT_FALSE(environ_value(""sv, "RANK"));
  EXPECT_FALSE(environ_value("RANK\0"sv, "RANK"));  // no '='
}

TEST(EnvironEntries, EveryNameAndValueTheFirstOfADuplicate) {
  using namespace std::string_view_literals;
  const auto env = environ_entries("A=1\0B=x=y\0EMPTY=\0NOEQ\0=nameless\0A=2\0LAST=z"sv);
  EXPECT_EQ(env.size(), 4u);
  EXPECT_EQ(env.at("A"), "1");
  EXPECT_EQ(env.at("B"), "x=y");
  EXPECT_EQ(env.at("EMPTY"), "");
  EXPECT_EQ(env.at("LAST"), "z");
  EXPECT_TRUE(environ_entries(""sv).empty());
}

}  // namespace process_test
