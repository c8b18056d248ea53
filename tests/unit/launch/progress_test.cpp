// Reading progress rates from a job's output: lines as tqdm 4.64.1 (Debian 12's python3-tqdm)
// printed them, custom --rate-regex, lines without a rate, and the meter that splits a byte
// stream on '\r' and '\n'.
#include "launch/progress.hpp"

#include <gtest/gtest.h>

namespace dltune::launch::progress_test {
namespace {

const std::optional<RatePattern> kTqdm;

RatePattern pattern(const std::string& text) {
  auto p = RatePattern::compile(text);
  EXPECT_TRUE(p) << text;
  return *p;
}

// Printed by tqdm 4.64.1 (ascii bars, file=StringIO), one redraw each.
TEST(ParseRate, RealTqdmLines) {
  EXPECT_DOUBLE_EQ(*parse_rate(" 33%|###3      | 1/3 [00:01<00:02,  1.30s/it]", kTqdm), 1 / 1.30);
  EXPECT_DOUBLE_EQ(*parse_rate(" 33%|###3      | 1.00k/3.00k [00:00<00:00, 19.0Mit/s]", kTqdm),
                   19.0e6);
  EXPECT_DOUBLE_EQ(
      *parse_rate("train:  50%|#####     | 1/2 [00:00<00:00, 98.34img/s, loss=0.25]", kTqdm),
      98.34);
  EXPECT_DOUBLE_EQ(*parse_rate(" 20%|##        | 1.91M/9.54M [00:00<00:00, 194MB/s]", kTqdm),
                   194e6);
  EXPECT_DOUBLE_EQ(*parse_rate(" 50%|#####     | 1.00/2.00 [00:01<00:01, 1.20s/it]", kTqdm),
                   1 / 1.20);
  // Unicode bars (tqdm's default on a UTF-8 terminal).
  EXPECT_DOUBLE_EQ(*parse_rate(" 10%|\xe2\x96\x88         | 3/30 [00:00<00:00, 97.20it/s]", kTqdm),
                   97.20);
}

TEST(ParseRate, UnitsAndScales) {
  const auto at = [](std::string_view line) { return read_rate(line, kTqdm); };
  EXPECT_EQ(at("[00:00<00:00, 12.5it/s]")->unit, "it/s");
  EXPECT_EQ(at("[00:01<00:02,  3.20s/it]")->unit, "it/s");
  EXPECT_DOUBLE_EQ(at("[00:01<00:02,  3.20s/it]")->per_second, 1 / 3.2);
  EXPECT_DOUBLE_EQ(at("1.23kit/s")->per_second, 1230);
  EXPECT_EQ(at("1.23kit/s")->unit, "it/s");
  EXPECT_DOUBLE_EQ(at("2.00ks/it")->per_second, 1 / 2000.0);
  EXPECT_EQ(at("96.27samples/s]")->unit, "samples/s");
  EXPECT_DOUBLE_EQ(at("96.27samples/s]")->per_second, 96.27);
  EXPECT_DOUBLE_EQ(at("1.5s/batch")->per_second, 1 / 1.5);
  EXPECT_EQ(at("1.5s/batch")->unit, "batch/s");
  // The last rate on the line wins: the bar's own, after any in the description.
  EXPECT_DOUBLE_EQ(
      at("epoch 2 (prev 5.0it/s):  40%|####  | 4/10 [00:01<00:01, 6.5it/s]")->per_second, 6.5);
}

TEST(ParseRate, LinesWithoutARate) {
  for (const char* line : {"", "  0%|          | 0/3 [00:00<?, ?it/s]", "Epoch 1/10",
                           "loss=0.25 acc=0.9", "see https://example.org/s/x", "v1.2it/s",
                           "0.00/3.00k", "1.91M/9.54M [00:00<?, ?B/s]", "12 it/s", "0.00s/it"}) {
    EXPECT_FALSE(parse_rate(line, kTqdm)) << line;
  }
}

TEST(ParseRate, CustomRegexFirstGroup) {
  const std::optional<RatePattern> re(pattern(R"(throughput: ([0-9.]+) img/s)"));
  EXPECT_DOUBLE_EQ(*parse_rate("step 100 throughput: 1190.5 img/s loss 0.3", re), 1190.5);
  EXPECT_FALSE(parse_rate("step 100 loss 0.3", re));
  EXPECT_FALSE(parse_rate("throughput: 1.2.3 img/s", re));  // the group is not a number
  // A custom regex replaces tqdm's reading: tqdm's rate alone is not read.
  EXPECT_FALSE(parse_rate("[00:00<00:00, 12.5it/s]", re));
  EXPECT_EQ(read_rate("throughput: 3 img/s", re)->unit, "");
  // Without a group, the whole match.
  const std::optional<RatePattern> whole(pattern(R"([0-9]+(?= samples))"));
  EXPECT_DOUBLE_EQ(*parse_rate("42 samples", whole), 42);
}

TEST(ProgressMeter, SplitsOnCarriageReturnAndNewlineAcrossChunks) {
  ProgressMeter m;
  const std::string out =
      "  0%|          | 0/4 [00:00<?, ?it/s]\r 25%|##5       | 1/4 [00:00<00:00,  1.00it/s]"
      "\r 50%|#####     | 2/4 [00:00<00:00,  2.00it/s]\r 75%|#######5  | 3/4 [00:00<00:00,  "
      "3.00it/s]\r100%|##########| 4/4 [00:00<00:00,  4.00it/s]\n";
  // One byte at a time: no reading depends on how the pipe chunks the output.
  for (const char c : out) m.feed(std::string_view(&c, 1));
  m.finish();
  const auto p = m.progress();
  EXPECT_EQ(p.samples, 4);
  EXPECT_EQ(p.unit, "it/s");
  EXPECT_DOUBLE_EQ(*p.last_rate, 4.0);
  EXPECT_DOUBLE_EQ(*p.median_rate, 2.5);  // 4 readings: none is warm-up (10 % of 4 is 0)
}

TEST(ProgressMeter, MedianSkipsTheFirstTenPercent) {
  ProgressMeter m;
  // 20 readings: the first 2 (warm-up) are tiny, the rest 10..27.
  for (int i = 0; i < 20; ++i) {
    const double rate = i < 2 ? 0.5 : 10 + (i - 2);
    m.feed(std::string("\r") + std::to_string(i) + "/20 [00:00<00:00, " + std::to_string(rate) +
           "it/s]");
  }
  m.finish();  // the last line has no terminator
  const auto p = m.progress();
  EXPECT_EQ(p.samples, 20);
  EXPECT_DOUBLE_EQ(*p.last_rate, 27);
  EXPECT_DOUBLE_EQ(*p.median_rate, 18.5);  // median of 10..27
}

TEST(ProgressMeter, UnitSeenMostOftenWins) {
  ProgressMeter m;
  m.feed("download: 100MB/s\rdownload: 120MB/s\n");
  for (int i = 0; i < 3; ++i) m.feed("train [00:01<00:02,  2.00s/it]\r");
  const auto p = m.progress();
  EXPECT_EQ(p.unit, "it/s");
  EXPECT_EQ(p.samples, 3);
  EXPECT_DOUBLE_EQ(*p.median_rate, 0.5);
}

TEST(ProgressMeter, ChannelsKeepTheirPartialLinesApart) {
  ProgressMeter m;
  m.feed("[00:00<00:00, 1", 0);
  m.feed("log line from stdout\n", 1);
  m.feed("2.5it/s]\r", 0);
  const auto p = m.progress();
  EXPECT_EQ(p.samples, 1);
  EXPECT_DOUBLE_EQ(*p.last_rate, 12.5);
}

TEST(ProgressMeter, NoProgressLines) {
  ProgressMeter m;
  m.feed("hello\nworld\n");
  m.finish();
  const auto p = m.progress();
  EXPECT_EQ(p.samples, 0);
  EXPECT_FALSE(p.last_rate);
  EXPECT_FALSE(p.median_rate);
  EXPECT_EQ(p.unit, "");
}

TEST(ProgressMeter, AnEndlessLineKeepsItsTail) {
  ProgressMeter m;
  m.feed(std::string(200 * 1024, 'x'));
  m.feed(" 7.5it/s");
  m.finish();
  EXPECT_DOUBLE_EQ(*m.progress().last_rate, 7.5);
}

TEST(RateSeries, BoundedAndEvenlySpaced) {
  RateSeries s;
  const int n = static_cast<int>(RateSeries::kCapacity) * 4 + 3;
  for (int i = 0; i < n; ++i) s.add(i);
  EXPECT_EQ(s.count(), n);
  EXPECT_DOUBLE_EQ(s.last(), n - 1);
  // The median of the readings after the first 10 %, from an evenly spaced subset.
  const double exact = (0.1 * n + (n - 1)) / 2;
  EXPECT_NEAR(s.median_after_warmup(), exact, 0.01 * n);
}

}  // namespace
}  // namespace dltune::launch::progress_test
