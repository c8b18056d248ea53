// The sysctl.d and limits.d drop-ins (merged with the existing sysctl.d files).
// fstab is in dropins_fstab_test.cpp.
#include "settings/dropins.hpp"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "host/parse/limits_conf.hpp"
#include "host/parse/sysctl_conf.hpp"
#include "settings/sysctl_name.hpp"

namespace dropins_test {

using namespace dltune::settings;

namespace {

const std::string kHeader(kSysctlDropinHeader);
const std::string kLimitsHeader(kLimitsDropinHeader);

// What systemd-sysctl would apply from `text`: the last value of each normalised key.
std::map<std::string, std::string> applied(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& a : dltune::host::parse::sysctl_conf(text))
    out[sysctl_normalise(a.key).value_or(a.key)] = a.value;
  return out;
}

// Ubuntu 22.04's /etc/sysctl.d/10-network-security.conf and 10-kernel-hardening.conf (procps),
// as one file a user might have copied into place.
const char* kUbuntuStyle =
    "# Turn on Source Address Verification in all interfaces to\n"
    "# prevent some spoofing attacks.\n"
    "net.ipv4.conf.default.rp_filter=2\n"
    "net.ipv4.conf.all.rp_filter=2\n"
    "\n"
    "# These settings are specific to hardening the kernel itself from attack\n"
    "# from userspace, rather than protecting userspace from other malicious\n"
    "# userspace things.\n"
    "kernel.kptr_restrict = 1\n";

// A dltune drop-in that a user then edited: a comment and a key of their own.
const std::string kEdited = kHeader +
                            "\n"
                            "kernel.numa_balancing = 0\n"
                            "vm/swappiness=60\n"
                            "; added by hand for the file watcher (ticket 4711)\n"
                            "fs.inotify.max_user_watches = 524288\n";

}  // namespace

TEST(SysctlDropin, NewFileHasTheHeaderAndKeysInNameOrder) {
  const auto out = merge_sysctl_dropin(
      "", {{"vm.swappiness", "10"}, {"kernel.numa_balancing", "0"}, {"vm.dirty_ratio", "20"}});
  EXPECT_EQ(out, kHeader +
                     "\n"
                     "kernel.numa_balancing = 0\n"
                     "vm.dirty_ratio = 20\n"
                     "vm.swappiness = 10\n");
}

TEST(SysctlDropin, ReplacesInPlaceKeepsTheUsersLinesAndAppendsNewKeys) {
  const auto out = merge_sysctl_dropin(
      kEdited, {{"vm.swappiness", "10"}, {"kernel.numa_balancing", "0"}, {"vm.dirty_ratio", "20"}});
  // The slash-form key is the same key: its value changes in place, its spelling and its
  // "key=value" style stay; the hand-added key and the ';' comment are kept byte for byte.
  EXPECT_EQ(out, kHeader +
                     "\n"
                     "kernel.numa_balancing = 0\n"
                     "vm/swappiness=10\n"
                     "; added by hand for the file watcher (ticket 4711)\n"
                     "fs.inotify.max_user_watches = 524288\n"
                     "vm.dirty_ratio = 20\n");
  EXPECT_EQ(applied(out).at("vm.swappiness"), "10");
  EXPECT_EQ(applied(out).at("fs.inotify.max_user_watches"), "524288");
}

TEST(SysctlDropin, MergingTwiceGivesTheSameText) {
  const std::map<std::string, std::string> s = {{"vm.swappiness", "10"},
                                                {"net.core.somaxconn", "4096"},
                                                {"net/ipv4/conf/eth0.100/rp_filter", "1"}};
  for (const std::string& start : {std::string(), kEdited, std::string(kUbuntuStyle)}) {
    const auto once = merge_sysctl_dropin(start, s);
    EXPECT_EQ(merge_sysctl_dropin(once, s), once) << start;
    EXPECT_EQ(once.back(), '\n');
    for (const auto& [k, v] : s) EXPECT_EQ(applied(once).at(*sysctl_normalise(k)), v);
  }
}

TEST(SysctlDropin, AFileWithoutTheHeaderGetsItOnTopAndKeepsItsStyle) {
  const auto out = merge_sysctl_dropin(kUbuntuStyle, {{"net.ipv4.conf.all.rp_filter", "1"}});
  EXPECT_EQ(out, kHeader + "\n" +
                     "# Turn on Source Address Verification in all interfaces to\n"
                     "# prevent some spoofing attacks.\n"
                     "net.ipv4.conf.default.rp_filter=2\n"
                     "net.ipv4.conf.all.rp_filter=1\n"
                     "\n"
                     "# These settings are specific to hardening the kernel itself from attack\n"
                     "# from userspace, rather than protecting userspace from other malicious\n"
                     "# userspace things.\n"
                     "kernel.kptr_restrict = 1\n");
}

