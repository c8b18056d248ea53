#include "core/text.hpp"

#include <gtest/gtest.h>

namespace text_test {

using namespace dltune::text;

TEST(Text, TrimSplitFields) {
  EXPECT_EQ(trim("  a b \n"), "a b");
  EXPECT_EQ(trim(" \t\n"), "");
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_EQ(fields(" a\t b  c "), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(lines("a\nb\n"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(lines("a\n\nb"), (std::vector<std::string_view>{"a", "", "b"}));
}

// A path is within a directory component by component: "/a/bc" is not within "/a/b".
TEST(Text, PathWithinComparesWholeComponents) {
  EXPECT_TRUE(path_within("/a/b", "/a/b"));
  EXPECT_TRUE(path_within("/a/b/c", "/a/b"));
  EXPECT_FALSE(path_within("/a/bc", "/a/b"));
  EXPECT_FALSE(path_within("/a", "/a/b"));
  EXPECT_FALSE(path_within("/slurm/uid_0/job_51", "/slurm/uid_0/job_5"));
}

TEST(Text, EditDistanceCountsASwapOfNeighboursAsOneEdit) {
  using dltune::text::edit_distance;
  using dltune::text::nearest_word;
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("plna", "plan"), 1u);
  EXPECT_EQ(edit_distance("vm.swapiness", "vm.swappiness"), 1u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);  // OSA: a swapped pair is not edited again
  EXPECT_EQ(nearest_word("traning", {"training", "distributed", "defaults"}), "training");
  EXPECT_EQ(nearest_word("xyz", {"training"}), "");
  EXPECT_EQ(nearest_word("training", {"training"}), "") << "the word itself is no suggestion";
}

TEST(Text, PrintableTurnsEachControlCharacterIntoAQuestionMark) {
  using dltune::text::is_printable_of;
  using dltune::text::printable;
  EXPECT_EQ(printable("python3"), "python3");
  EXPECT_EQ(printable("a\nb\tc\x1b[2Jd\x7f"), "a?b?c?[2Jd?");
  // C1 as UTF-8 (U+009B, a CSI) is one '?'; other UTF-8 stays.
  EXPECT_EQ(printable("x\xc2\x9b"
                      "31m\xc3\xa9\xd1\x84"),
            "x?31m\xc3\xa9\xd1\x84");
  EXPECT_EQ(printable("\xc2"), "\xc2");  // a cut sequence is not a control character
  for (const std::string raw : {"", "python3", "a\nb", "\x1b\x1b", "x\xc2\x85y", "\xc2"}) {
    EXPECT_TRUE(is_printable_of(printable(raw), raw)) << raw;
    EXPECT_FALSE(is_printable_of(printable(raw) + "z", raw)) << raw;
    EXPECT_FALSE(is_printable_of("z" + printable(raw), raw)) << raw;
  }
  EXPECT_FALSE(is_printable_of("a?b", "a\nc"));
  EXPECT_FALSE(is_printable_of("a\nb", "a\nb"));  // the raw text is not its printable form
}

TEST(Text, NormaliseSpaces) {
  EXPECT_EQ(normalise_spaces("4096\t16384\t4194304\n"), "4096 16384 4194304");
  EXPECT_EQ(normalise_spaces("  a   b "), "a b");
  EXPECT_EQ(normalise_spaces(" \t\n"), "");
}

TEST(Text, Numbers) {
  EXPECT_EQ(to_uint("42"), 42u);
  EXPECT_EQ(to_uint(" 42\n"), 42u);
  EXPECT_FALSE(to_uint("42x"));
  EXPECT_FALSE(to_uint(""));
  EXPECT_FALSE(to_uint("-1"));
  EXPECT_EQ(to_uint("0x10de", 0), 0x10deu);
  EXPECT_EQ(to_uint("10", 0), 10u);
  EXPECT_EQ(to_int("-1"), -1);
  EXPECT_FALSE(to_int("99999999999999999999"));
  EXPECT_EQ(to_double("629.25"), 629.25);
  EXPECT_FALSE(to_double("abc"));
}

TEST(Text, Unquote) {
  EXPECT_EQ(unquote("\"Debian GNU/Linux 12 (bookworm)\""), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(unquote("'x'"), "x");
  EXPECT_EQ(unquote("plain"), "plain");
  EXPECT_EQ(unquote("\"unbalanced"), "\"unbalanced");
}

TEST(Text, HumanBytes) {
  EXPECT_EQ(human_bytes(17), "17 B");
  EXPECT_EQ(human_bytes(4096), "4 KiB");
  EXPECT_EQ(human_bytes(64ull << 20), "64 MiB");
  EXPECT_EQ(human_bytes(1536ull << 20), "1.5 GiB");
  EXPECT_EQ(human_bytes(1ull << 40), "1 TiB");
}

TEST(Text, CpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("3,1,1"), (std::vector<int>{1, 3}));
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  EXPECT_FALSE(parse_cpu_list("0-99999999"));
  EXPECT_FALSE(parse_cpu_list("0-18446744073709551615"));
  // A GPU list's ids are few: one beyond the cap makes the list void.
  EXPECT_EQ(parse_cpu_list("0-3", kMaxGpuId), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(parse_cpu_list("0,1024", kMaxGpuId));
  // The same range again and again (another user's 128 KiB SLURM_JOB_GPUS) costs what it does
  // once: 6,000 copies of a million ids would be 24 GiB expanded one by one.
  std::string repeated;
  for (int i = 0; i < 6000; ++i) repeated += "0-1048575,";
  repeated += "7";
  const auto big = parse_cpu_list(repeated);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->size(), 1u << 20);
  std::string gpus;
  for (int i = 0; i < 20000; ++i) gpus += "0-1023,";
  gpus += "0";
  const auto many = parse_cpu_list(gpus, kMaxGpuId);
  ASSERT_TRUE(many);
  EXPECT_EQ(many->size(), 1024u);
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
}

TEST(Text, CpuMasks) {
  EXPECT_EQ(parse_cpu_mask("f0"), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(parse_cpu_mask("00000001,00000003"), (std::vector<int>{0, 1, 32}));
  EXPECT_EQ(parse_cpu_mask("0"), std::vector<int>{});
  EXPECT_FALSE(parse_cpu_mask("xyz"));
  EXPECT_FALSE(parse_cpu_mask(""));
}

TEST(Text, Durations) {
  EXPECT_EQ(parse_duration_ns("100ms"), 100'000'000);
  EXPECT_EQ(parse_duration_ns("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration_ns("2"), 2'000'000'000);
  EXPECT_EQ(parse_duration_ns("2m"), 120'000'000'000);
  EXPECT_EQ(parse_duration_ns("1h"), 3'600'000'000'000);
  EXPECT_EQ(parse_duration_ns("250us"), 250'000);
  EXPECT_FALSE(parse_duration_ns(""));
  EXPECT_FALSE(parse_duration_ns("ms"));
  EXPECT_FALSE(parse_duration_ns("-1s"));
  EXPECT_FALSE(parse_duration_ns("1 fortnight"));
  EXPECT_FALSE(parse_duration_ns("1.2.3s"));
  EXPECT_FALSE(parse_duration_ns("99999999999h"));
}

TEST(Text, DurationsOfOneGrammar) {
  constexpr std::int64_t kS = 1'000'000'000;
  EXPECT_EQ(parse_duration_ns("1h30m"), 5400 * kS);
  EXPECT_EQ(parse_duration_ns("1d"), 86400 * kS);
  EXPECT_EQ(parse_duration_ns("1w"), 7 * 86400 * kS);
  EXPECT_EQ(parse_duration_ns("2m30.5s"), 150 * kS + kS / 2);
  EXPECT_EQ(parse_duration_ns("15min"), 900 * kS);
  EXPECT_FALSE(parse_duration_ns("30m1h"));  // largest unit first
  EXPECT_FALSE(parse_duration_ns("1s1s"));   // each unit once
  EXPECT_FALSE(parse_duration_ns("1h 30m"));
  EXPECT_FALSE(parse_duration_ns("1y"));
  for (const std::int64_t ns : {std::int64_t{250'000'000}, 5 * kS, 5400 * kS, 86400 * kS,
                                kS + kS / 2, std::int64_t{1'500}, 7 * 86400 * kS + 3600 * kS})
    EXPECT_EQ(parse_duration_ns(format_duration_ns(ns)), ns) << format_duration_ns(ns);
  EXPECT_EQ(format_duration_ns(5400 * kS), "1h30m");
  EXPECT_EQ(format_duration_ns(250'000'000), "250ms");
}

TEST(Text, ValuesWithinARangeSayWhatIsWrong) {
  EXPECT_EQ(duration_within("5ms", 10'000'000, 3'600'000'000'000).error().message(),
            "too short (at least 10ms)");
  EXPECT_EQ(duration_within("2h", 0, 3'600'000'000'000).error().message(), "too long (at most 1h)");
  EXPECT_EQ(*duration_within("90s", 0, 3'600'000'000'000), 90'000'000'000);
  EXPECT_EQ(integer_within("-5", 2, 100).error().message(), "too small (at least 2)");
  EXPECT_EQ(integer_within("1e3", 1, 256).error().message(),
            "expected a whole number from 1 to 256");
  EXPECT_EQ(integer_within("99999999999999999999", 1, 256).error().message(),
            "too large (at most 256)");
  EXPECT_EQ(*integer_within("256", 1, 256), 256);
  EXPECT_EQ(number_within("nan", 50, 99.9).error().message(), "expected a number from 50 to 99.9");
  EXPECT_EQ(*number_within("97.5", 50, 99.9), 97.5);
}

}  // namespace text_test
