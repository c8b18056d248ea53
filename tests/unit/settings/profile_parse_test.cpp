#include <regex>

#include <gtest/gtest.h>

#include "audit/rules.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"

namespace profile_parse_test {

using dltune::Result;
using dltune::settings::Expected;
using dltune::settings::parse_profile;
using dltune::settings::Profile;

namespace {

const dltune::settings::KeyValidator kValidate = [](const std::string& key) {
  return dltune::settings::validate_key(key);
};

Result<Profile> parse(const std::string& text) {
  return parse_profile(text, "site.toml", kValidate);
}

// A setting with everything required, and `extra` lines added.
std::string setting(const std::string& key, const std::string& extra) {
  return "[settings.\"" + key + "\"]\n" + extra + "\nreason = \"why\"\nsource = \"where\"\n";
}

std::string error_of(const std::string& text) {
  const auto r = parse(text);
  EXPECT_FALSE(r.has_value()) << text;
  return r ? std::string() : r.error().message();
}

}  // namespace

TEST(ParseProfile, ReadsEveryField) {
  const auto p = parse(R"([profile]
name = "site"
description = "Our cluster."
include = ["training", "defaults"]

[settings."vm.swappiness"]
value = 10
severity = "info"
reason = "Keep tensors in RAM."
source = "vm.rst"

[settings."shm.size"]
value = ">= 1073741824"
critical = ">=268435456"
reason = "DataLoader workers."
source = "PyTorch docs"

[settings."net.ipv4.tcp_rmem"]
value = ">= 16777216"
field = 3
severity = "critical"
reason = "r"
source = "s"

[settings."thp.enabled"]
value = ["always", "madvise"]
reason = "r"
source = "s"

[settings."gpu.nouveau"]
value = false
reason = "r"
source = "s"
)");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->name, "site");
  EXPECT_EQ(p->description, "Our cluster.");
  EXPECT_EQ(p->includes, (std::vector<std::string>{"training", "defaults"}));
  EXPECT_EQ(p->chain, std::vector<std::string>{"site"});
  ASSERT_EQ(p->entries.size(), 5u);
  // File order, not toml++'s sorted table order.
  EXPECT_EQ(p->entries[0].key, "vm.swappiness");
  EXPECT_EQ(p->entries[1].key, "shm.size");
  EXPECT_EQ(p->entries[2].key, "net.ipv4.tcp_rmem");
  EXPECT_EQ(p->entries[3].key, "thp.enabled");
  EXPECT_EQ(p->entries[4].key, "gpu.nouveau");

  const auto& swap = p->entries[0];
  EXPECT_EQ(swap.expected.kind, Expected::Kind::kExact);
  EXPECT_EQ(swap.expected.text(), "10");
  EXPECT_EQ(swap.severity, "info");
  EXPECT_EQ(swap.reason, "Keep tensors in RAM.");
  EXPECT_EQ(swap.source, "vm.rst");
  EXPECT_EQ(swap.origin, "site");
  EXPECT_FALSE(swap.field.has_value());
  EXPECT_FALSE(swap.critical.has_value());

  const auto& shm = p->entries[1];
  EXPECT_EQ(shm.severity, "warn");  // the default
  EXPECT_EQ(shm.expected.text(), ">= 1073741824");
  ASSERT_TRUE(shm.critical.has_value());
  EXPECT_EQ(shm.critical->text(), ">= 268435456");
  EXPECT_FALSE(shm.critical->matches("67108864"));

  EXPECT_EQ(p->entries[2].field, 3);
  EXPECT_EQ(p->entries[2].severity, "critical");
  EXPECT_EQ(p->entries[3].expected.kind, Expected::Kind::kOneOf);
  EXPECT_EQ(p->entries[3].expected.text(), "one of always, madvise");
  EXPECT_EQ(p->entries[4].expected.text(), "false");
  EXPECT_EQ(p->find("gpu.nouveau"), &p->entries[4]);
  EXPECT_EQ(p->find("vm.dirty_ratio"), nullptr);
}

TEST(ParseProfile, ValueForms) {
  struct Case {
    const char* toml;
    Expected::Kind kind;
    std::vector<std::string> values;
  };
  const Case cases[] = {
      {"value = 10", Expected::Kind::kExact, {"10"}},
      {"value = -1", Expected::Kind::kExact, {"-1"}},
      {"value = true", Expected::Kind::kExact, {"true"}},
      {"value = \"madvise\"", Expected::Kind::kExact, {"madvise"}},
      {"value = \"4096 131072 6291456\"", Expected::Kind::kExact, {"4096 131072 6291456"}},
      {"value = \">= 16777216\"", Expected::Kind::kAtLeast, {"16777216"}},
      {"value = \">=16777216\"", Expected::Kind::kAtLeast, {"16777216"}},
      {"value = [\"always\", \"madvise\"]", Expected::Kind::kOneOf, {"always", "madvise"}},
      {"value = [0, 2]", Expected::Kind::kOneOf, {"0", "2"}},
      {"value = [\"never\"]", Expected::Kind::kOneOf, {"never"}},
  };
  for (const auto& c : cases) {
    // A sysctl without a known range: every form parses (vm.swappiness's range is tested below).
    const auto p = parse(setting("vm.example_knob", c.toml));
    ASSERT_TRUE(p.has_value()) << c.toml << ": " << p.error().message();
    ASSERT_EQ(p->entries.size(), 1u);
    EXPECT_EQ(p->entries[0].expected.kind, c.kind) << c.toml;
    EXPECT_EQ(p->entries[0].expected.values, c.values) << c.toml;
  }
}

TEST(ParseProfile, SyntaxErrorsNameFileLineAndColumn) {
  // toml++'s own description after "FILE:LINE:COLUMN: ".
  const auto e1 = error_of("[profile]\nname = \"x\"\n\n[settings.\"vm.swappiness\"]\nvalue = \n");
  EXPECT_TRUE(std::regex_search(e1, std::regex("^site\\.toml:5:[0-9]+: \\S"))) << e1;

  const auto e2 = error_of("[profile]\nname = \"unterminated\n");
  EXPECT_TRUE(std::regex_search(e2, std::regex("^site\\.toml:2:[0-9]+: "))) << e2;

  const auto e3 = error_of("[settings.\"vm.swappiness\"]\nvalue = 1\nvalue = 2\n");
  EXPECT_TRUE(std::regex_search(e3, std::regex("^site\\.toml:3:[0-9]+: .*value"))) << e3;
}

TEST(ParseProfile, RefusedContentNamesTheKeyAndTheFile) {
  struct Case {
    std::string toml;
    const char* key;   // must be named
    const char* says;  // and this said
  };
  const Case cases[] = {
      // keys the rule table does not know, or sysctl names that leave /proc/sys
      {setting("bogus.thing", "value = 1"), "bogus.thing", "unknown setting"},
      {setting("vm..swappiness", "value = 1"), "vm..swappiness", "empty component"},
      {setting("net.ipv4.conf./.rp_filter", "value = 1"), "net.ipv4.conf./.rp_filter", "'..'"},
      {setting("../../etc/shadow", "value = 1"), "../../etc/shadow", "unknown setting"},
      {setting("/proc/sys/vm/swappiness", "value = 1"), "/proc/sys/vm/swappiness", "unknown"},
      // missing fields
      {"[settings.\"vm.swappiness\"]\nreason = \"r\"\nsource = \"s\"\n", "vm.swappiness",
       "missing value"},
      {"[settings.\"vm.dirty_ratio\"]\nvalue = 1\nreason = \" \"\nsource = \"s\"\n",
       "vm.dirty_ratio", "reason is empty"},
      // wrong types
      {setting("vm.swappiness", "value = 1.5"), "vm.swappiness", "floating-point"},
      {setting("vm.swappiness", "value = {a = 1}"), "vm.swappiness", "a table"},
      {setting("vm.swappiness", "value = []"), "vm.swappiness", "empty set"},
      {setting("vm.swappiness", "value = [true]"), "vm.swappiness", "strings and integers"},
      {setting("vm.swappiness", "value = [[1]]"), "vm.swappiness", "strings and integers"},
      {setting("vm.swappiness", "value = [\">= 5\"]"), "vm.swappiness", "not a minimum"},
      {setting("vm.swappiness", "value = \">= abc\""), "vm.swappiness", ">= abc"},
      {setting("vm.swappiness", "value = \"\""), "vm.swappiness", "empty value"},
      {setting("vm.swappiness", "value = 1979-05-27"), "vm.swappiness", "a date"},
      {"[settings.\"vm.swappiness\"]\nvalue = 1\nreason = 5\nsource = \"s\"\n", "vm.swappiness",
       "reason must be a string"},
      {setting("vm.swappiness", "value = 1\ncritical = 2.5"), "vm.swappiness", "critical"},
      // unknown fields, a misspelt one, an unquoted dotted key
      {setting("vm.swappiness", "value = 1\nvaule = 1"), "vm.swappiness",
       "unknown field \"vaule\""},
      {"[settings.vm.swappiness]\nvalue = 1\nreason = \"r\"\nsource = \"s\"\n", "vm",
       "[settings.\"vm.swappiness\"]"},
      {"[settings]\n\"vm.swappiness\" = 10\n", "vm.swappiness", "must be a table"},
      // out of range
      {setting("vm.swappiness", "value = 1\nseverity = \"fatal\""), "vm.swappiness", "\"fatal\""},
      {setting("vm.swappiness", "value = 1\nseverity = 2"), "vm.swappiness", "severity"},
      {setting("net.ipv4.tcp_rmem", "value = 1\nfield = 0"), "net.ipv4.tcp_rmem", "1-based"},
      {setting("net.ipv4.tcp_rmem", "value = 1\nfield = -3"), "net.ipv4.tcp_rmem", "1-based"},
      {setting("net.ipv4.tcp_rmem", "value = 1\nfield = \"3\""), "net.ipv4.tcp_rmem",
       "field must be an integer"},
      // drop takes no value
      {"[settings.\"vm.swappiness\"]\ndrop = true\nvalue = 1\n", "vm.swappiness", "drop"},
      {"[settings.\"vm.swappiness\"]\ndrop = \"yes\"\n", "vm.swappiness", "drop must be"},
  };
  for (const auto& c : cases) {
    const auto e = error_of(c.toml);
    EXPECT_NE(e.find(c.key), std::string::npos) << c.toml << "\n=> " << e;
    EXPECT_NE(e.find(c.says), std::string::npos) << c.toml << "\n=> " << e;
    EXPECT_TRUE(e.starts_with("site.toml:")) << e;
  }
}

TEST(ParseProfile, RefusedContentHasTheLineOfTheItem) {
  const auto e = error_of("[profile]\nname = \"x\"\n\n" + setting("vm.swappiness", "vaule = 1"));
  EXPECT_TRUE(e.starts_with("site.toml:5:1: setting \"vm.swappiness\": unknown field")) << e;
}

TEST(ParseProfile, RefusesUnknownTablesAndHeaderFields) {
  EXPECT_NE(error_of("[setings.\"vm.swappiness\"]\nvalue = 1\n").find("unknown table [setings]"),
            std::string::npos);
  EXPECT_NE(error_of("[profile]\nnmae = \"x\"\n").find("unknown field \"nmae\""),
            std::string::npos);
  // One name is a string (tuned's `include=`), several an array; anything else is refused.
  EXPECT_NE(error_of("[profile]\ninclude = 5\n").find("include must be a profile name or an array"),
            std::string::npos);
  EXPECT_NE(error_of("[profile]\ninclude = \"\"\n").find("non-empty"), std::string::npos);
  EXPECT_NE(error_of("[profile]\ninclude = [1]\n").find("include"), std::string::npos);
  EXPECT_NE(error_of("[profile]\nname = \"\"\n").find("name"), std::string::npos);
  EXPECT_NE(error_of("settings = 5\n").find("settings must be a table"), std::string::npos);
  EXPECT_NE(error_of("top = 1\n").find("unknown key \"top\" at the top"), std::string::npos);
}

TEST(ParseProfile, IncludeAtTheTopIsTheParentAsTunedWritesIt) {
  // tuned: `[main] include=throughput-performance`; here the first line of a user's file.
  const auto p = parse("include = \"training\"\n" + setting("vm.swappiness", "value = 1"));
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->includes, (std::vector<std::string>{"training"}));
  const auto several = parse("include = [\"training\", \"mine\"]\n");
  ASSERT_TRUE(several) << several.error().message();
  EXPECT_EQ(several->includes.size(), 2u);
  EXPECT_NE(error_of("include = \"training\"\n[profile]\ninclude = \"defaults\"\n")
                .find("include is given twice"),
            std::string::npos);
  EXPECT_NE(error_of("include = 5\n").find("site.toml:1:11: include must be a profile name"),
            std::string::npos);
}