TEST(SysctlDropin, OddLinesAreRewrittenKeepingTheDashAndEveryDuplicateAgrees) {
  const std::string in = kHeader +
                         "\n"
                         "  vm.swappiness = 60\n"           // indented
                         "vm.dirty_ratio\t=\t40\n"          // tabs
                         "-net.core.somaxconn = 128\n"      // '-': errors ignored, kept
                         "kernel.numa_balancing=1   \n"     // trailing blanks dropped
                         "vm.swappiness=30\n"               // a later duplicate
                         "net.ipv4.conf.*.rp_filter = 2\n"  // a glob: compared as written
                         "net.ipv4.tcp_rmem = 4096\t131072 6291456\n";
  const auto out = merge_sysctl_dropin(in, {{"vm.swappiness", "10"},
                                            {"vm.dirty_ratio", "20"},
                                            {"net.core.somaxconn", "4096"},
                                            {"kernel.numa_balancing", "0"},
                                            {"net.ipv4.conf.*.rp_filter", "1"},
                                            {"net.ipv4.tcp_rmem", "4096 87380 6291456"}});
  EXPECT_EQ(out, kHeader +
                     "\n"
                     "vm.swappiness = 10\n"
                     "vm.dirty_ratio = 20\n"
                     "-net.core.somaxconn = 4096\n"
                     "kernel.numa_balancing=0\n"
                     "vm.swappiness=10\n"
                     "net.ipv4.conf.*.rp_filter = 1\n"
                     "net.ipv4.tcp_rmem = 4096 87380 6291456\n");
}

TEST(SysctlDropin, AVlanNameInEitherSpellingIsOneKey) {
  const auto out = merge_sysctl_dropin(kHeader + "\nnet/ipv4/conf/eth0.100/rp_filter = 2\n",
                                       {{"net.ipv4.conf.eth0/100.rp_filter", "0"}});
  EXPECT_EQ(out, kHeader + "\nnet/ipv4/conf/eth0.100/rp_filter = 0\n");
}

TEST(SysctlDropin, AValueCannotAddALineAndAMissingFinalNewlineIsAdded) {
  const auto out =
      merge_sysctl_dropin(kHeader + "\nvm.swappiness = 60", {{"kernel.core_pattern", " a\nb\r "}});
  EXPECT_EQ(out, kHeader + "\nvm.swappiness = 60\nkernel.core_pattern = a b\n");
}

TEST(SysctlDropin, RemovesEveryLineOfTheKeysAndKeepsTheRest) {
  const auto out = remove_from_sysctl_dropin(kEdited, {"vm.swappiness", "kernel/numa_balancing"});
  EXPECT_EQ(out, kHeader +
                     "\n"
                     "; added by hand for the file watcher (ticket 4711)\n"
                     "fs.inotify.max_user_watches = 524288\n");
  EXPECT_EQ(remove_from_sysctl_dropin(kHeader + "\nvm.swappiness = 1\n-vm.swappiness=2\n",
                                      {"vm/swappiness"}),
            "");
}

TEST(SysctlDropin, RemovalLeavingOnlyCommentsIsEmpty) {
  const auto merged =
      merge_sysctl_dropin("", {{"vm.swappiness", "10"}, {"kernel.numa_balancing", "0"}});
  EXPECT_EQ(remove_from_sysctl_dropin(merged, {"vm.swappiness", "kernel.numa_balancing"}), "");
  // One key left: the file stays.
  EXPECT_EQ(remove_from_sysctl_dropin(merged, {"vm.swappiness"}),
            kHeader + "\nkernel.numa_balancing = 0\n");
  // Keys that are not there: nothing changes.
  EXPECT_EQ(remove_from_sysctl_dropin(merged, {"vm.dirty_ratio"}), merged);
  EXPECT_EQ(remove_from_sysctl_dropin("", {"vm.swappiness"}), "");
}

TEST(SysctlDropin, LinesThatAreNotSettingsAreKeptAndKeepTheFile) {
  // systemd-sysctl ignores a line without '='; dltune neither deletes it nor treats the file as
  // empty because of it.
  const std::string in = kHeader + "\nvm.swappiness = 10\nthis is not a setting\n";
  EXPECT_EQ(remove_from_sysctl_dropin(in, {"vm.swappiness"}),
            kHeader + "\nthis is not a setting\n");
}

// limits.d

