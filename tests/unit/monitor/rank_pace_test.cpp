// The straggler rank over a live view's last seconds (monitor/rank_pace.hpp RankWatch) and its
// mark in top's view: named only when one rank computes while the others sleep, over a window
// long enough to say so; gone when the ranks keep pace again or end.
#include "monitor/rank_pace.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "monitor/top_view.hpp"

namespace rank_pace_test {

using namespace dltune::monitor;
using ::testing::HasSubstr;

namespace {

ProcessModel proc(pid_t pid, pid_t ppid, Role role, std::string cmd) {
  ProcessModel p;
  p.pid = pid;
  p.ppid = ppid;
  p.role = role;
  p.state = 'S';
  p.has_rates = true;
  p.comm = "python3";
  p.cmdline = std::move(cmd);
  return p;
}

struct RankState {
  double on_cpu;
  char state;
  double run_queue = 1;
};

// A launcher (dltune run --nproc 2) with two ranks and a worker of rank 1, at second `t`.
Model ranks_model(int t, RankState r0, RankState r1, bool with_ranks = true) {
  Model m;
  m.has_rates = true;
  m.interval_s = 1;
  m.wall_ns = (1'700'000'000LL + t) * 1'000'000'000LL;
  m.processes.push_back(proc(100, 1, Role::kMain, "dltune run --nproc 2 -- python3 ddp_train.py"));
  auto a = proc(101, 100, Role::kRank, "python3 ddp_train.py");
  a.on_cpu_pct = r0.on_cpu;
  a.run_queue_pct = r0.run_queue;
  a.state = r0.state;
  auto b = proc(102, 100, Role::kRank, "python3 ddp_train.py");
  b.on_cpu_pct = r1.on_cpu;
  b.run_queue_pct = r1.run_queue;
  b.state = r1.state;
  if (with_ranks) {
    a.rank = 0;
    b.rank = 1;
  }
  m.processes.push_back(a);
  m.processes.push_back(b);
  m.processes.push_back(proc(103, 102, Role::kWorker, "python3 ddp_train.py"));
  return m;
}

}  // namespace

TEST(RankPace, FarAboveNeedsEveryThreshold) {
  EXPECT_EQ(far_above({2.5, 99})->index, 1u);
  EXPECT_DOUBLE_EQ(far_above({2.5, 99, 4})->others_median, 3.25);
  EXPECT_FALSE(far_above({77, 79}));      // equal ranks
  EXPECT_FALSE(far_above({10, 35}));      // below 40%
  EXPECT_FALSE(far_above({50, 90}));      // not twice the others
  EXPECT_FALSE(far_above({30, 60, 31}));  // twice, but not 25 points above
  EXPECT_FALSE(far_above({99}));
  EXPECT_DOUBLE_EQ(median({}), 0);
  // Waiting for a CPU: a lower bar (20%, twice, 15 points).
  EXPECT_EQ(far_above_in_wait({1.5, 24})->index, 1u);
  EXPECT_FALSE(far_above_in_wait({1.5, 15}));
  EXPECT_FALSE(far_above_in_wait({12, 26}));
}

TEST(RankPace, TheBusyRankWhileTheOtherSleepsIsMarkedAfterThreeSeconds) {
  RankWatch watch;
  // Rank 1 computes, rank 0 waits in the all-reduce (asleep most of the time).
  for (int t = 0; t < 2; ++t) watch.add(ranks_model(t, {3, 'S'}, {99, 'R'}));
  EXPECT_FALSE(watch.straggler()) << "two seconds are too few to say";
  watch.add(ranks_model(2, {2, 'R'}, {98, 'R'}));
  watch.add(ranks_model(3, {3, 'S'}, {99, 'R'}));
  const auto s = watch.straggler();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 102);
  EXPECT_EQ(s->rank, 1);
  EXPECT_NEAR(s->on_cpu_pct, 98.75, 0.01);
  EXPECT_NEAR(s->others_asleep, 0.75, 0.01);
  EXPECT_THAT(s->text, HasSubstr("rank 1 (pid 102) holds the job back"));

  // In top's view: its row marked, the evidence above the processes.
  TopOptions o;
  o.width = 140;
  o.height = 0;
  o.straggler = s;
  const auto lines = top_view(ranks_model(4, {3, 'S'}, {99, 'R'}), o);
  std::string row, note, all;
  for (const auto& l : lines) {
    all += l.text + "\n";
    if (l.text.find("STRAGGLER") != std::string::npos) {
      row = l.text;
      EXPECT_EQ(l.style, Style::kWarn);
    }
    if (l.text.find("! straggler:") == 0) note = l.text;
  }
  EXPECT_THAT(row, HasSubstr("STRAGGLER python3 ddp_train.py")) << all;
  EXPECT_THAT(row, HasSubstr("    102 rank1 ")) << all;
  EXPECT_THAT(note, HasSubstr("rank 1 (pid 102)"));
  bool rank0 = false;
  for (const auto& l : lines)
    if (l.text.find(" rank0 ") != std::string::npos) {
      rank0 = true;
      EXPECT_EQ(l.style, Style::kMain);
      EXPECT_EQ(l.text.find("STRAGGLER"), std::string::npos);
    }
  EXPECT_TRUE(rank0);

