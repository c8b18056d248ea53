#include <gtest/gtest.h>

#include "settings/profile.hpp"

namespace expected_test {

using dltune::settings::Expected;
using dltune::settings::parse_expected;

namespace {

Expected exact(std::string v) {
  return Expected{Expected::Kind::kExact, {std::move(v)}};
}
Expected at_least(std::string v) {
  return Expected{Expected::Kind::kAtLeast, {std::move(v)}};
}

}  // namespace

TEST(Expected, ParsesTheTextForms) {
  const auto ten = parse_expected("10");
  ASSERT_TRUE(ten.has_value());
  EXPECT_EQ(ten->kind, Expected::Kind::kExact);
  EXPECT_EQ(ten->values, std::vector<std::string>{"10"});

  for (const char* s : {">= 16777216", ">=16777216", "  >=   16777216 "}) {
    const auto min = parse_expected(s);
    ASSERT_TRUE(min.has_value()) << s;
    EXPECT_EQ(min->kind, Expected::Kind::kAtLeast) << s;
    EXPECT_EQ(min->values, std::vector<std::string>{"16777216"}) << s;
    EXPECT_EQ(min->text(), ">= 16777216") << s;
  }
  const auto text = parse_expected(" defer+madvise ");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->values.front(), "defer+madvise");
}

TEST(Expected, RefusesBadMinimumsAndEmptyValues) {
  for (const char* s : {">= abc", ">=", ">= -1", ">= 1.5", ">= 16M", ">= +5",
                        ">= 99999999999999999999", "", "   "}) {
    const auto r = parse_expected(s);
    EXPECT_FALSE(r.has_value()) << s;
  }
  EXPECT_NE(parse_expected(">= abc").error().message().find(">= abc"), std::string::npos);
}

TEST(Expected, ExactComparesNormalisedTextAndNumbers) {
  const auto ten = exact("10");
  EXPECT_TRUE(ten.matches("10"));
  EXPECT_TRUE(ten.matches("10\n"));
  EXPECT_TRUE(ten.matches("  10\t"));
  EXPECT_TRUE(ten.matches("010"));  // numerically equal
  EXPECT_FALSE(ten.matches("11"));
  EXPECT_FALSE(ten.matches("100"));
  EXPECT_FALSE(ten.matches(""));
  EXPECT_FALSE(ten.matches("ten"));

  const auto big = exact("18446744073709551615");  // beyond int64: compared as unsigned
  EXPECT_TRUE(big.matches("18446744073709551615\n"));
  EXPECT_FALSE(big.matches("18446744073709551614"));
  EXPECT_TRUE(exact("-1").matches(" -1 "));

  // Multi-field values (tcp_rmem) with the kernel's tabs and runs of spaces.
  const auto rmem = exact("4096 131072 6291456");
  EXPECT_TRUE(rmem.matches("4096\t131072\t6291456\n"));
  EXPECT_TRUE(rmem.matches("4096   131072 6291456"));
  EXPECT_FALSE(rmem.matches("4096 131072"));
  EXPECT_FALSE(rmem.matches("4096 131072 6291456 1"));
  EXPECT_FALSE(rmem.matches("4096131072 6291456"));

  const auto word = exact("madvise");
  EXPECT_TRUE(word.matches("madvise\n"));
  EXPECT_FALSE(word.matches("Madvise"));  // text is compared exactly
  EXPECT_FALSE(word.matches("madvise never"));
  EXPECT_TRUE(exact("true").matches("true"));
  EXPECT_FALSE(exact("true").matches("false"));
}

TEST(Expected, OneOfMatchesAnyMember) {
  const Expected thp{Expected::Kind::kOneOf, {"always", "madvise"}};
  EXPECT_TRUE(thp.matches("always"));
  EXPECT_TRUE(thp.matches("madvise\n"));
  EXPECT_FALSE(thp.matches("never"));
  EXPECT_FALSE(thp.matches(""));
  EXPECT_EQ(thp.text(), "one of always, madvise");

  const Expected numbers{Expected::Kind::kOneOf, {"0", "2"}};
  EXPECT_TRUE(numbers.matches("2\n"));
  EXPECT_FALSE(numbers.matches("1"));
}

TEST(Expected, AtLeastComparesUnsignedIntegers) {
  const auto min = at_least("16777216");
  EXPECT_TRUE(min.matches("16777216"));
  EXPECT_TRUE(min.matches("33554432\n"));
  EXPECT_TRUE(min.matches("18446744073709551615"));
  EXPECT_FALSE(min.matches("16777215"));
  EXPECT_FALSE(min.matches("0"));
  // "unlimited" (/proc/PID/limits, ulimit) and "infinity" (limits.conf) meet any minimum.
  EXPECT_TRUE(min.matches("unlimited"));
  EXPECT_TRUE(min.matches("unlimited\n"));
  EXPECT_TRUE(min.matches("infinity"));
  // A non-number never does.
  EXPECT_FALSE(min.matches(""));
  EXPECT_FALSE(min.matches("lots"));
  EXPECT_FALSE(min.matches("-1"));
  EXPECT_FALSE(min.matches("4096 131072 33554432"));  // a whole multi-field value
  EXPECT_FALSE(min.matches("16M"));
}

TEST(Expected, TextSaysWhatIsExpected) {
  EXPECT_EQ(exact("10").text(), "10");
  EXPECT_EQ(at_least("16777216").text(), ">= 16777216");
  EXPECT_EQ((Expected{Expected::Kind::kOneOf, {"pt", "off"}}).text(), "one of pt, off");
}

}  // namespace expected_test