namespace {

// Debian 12's /etc/security/limits.conf ends with examples like these; a site then adds its own.
const char* kLimitsFile =
    "# /etc/security/limits.conf\n"
    "#\n"
    "#<domain>      <type>  <item>         <value>\n"
    "#\n"
    "#*               soft    core            0\n"
    "#@student        hard    nproc           20\n"
    "*               soft    nofile          1024\n"
    "@faculty        soft    nproc           20\n"
    "@faculty        hard    nproc           50\n"
    "alice           hard    nofile          4096\n"
    "*\t\t-\tmemlock\t\t64\t# the distribution's default\n"
    "\n"
    "# End of file\n";

}  // namespace

TEST(LimitsDropin, NewFileHasTheHeaderAndSoftAndHardForEachItem) {
  const auto out = merge_limits_dropin("", "*", {{"nofile", "1048576"}, {"memlock", "unlimited"}});
  EXPECT_EQ(out, kLimitsHeader +
                     "\n"
                     "* soft memlock unlimited\n"
                     "* hard memlock unlimited\n"
                     "* soft nofile 1048576\n"
                     "* hard nofile 1048576\n");
  EXPECT_NE(kLimitsHeader.find("limits.d"), std::string::npos);
  EXPECT_NE(kLimitsHeader.find("logins"), std::string::npos);
  EXPECT_NE(kLimitsHeader.find("dltune tune rollback"), std::string::npos);
}

TEST(LimitsDropin, SameDomainAndItemReplacedInPlaceOthersKept) {
  const auto out =
      merge_limits_dropin(kLimitsFile, "*", {{"nofile", "1048576"}, {"memlock", "unlimited"}});
  EXPECT_EQ(out, kLimitsHeader +
                     "\n"
                     "# /etc/security/limits.conf\n"
                     "#\n"
                     "#<domain>      <type>  <item>         <value>\n"
                     "#\n"
                     "#*               soft    core            0\n"
                     "#@student        hard    nproc           20\n"
                     "*               soft    nofile          1048576\n"
                     "@faculty        soft    nproc           20\n"
                     "@faculty        hard    nproc           50\n"
                     "alice           hard    nofile          4096\n"
                     "*\t\t-\tmemlock\t\tunlimited\t# the distribution's default\n"
                     "\n"
                     "# End of file\n"
                     "* hard nofile 1048576\n");
  // pam_limits reads what was meant.
  std::map<std::string, std::string> star;
  for (const auto& e : dltune::host::parse::limits_conf(out))
    if (e.domain == "*") star[e.type + " " + e.item] = e.value;
  EXPECT_EQ(star.at("soft nofile"), "1048576");
  EXPECT_EQ(star.at("hard nofile"), "1048576");
  EXPECT_EQ(star.at("- memlock"), "unlimited");
}

TEST(LimitsDropin, OtherDomainsAreTheirOwn) {
  const auto out = merge_limits_dropin(kLimitsFile, "@faculty", {{"nproc", "4096"}});
  EXPECT_NE(out.find("@faculty        soft    nproc           4096\n"), std::string::npos);
  EXPECT_NE(out.find("@faculty        hard    nproc           4096\n"), std::string::npos);
  EXPECT_NE(out.find("*               soft    nofile          1024\n"), std::string::npos);
  EXPECT_EQ(out.find("@faculty soft"), std::string::npos);  // nothing appended
}

TEST(LimitsDropin, MergingTwiceGivesTheSameText) {
  const std::map<std::string, std::string> items = {{"nofile", "1048576"},
                                                    {"memlock", "unlimited"}};
  for (const std::string& start : {std::string(), std::string(kLimitsFile)}) {
    const auto once = merge_limits_dropin(start, "*", items);
    EXPECT_EQ(merge_limits_dropin(once, "*", items), once);
    EXPECT_EQ(once.back(), '\n');
  }
}

TEST(LimitsDropin, ItemsCompareInLowerCaseAsPamLimitsReadsThem) {
  const auto once = merge_limits_dropin("", "*", {{"NOFILE", "8192"}});
  EXPECT_EQ(once, kLimitsHeader + "\n* soft nofile 8192\n* hard nofile 8192\n");
  EXPECT_EQ(merge_limits_dropin(once, "*", {{"NOFILE", "8192"}}), once);
  EXPECT_EQ(merge_limits_dropin("* SOFT NoFile 1024\n", "*", {{"nofile", "8192"}}),
            kLimitsHeader + "\n* SOFT NoFile 8192\n* hard nofile 8192\n");
  EXPECT_EQ(remove_from_limits_dropin(once, "*", {"NoFile"}), "");
}

