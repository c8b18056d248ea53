// The live top's keys as a state machine (tui/top_keys.hpp), and its sparklines.
#include "tui/top_keys.hpp"

#include <signal.h>

#include <gtest/gtest.h>

#include "tui/screen.hpp"
#include "tui/sparkline.hpp"

namespace top_keys_test {

using namespace dltune::tui;

namespace {

TopUi listed(std::size_t n, std::size_t rows) {
  TopUi ui;
  std::vector<pid_t> pids;
  for (std::size_t i = 0; i < n; ++i) pids.push_back(static_cast<pid_t>(100 + i));
  sync_selection(ui, pids);
  ui.rows = rows;
  return ui;
}

void type(TopUi& ui, const std::string& text) {
  for (const char c : text) (void)handle_key(ui, c);
}

}  // namespace

TEST(TopKeys, HelpOpensOnHOrQuestionMarkAndAnyKeyClosesIt) {
  for (const int open : {'h', '?'}) {
    TopUi ui;
    EXPECT_EQ(handle_key(ui, open), TopAction::kRedraw);
    EXPECT_EQ(ui.mode, TopMode::kHelp);
    EXPECT_EQ(handle_key(ui, kKeyNone), TopAction::kNone);  // a timeout is no key
    EXPECT_EQ(ui.mode, TopMode::kHelp);
    EXPECT_EQ(handle_key(ui, 'q'), TopAction::kRedraw) << "q closes the help, not top";
    EXPECT_EQ(ui.mode, TopMode::kView);
  }
  const auto help = help_lines();
  const auto lists = [&help](const std::string& key) {
    for (const auto& l : help)
      if (l.find(key) != std::string::npos) return true;
    return false;
  };
  for (const char* key :
       {"h ?", "q ", "space", "Up Down", "PgUp PgDn", "Home End", "/ ", "k ", "F ", "c m p r i t"})
    EXPECT_TRUE(lists(key)) << key;
  for (const auto& l : help) EXPECT_LE(l.size(), 80u) << l;
}

TEST(TopKeys, ArrowsPagesHomeAndEndMoveTheSelectionWithinTheList) {
  auto ui = listed(50, 10);
  EXPECT_EQ(ui.selected, 0u);
  EXPECT_EQ(ui.selected_pid, 100);
  (void)handle_key(ui, kKeyUp);
  EXPECT_EQ(ui.selected, 0u);
  (void)handle_key(ui, kKeyDown);
  (void)handle_key(ui, kKeyDown);
  EXPECT_EQ(ui.selected, 2u);
  (void)handle_key(ui, kKeyPageDown);
  EXPECT_EQ(ui.selected, 12u);
  (void)handle_key(ui, kKeyPageUp);
  (void)handle_key(ui, kKeyPageUp);
  EXPECT_EQ(ui.selected, 0u);
  (void)handle_key(ui, kKeyEnd);
  EXPECT_EQ(ui.selected, 49u);
  (void)handle_key(ui, kKeyPageDown);
  EXPECT_EQ(ui.selected, 49u);
  (void)handle_key(ui, kKeyHome);
  EXPECT_EQ(ui.selected, 0u);
}

TEST(TopKeys, TheSelectionFollowsItsProcessAsTheListChanges) {
  auto ui = listed(5, 10);
  (void)handle_key(ui, kKeyDown);
  (void)handle_key(ui, kKeyDown);
  sync_selection(ui, {100, 101, 102, 103, 104});
  EXPECT_EQ(ui.selected_pid, 102);
  sync_selection(ui, {104, 102, 100});  // resorted: still 102
  EXPECT_EQ(ui.selected, 1u);
  sync_selection(ui, {104, 100});  // 102 gone: the row at its index
  EXPECT_EQ(ui.selected, 1u);
  EXPECT_EQ(ui.selected_pid, 100);
  sync_selection(ui, {});
  EXPECT_EQ(ui.selected, 0u);
  EXPECT_EQ(ui.selected_pid, 0);
}

TEST(TopKeys, SlashTypesAFilterEnterAppliesItEscClearsIt) {
  auto ui = listed(5, 10);
  (void)handle_key(ui, kKeyDown);
  EXPECT_EQ(handle_key(ui, '/'), TopAction::kRedraw);
  EXPECT_EQ(ui.mode, TopMode::kFilter);
  type(ui, "pythx");
  (void)handle_key(ui, kKeyBackspace);
  type(ui, "on q");  // q is text at the prompt, not quit
  EXPECT_EQ(status_line(ui, "keys"), "filter: python q_   Enter apply  Esc clear");
  EXPECT_EQ(ui.filter, "") << "applied only on Enter";
  (void)handle_key(ui, kKeyEnter);
  EXPECT_EQ(ui.mode, TopMode::kView);
  EXPECT_EQ(ui.filter, "python q");
  EXPECT_EQ(ui.selected, 0u) << "a new list starts at its top";
  (void)handle_key(ui, '/');
  EXPECT_EQ(ui.typing, "python q") << "the prompt starts from the filter in use";
  (void)handle_key(ui, kKeyEscape);
  EXPECT_EQ(ui.mode, TopMode::kView);
  EXPECT_EQ(ui.filter, "");
}

TEST(TopKeys, KAsksWhichSignalAndSendsOnlyOnYes) {
  auto ui = listed(3, 10);
  EXPECT_EQ(handle_key(ui, 'k'), TopAction::kRedraw);
  EXPECT_EQ(ui.mode, TopMode::kSignal);
  EXPECT_EQ(ui.typing, "TERM");
  EXPECT_EQ(status_line(ui, "keys").rfind("send SIGTERM to 100? y/n", 0), 0u);
  EXPECT_EQ(handle_key(ui, 'n'), TopAction::kRedraw);
  EXPECT_EQ(ui.mode, TopMode::kView);

  (void)handle_key(ui, 'k');
  for (int i = 0; i < 4; ++i) (void)handle_key(ui, kKeyBackspace);
  type(ui, "KILL");
  EXPECT_EQ(handle_key(ui, 'q'), TopAction::kNone) << "neither a name nor an answer";
  EXPECT_EQ(handle_key(ui, 'y'), TopAction::kSignal);
  EXPECT_EQ(ui.typing, "KILL");
  EXPECT_EQ(ui.mode, TopMode::kView);

  TopUi empty;
  EXPECT_EQ(handle_key(empty, 'k'), TopAction::kRedraw);
  EXPECT_EQ(empty.mode, TopMode::kView);
  EXPECT_EQ(empty.message, "no process selected");
}

TEST(TopKeys, SignalNames) {
  EXPECT_EQ(signal_number("TERM"), SIGTERM);
  EXPECT_EQ(signal_number("SIGKILL"), SIGKILL);
  EXPECT_EQ(signal_number("int"), SIGINT);
  EXPECT_EQ(signal_number("9"), 9);
  EXPECT_EQ(signal_number("0"), std::nullopt);
  EXPECT_EQ(signal_number("999"), std::nullopt);
  EXPECT_EQ(signal_number("NOPE"), std::nullopt);
  EXPECT_EQ(signal_number(""), std::nullopt);
}

TEST(TopKeys, FFollowsTheSelectedProcessAndFAgainReturns) {
  auto ui = listed(3, 10);
  (void)handle_key(ui, kKeyDown);
  sync_selection(ui, {100, 101, 102});
  (void)handle_key(ui, 'F');
  EXPECT_EQ(ui.follow, 101);
  EXPECT_NE(status_line(ui, "keys").find("following 101"), std::string::npos);
  (void)handle_key(ui, 'F');
  EXPECT_EQ(ui.follow, std::nullopt);
}

// A new sort shows the new order from its top unless the user moved: the selected pid is not
// chased down the list. K toggles the kernel threads.
TEST(TopKeys, ASortStartsAtTheTopUnlessTheUserMovedAndKHidesKernelThreads) {
  auto ui = listed(30, 10);
  ui.first = 4;
  sort_changed(ui);
  EXPECT_EQ(ui.selected, 0u);
  EXPECT_EQ(ui.first, 0u);
  sync_selection(ui, {105, 100, 101});
  EXPECT_EQ(ui.selected_pid, 105) << "the new order's first row";
  (void)handle_key(ui, kKeyDown);
  sync_selection(ui, {105, 100, 101});
  EXPECT_EQ(ui.selected_pid, 100);
  sort_changed(ui);
  sync_selection(ui, {101, 102, 100});
  EXPECT_EQ(ui.selected_pid, 100) << "moved: the selection keeps its process";
  EXPECT_EQ(ui.selected, 2u);
  EXPECT_FALSE(ui.hide_kernel_threads);
  EXPECT_EQ(handle_key(ui, 'K'), TopAction::kRedraw);
  EXPECT_TRUE(ui.hide_kernel_threads);
  EXPECT_EQ(handle_key(ui, 'K'), TopAction::kRedraw);
  EXPECT_FALSE(ui.hide_kernel_threads);
  bool in_help = false;
  for (const auto& line : help_lines()) in_help = in_help || line.starts_with("  K ");
  EXPECT_TRUE(in_help);
}

TEST(TopKeys, QuitsOnQOrASignalAndLeavesSortKeysToTheCaller) {
  TopUi ui;
  EXPECT_EQ(handle_key(ui, 'q'), TopAction::kQuit);
  EXPECT_EQ(handle_key(ui, kKeyQuit), TopAction::kQuit);
  EXPECT_EQ(handle_key(ui, 'm'), TopAction::kUnhandled);
  EXPECT_EQ(handle_key(ui, ' '), TopAction::kRedraw);
  EXPECT_TRUE(ui.paused);
  EXPECT_EQ(status_line(ui, "keys"), "PAUSED  keys");
}

TEST(TopSparkline, ScalesValuesToEightBlocksOrAscii) {
  const std::vector<std::optional<double>> v{0, 12.5, 25, 37.5, 50, 62.5, 75, 100, std::nullopt};
  EXPECT_EQ(sparkline(v, 100, 20, true), "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588 ");
  EXPECT_EQ(sparkline(v, 100, 20, false), "_.-=+*#% ");
  EXPECT_EQ(sparkline({}, 100, 20, true), "");
  EXPECT_EQ(sparkline({150, -3}, 100, 20, false), "%_") << "clamped";
}

TEST(TopSparkline, MoreValuesThanColumnsShowEachShareAtItsLargest) {
  std::vector<std::optional<double>> v(60, 0.0);
  v[59] = 100;
  const auto s = sparkline(v, 100, 10, false);
  EXPECT_EQ(s, "_________%");
}

TEST(TopSparkline, HistoryKeepsTheLastMinuteAndFitsTheWidth) {
  History h;
  for (int i = 0; i <= 120; ++i)
    h.add(std::int64_t{i} * 1'000'000'000, i % 100, 2.0, {50.0, std::nullopt}, {0, 3});
  EXPECT_EQ(h.cpu.size(), 61u);
  EXPECT_EQ(h.gpus.size(), 2u);
  EXPECT_EQ(h.gpus[1].size(), 61u);
  const auto lines = history_lines(h, 80, false);
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& l : lines) EXPECT_LE(l.size(), 80u) << l;
  EXPECT_EQ(lines[0].rfind("CPU  ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("PSI cpu"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("GPU0"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("GPU3"), std::string::npos) << lines[1];
  // UTF-8: more bytes, the same columns.
  for (const auto& l : history_lines(h, 80, true)) {
    std::size_t columns = 0;
    for (const char c : l) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(columns, 80u) << l;
  }
}

TEST(TopSparkline, AJobsPaceIsALineOfItsOwnScaledToItsPeak) {
  History h;
  // No job: no JOB line.
  h.add(0, 10, 1.0, {}, {});
  EXPECT_EQ(history_lines(h, 80, false).size(), 1u);
  History j;
  for (int i = 0; i < 10; ++i) {
    JobPoint p;
    p.cpu_pct = i < 5 ? 50.0 : 400.0;  // four CPUs' worth in the second half
    p.read_bytes_s = i == 9 ? std::optional<double>(12.0 * 1024 * 1024) : std::nullopt;
    j.add(std::int64_t{i} * 100'000'000, 10, 1.0, {}, {}, p);
  }
  const auto lines = history_lines(j, 80, false);
  ASSERT_EQ(lines.size(), 2u);
  const auto& job = lines[1];
  EXPECT_EQ(job.rfind("JOB  ", 0), 0u) << job;
  EXPECT_LE(job.size(), 80u) << job;
  // Scaled to the peak (400%), not to 100%: the first half is low, the second full.
  EXPECT_NE(job.find(".....%%%%%"), std::string::npos) << job;  // 50/400: one eighth
  EXPECT_NE(job.find("400%"), std::string::npos) << job;
  EXPECT_NE(job.find("read"), std::string::npos) << job;
  EXPECT_NE(job.find("12M/s"), std::string::npos) << job;
}

}  // namespace top_keys_test
