// `dltune report` through the binary: outputs and bad input (exit 2, nothing written).
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"
#include "unit/report/report_samples.hpp"

namespace report_cli_test {

namespace {

using dltune::testing::run;
using dltune::testing::TempDir;
using dltune::testing::write_recording;
using ::testing::HasSubstr;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(ReportCli, WritesHtmlAndJsonAndStdout) {
  TempDir dir;
  write_recording(dir.file("run.db"), 6);
  auto r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", dir.file("r.html")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(slurp(dir.file("r.html")), HasSubstr("<canvas id=\"chart-cpu\""));
  r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", "-", "--format", "json", "--from",
           "+2s", "--to", "-1s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["window"]["samples"], 3);  // seconds 2, 3 and 4 of 0..5
  EXPECT_FALSE(j["decimation"]["decimated"]);
  r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", "-", "--format", "json",
           "--max-points", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["decimation"]["decimated"]);
}

TEST(ReportCli, AMissingRecordingIsBadInputNamingIt) {
  TempDir dir;
  const auto r = run({DLTUNE_BINARY, "report", dir.file("nope.db"), "-o", dir.file("r.html")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(dir.file("nope.db")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.html")));
}

TEST(ReportCli, AFileThatIsNotARecordingIsBadInput) {
  TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "this is not a recording, just some text to read\n"
                                       << std::string(200, 'x');
  const auto r = run({DLTUNE_BINARY, "report", dir.file("notes.txt"), "-o", dir.file("r.html")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a dltune recording"));
  EXPECT_THAT(r.err, HasSubstr(dir.file("notes.txt")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.html")));
}

TEST(ReportCli, AWindowThatEndsBeforeItStartsIsBadInput) {
  TempDir dir;
  write_recording(dir.file("run.db"), 6);
  auto r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", dir.file("r.html"), "--from",
                "+4s", "--to", "+1s"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--from +4s is after --to +1s"));
  r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", dir.file("r.html"), "--from",
           "tomorrow"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--from tomorrow: expected a time"));
  r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", dir.file("r.html"), "--from", "+1h"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no sample between"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.html")));
}

TEST(ReportCli, AnExistingOutputIsKeptWithoutForce) {
  TempDir dir;
  write_recording(dir.file("run.db"), 4);
  std::ofstream(dir.file("r.html")) << "keep me";
  auto r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", dir.file("r.html")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--force"));
  EXPECT_EQ(slurp(dir.file("r.html")), "keep me");
  r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", dir.file("r.html"), "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(slurp(dir.file("r.html")), HasSubstr("<!DOCTYPE html>"));
}

TEST(ReportCli, AnOutputInAMissingDirectoryIsBadInput) {
  TempDir dir;
  write_recording(dir.file("run.db"), 3);
  const auto r = run({DLTUNE_BINARY, "report", dir.file("run.db"), "-o", dir.file("no/r.html")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no directory " + dir.file("no")));
}

TEST(ReportCli, BadOptionsAreBadInput) {
  TempDir dir;
  write_recording(dir.file("run.db"), 4);
  for (std::vector<std::string> extra :
       {std::vector<std::string>{"--format", "pdf"}, {"--max-points", "1"}}) {
    std::vector<std::string> argv{DLTUNE_BINARY, "report", dir.file("run.db"), "-o",
                                  dir.file("r.html")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << extra[0];
    EXPECT_THAT(r.err, HasSubstr(extra[0])) << extra[0];
  }
}

}  // namespace

}  // namespace report_cli_test