TEST(LimitsDropin, RemovalTakesTheDomainsItemLinesAndEmptiesAFileOfOnlyComments) {
  const auto merged =
      merge_limits_dropin("", "*", {{"nofile", "1048576"}, {"memlock", "unlimited"}});
  EXPECT_EQ(remove_from_limits_dropin(merged, "*", {"nofile", "memlock"}), "");
  EXPECT_EQ(remove_from_limits_dropin(merged, "*", {"nofile"}),
            kLimitsHeader + "\n* soft memlock unlimited\n* hard memlock unlimited\n");
  // Another domain's lines are not ours to remove.
  EXPECT_EQ(remove_from_limits_dropin(merged, "alice", {"nofile"}), merged);
  const auto out = remove_from_limits_dropin(kLimitsFile, "*", {"nofile", "memlock"});
  EXPECT_EQ(out.find("*               soft    nofile"), std::string::npos);
  EXPECT_EQ(out.find("memlock\t\t64"), std::string::npos);
  EXPECT_NE(out.find("alice           hard    nofile          4096\n"), std::string::npos);
  EXPECT_NE(out.find("#*               soft    core            0\n"), std::string::npos);
}

TEST(LimitsDropin, CheckRefusesWhatPamLimitsWouldMisread) {
  EXPECT_TRUE(check_limits("*", {{"nofile", "1048576"}, {"memlock", "unlimited"}}));
  EXPECT_TRUE(check_limits("@training", {{"nice", "-5"}, {"stack", "-1"}, {"core", "infinity"}}));
  EXPECT_FALSE(check_limits("", {{"nofile", "1"}}));
  // White space pam_limits splits on, and control characters (fuzz_etc).
  for (const std::string& odd :
       std::vector<std::string>{"a\fb", "a\vb", std::string("a\0b", 3), "a\x01", "a\x7f"})
    EXPECT_FALSE(check_limits(odd, {{"nofile", "1"}})) << odd;
  EXPECT_FALSE(check_limits("two words", {{"nofile", "1"}}));
  EXPECT_FALSE(check_limits("*", {{"openfiles", "1"}}));
  EXPECT_FALSE(check_limits("*", {{"nofile", "-5"}}));
  const auto bad = check_limits("*", {{"nofile", "lots"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "limit nofile must be a number or unlimited, not 'lots'");
}

}  // namespace dropins_test

namespace dropins_test {

// dltune's udev file: a rule for the same disk and attribute changes in place, new ones are
// appended, other lines kept; the rules read back; what a rule cannot hold is refused.
TEST(UdevDropin, MergesInPlaceReadsBackAndRefusesWhatARuleCannotHold) {
  const std::string head = R"(ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", )";
  const std::string existing = std::string(kUdevDropinHeader) + "\n# my note\n" + head +
                               R"(KERNEL=="sdb", ATTR{queue/scheduler}="bfq")" + "\n";
  const auto merged = merge_udev_dropin(
      existing, {{R"(KERNEL=="sdb")", {{"queue/scheduler", "mq-deadline"}}},
                 {R"(ENV{ID_SERIAL}=="WDC_WD40-1")", {{"queue/read_ahead_kb", "1024"}}}});
  ASSERT_TRUE(merged) << merged.error().message();
  EXPECT_EQ(*merged, std::string(kUdevDropinHeader) + "\n# my note\n" + head +
                         R"(KERNEL=="sdb", ATTR{queue/scheduler}="mq-deadline")" + "\n" + head +
                         R"(ENV{ID_SERIAL}=="WDC_WD40-1", ATTR{queue/read_ahead_kb}="1024")" +
                         "\n");
  EXPECT_EQ(merge_udev_dropin(*merged, {{R"(KERNEL=="sdb")", {{"queue/scheduler", "mq-deadline"}}}})
                .value_or(""),
            *merged);
  const auto rules = udev_dropin_rules(*merged);
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].match, R"(KERNEL=="sdb")");
  EXPECT_EQ(rules[0].attribute, "queue/scheduler");
  EXPECT_EQ(rules[0].value, "mq-deadline");
  EXPECT_EQ(rules[0].line, 3);
  EXPECT_EQ(rules[1].match, R"(ENV{ID_SERIAL}=="WDC_WD40-1")");

  EXPECT_FALSE(merge_udev_dropin("", {{R"(KERNEL=="sd*", RUN+="/bin/sh")", {{"queue/x", "1"}}}}));
  EXPECT_FALSE(merge_udev_dropin("", {{R"(KERNEL=="sdb")", {{"../power/state", "mem"}}}}));
  const auto quoted = merge_udev_dropin("", {{R"(KERNEL=="sdb")", {{"queue/scheduler", "a\"b"}}}});
  ASSERT_FALSE(quoted);
  EXPECT_NE(quoted.error().message().find("queue/scheduler"), std::string::npos);
}

}  // namespace dropins_test