  // The ranks keep pace again: after ten seconds of equal work the mark is gone.
  for (int t = 5; t < 16; ++t) watch.add(ranks_model(t, {78, 'R'}, {76, 'S'}));
  EXPECT_FALSE(watch.straggler());
}

TEST(RankPace, NoMarkWhenTheOthersDoNotWaitOrTheRanksAreUnmeasuredOrGone) {
  RankWatch busy;  // one busier, the other not asleep: not a synchronous wait
  for (int t = 0; t < 5; ++t) busy.add(ranks_model(t, {30, 'R'}, {95, 'R'}));
  EXPECT_FALSE(busy.straggler());

  RankWatch unmeasured;  // no schedstat for one rank
  for (int t = 0; t < 5; ++t) {
    auto m = ranks_model(t, {3, 'S'}, {99, 'R'});
    m.processes[1].on_cpu_pct.reset();
    unmeasured.add(m);
  }
  EXPECT_FALSE(unmeasured.straggler());

  RankWatch ended;  // rank 0 ended: one rank left, nothing to compare
  for (int t = 0; t < 5; ++t) ended.add(ranks_model(t, {3, 'S'}, {99, 'R'}));
  ASSERT_TRUE(ended.straggler());
  auto m = ranks_model(5, {3, 'S'}, {99, 'R'});
  m.processes.erase(m.processes.begin() + 1);
  ended.add(m);
  EXPECT_FALSE(ended.straggler());

  RankWatch anonymous;  // no RANK readable: named by pid
  for (int t = 0; t < 5; ++t) anonymous.add(ranks_model(t, {3, 'S'}, {99, 'R'}, false));
  ASSERT_TRUE(anonymous.straggler());
  EXPECT_THAT(anonymous.straggler()->text, HasSubstr("pid 102 holds the job back"));
}

// A rank whose CPU an outside load shares computes as much as the others, stretched: its time on
// a CPU is like theirs, its wait for one is not (measured: 36% on a CPU and 44% waiting against
// 38% and 2%, the other asleep 57%, with two busy loops pinned to its CPU).
TEST(RankPace, ARankWaitingForItsSharedCpuIsMarkedByItsWait) {
  RankWatch watch;
  for (int t = 0; t < 5; ++t) watch.add(ranks_model(t, {38, 'S', 2}, {36, 'R', 44}));
  const auto s = watch.straggler();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank, 1);
  EXPECT_TRUE(s->by_wait);
  EXPECT_NEAR(s->run_queue_pct, 44, 0.01);
  EXPECT_THAT(s->text, HasSubstr("waits for a CPU 44% of the last"));
  // Waiting alike (both on one CPU, say): none.
  RankWatch alike;
  for (int t = 0; t < 5; ++t) alike.add(ranks_model(t, {38, 'S', 40}, {36, 'R', 44}));
  EXPECT_FALSE(alike.straggler());
  // Starved (waiting for a CPU longer than it runs) while the other spins in the collective
  // instead of sleeping (gloo): still the straggler (CI's run: 54% waiting, 38% running).
  alike.clear();
  for (int t = 0; t < 5; ++t) alike.add(ranks_model(t, {54, 'R', 4}, {38, 'R', 54}));
  ASSERT_TRUE(alike.straggler());
  EXPECT_EQ(alike.straggler()->rank, 1);
  // Waiting less than it runs, and the other does not wait for it (not asleep): none.
  alike.clear();
  for (int t = 0; t < 5; ++t) alike.add(ranks_model(t, {38, 'R', 2}, {60, 'R', 30}));
  EXPECT_FALSE(alike.straggler());
}

// In a job's group (dltune run --nproc's, a Slurm step's) the main process is one of the ranks.
TEST(RankPace, InAGroupTheMainProcessIsARank) {
  Model m = ranks_model(0, {3, 'S'}, {99, 'R'});
  m.processes.erase(m.processes.begin());  // the launcher is outside the group
  m.processes[0].role = Role::kMain;
  const auto ranks = ranks_in(m);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0]->pid, 101);
  EXPECT_EQ(ranks[1]->pid, 102);
  // Under a launcher it is not.
  EXPECT_EQ(ranks_in(ranks_model(0, {3, 'S'}, {99, 'R'})).size(), 2u);
}

}  // namespace rank_pace_test