TEST(ParseProfile, DropsAreListedNotEntries) {
  const auto p = parse(
      "[profile]\ninclude = [\"training\"]\n"
      "[settings.\"vm.dirty_ratio\"]\ndrop = true\n"
      "[settings.\"vm.swappiness\"]\ndrop = true\nreason = \"we swap on purpose\"\n" +
      setting("vm.overcommit_memory", "value = 0\ndrop = false"));
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->drops, (std::vector<std::string>{"vm.dirty_ratio", "vm.swappiness"}));
  ASSERT_EQ(p->entries.size(), 1u);
  EXPECT_EQ(p->entries[0].key, "vm.overcommit_memory");
}

TEST(ParseProfile, NameDefaultsToTheFileName) {
  const auto p =
      parse_profile(setting("vm.swappiness", "value = 10"), "/home/me/fast-nodes.toml", kValidate);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->name, "fast-nodes");
  EXPECT_EQ(p->entries[0].origin, "fast-nodes");
  const auto empty = parse_profile("", "x/empty.toml", kValidate);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->entries.empty());
  EXPECT_EQ(empty->chain, std::vector<std::string>{"empty"});
}

TEST(ParseProfile, WithoutValidatorAnyKeyIsTaken) {
  const auto p = parse_profile(setting("bogus.thing", "value = 1"), "x.toml", nullptr);
  EXPECT_TRUE(p.has_value());
}

TEST(ParseProfile, SlashFormSysctlKeysBecomeDotted) {
  const auto p = parse(setting("net/ipv4/conf/eth0.100/rp_filter", "value = 2") +
                       setting("vm/swappiness", "value = 10"));
  ASSERT_TRUE(p.has_value()) << p.error().message();
  ASSERT_EQ(p->entries.size(), 2u);
  EXPECT_EQ(p->entries[0].key, "net.ipv4.conf.eth0/100.rp_filter");
  EXPECT_EQ(p->entries[1].key, "vm.swappiness");

  const auto e =
      error_of(setting("vm.swappiness", "value = 10") + setting("vm/swappiness", "value = 60"));
  EXPECT_NE(e.find("set twice"), std::string::npos) << e;
  EXPECT_NE(e.find("site.toml:5:"), std::string::npos) << e;
}

// A value outside what the setting takes is a profile error where it was written, naming the
// setting, the value and what is allowed: never a plan ("60 -> ten").
TEST(ParseProfile, EveryValueIsCheckedAgainstTheSettingsTypeAndRange) {
  struct Case {
    std::string key, line, says;
  };
  const std::vector<Case> cases = {
      {"vm.swappiness", "value = \"ten\"", "value \"ten\": expected a whole number from 0 to 200"},
      {"vm.swappiness", "value = -5", "value \"-5\": expected a whole number from 0 to 200"},
      {"vm.swappiness", "value = 201", "value \"201\": expected a whole number from 0 to 200"},
      {"vm.swappiness", "value = \"10\\nvm.overcommit_memory = 1\"",
       "value \"10\\nvm.overcommit_memory = 1\": expected a whole number"},
      {"vm.swappiness", "value = \">= 300\"", "value \">= 300\": expected a whole number from 0"},
      {"vm.overcommit_memory", "value = 3", "expected a whole number from 0 to 2"},
      {"vm.dirty_ratio", "value = 101", "expected a whole number from 0 to 100"},
      {"vm.dirty_background_ratio", "value = [5, 200]", "value \"200\": expected"},
      {"net.ipv4.tcp_rmem", "value = \"4096 87380\"",
       "expected 3 whole numbers separated by spaces"},
      {"net.ipv4.tcp_rmem", "value = \"big\"\nfield = 3", "value \"big\": expected a whole number"},
      {"net.ipv4.tcp_rmem", "value = 1\nfield = 4", "field 4: net.ipv4.tcp_rmem has 3 fields"},
      {"thp.enabled", "value = \"sometimes\"",
       "value \"sometimes\": expected one of always, madvise or never"},
      {"thp.enabled", "value = \">= 1\"", "a minimum is for numbers"},
      {"limits.nofile", "value = \"lots\"", "expected unlimited or a whole number from 1"},
      {"limits.memlock", "value = -1", "expected unlimited or a whole number, 0 or more"},
      {"block.read_ahead_kb", "value = \"fast\"", "expected a whole number from 0"},
      {"cpu.governor", "value = \"perf mode\"", "expected a name"},
      {"mount.noatime", "value = \"maybe\"", "expected true or false"},
      {"vm.no_range_known", "value = \"a\\u0007b\"", "expected one line of printable text"},
      {"vm.swappiness", "value = 10\ncritical = \"none\"", "critical \"none\": expected"},
  };
  for (const auto& c : cases) {
    const auto why = error_of(setting(c.key, c.line));
    EXPECT_NE(why.find("site.toml:2:"), std::string::npos) << c.line << ": " << why;
    EXPECT_NE(why.find("setting \"" + c.key + "\""), std::string::npos) << why;
    EXPECT_NE(why.find(c.says), std::string::npos) << c.line << ": " << why;
  }
  // What each takes and what the built-in profiles hold passes.
  for (const auto& [key, line] : std::vector<std::pair<std::string, std::string>>{
           {"vm.swappiness", "value = 200"},
           {"vm.swappiness", "value = \">= 0\""},
           {"net.ipv4.tcp_rmem", "value = \"4096 131072 16777216\""},
           {"net.ipv4.tcp_rmem", "value = \">= 16777216\"\nfield = 3"},
           {"thp.defrag", "value = \"defer+madvise\""},
           {"limits.memlock", "value = \"unlimited\""},
           {"mount.noatime", "value = \"yes\""},
           {"net.ipv4.tcp_congestion_control", "value = \"bbr\""}})
    EXPECT_TRUE(parse(setting(key, line))) << key << " " << line;
}

// A user's profile may be values alone (as sysctl.conf is); the built-in ones give every
// setting's reason and source, and a file parsed by their rule must too.
TEST(ProfileParse, ReasonAndSourceAreOptionalInAUsersFileAndRequiredInTheBuiltInOnes) {
  const std::string bare = "[settings.\"vm.swappiness\"]\nvalue = 1\n";
  const auto user = parse_profile(bare, "mine.toml", kValidate);
  ASSERT_TRUE(user) << user.error().message();
  ASSERT_EQ(user->entries.size(), 1u);
  EXPECT_EQ(user->entries[0].reason, "");
  EXPECT_EQ(user->entries[0].source, "");
  const auto strict = parse_profile(bare, "<built-in>/x.toml", kValidate, true);
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.error().message().find("missing reason"), std::string::npos);
  const auto no_source =
      parse_profile(bare + "reason = \"r\"\n", "<built-in>/x.toml", kValidate, true);
  ASSERT_FALSE(no_source);
  EXPECT_NE(no_source.error().message().find("missing source"), std::string::npos);
  // Given, they are still checked.
  EXPECT_FALSE(parse_profile(bare + "reason = \" \"\n", "mine.toml", kValidate));
}

}  // namespace profile_parse_test
