// A Slurm job's totals kept by its watcher (intervals of its group added up, across a group made
// again between steps) and the Epilog's report from them and the kernel log: the job's own OOM
// kills with their victims, the node's hardware events, never another job's kills.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "slurm/epilog.hpp"
#include "slurm/job_watch.hpp"
#include "support/temp_tree.hpp"

namespace job_report_test {

using dltune::diagnose::LoggedEvent;
using dltune::diagnose::Severity;
using dltune::monitor::Model;
using dltune::monitor::ProcessModel;
using dltune::slurm::JobRecord;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// One interval of a job group: `cpus_used` CPUs over `seconds`, memory now and its peak.
Model interval(double seconds, double cpus_used, std::uint64_t memory, std::uint64_t peak,
               std::int64_t wall_s) {
  Model m;
  m.wall_ns = wall_s * 1'000'000'000;
  m.interval_s = seconds;
  m.has_rates = seconds > 0;
  m.cgroup.emplace();
  m.cgroup->path = "/slurm_n1/uid_1000/job_42";
  m.cgroup->cpu_pct = cpus_used * 100;
  m.cgroup->memory_bytes = memory;
  m.cgroup->memory_peak_bytes = peak;
  m.cgroup->memory_limit_bytes = 4ull << 30;
  ProcessModel busy;
  busy.pid = 100;
  busy.comm = "python3";
  busy.threads = 1;
  busy.has_rates = m.has_rates;
  busy.cpu_pct = cpus_used * 100 * 0.9;
  ProcessModel idle = busy;
  idle.pid = 101;
  idle.comm = "pt_data_worker";
  idle.cpu_pct = cpus_used * 100 * 0.1;
  m.processes = {busy, idle};
  return m;
}

LoggedEvent oom(const std::string& task, const std::string& pid, const std::string& memcg) {
  LoggedEvent e;
  e.wall_ns = 1'000'000'000'000;
  e.source = "/dev/kmsg";
  e.event.kind = "oom_kill";
  e.event.severity = Severity::kCritical;
  e.event.explanation = "The kernel killed process " + pid;
  e.event.action = "Raise the job's memory limit";
  e.event.fields = {{"pid", pid},
                    {"task", task},
                    {"anon_rss", "101632kB"},
                    {"cgroup", memcg},
                    {"oom_memcg", memcg.substr(0, memcg.find("/step"))}};
  return e;
}

LoggedEvent node_event(const std::string& kind) {
  LoggedEvent e;
  e.wall_ns = 1'000'000'000'000;
  e.event.kind = kind;
  e.event.severity = Severity::kCritical;
  e.event.explanation = kind + " happened";
  e.event.action = "look at the " + kind;
  return e;
}

}  // namespace

TEST(SlurmJobRecord, IntervalsAddUpAndThePeakIsTheHighestSeen) {
  JobRecord r;
  r.job_id = "42";
  r.observe(interval(0, 0, 10u << 20, 10u << 20, 100), 0, 4, false);  // the first sample
  r.observe(interval(2, 1.0, 300u << 20, 350u << 20, 102), 0, 4, false);
  r.observe(interval(2, 3.0, 200u << 20, 350u << 20, 104), 0, 4, false);
  EXPECT_EQ(r.samples, 3u);
  EXPECT_DOUBLE_EQ(r.seconds, 4);
  EXPECT_DOUBLE_EQ(r.cpu_seconds, 8);
  EXPECT_EQ(*r.memory_peak_bytes, 350u << 20);
  EXPECT_EQ(r.first_seen_ns, 100'000'000'000);
  EXPECT_EQ(r.last_seen_ns, 104'000'000'000);
  const auto u = r.use();
  EXPECT_DOUBLE_EQ(u.cpus_used, 2);
  EXPECT_EQ(u.cpus, 4);
  EXPECT_EQ(u.busiest_command, "python3");
  EXPECT_NEAR(u.busiest_cpus, 1.8, 1e-9);
}

TEST(SlurmJobRecord, AGroupMadeAgainKeepsTheTotalsAndItsOomKillsAddToTheOldOnes) {
  JobRecord r;
  r.observe(interval(1, 1, 1u << 20, 500u << 20, 1), 2, 2, false);
  // Between two steps of an allocation Slurm removed the group and made it again: its counters
  // and its peak start over.
  r.observe(interval(0, 0, 1u << 20, 1u << 20, 5), 0, 2, true);
  r.observe(interval(1, 1, 1u << 20, 20u << 20, 6), 1, 2, false);
  EXPECT_EQ(r.oom_kills, 3u);
  EXPECT_EQ(*r.memory_peak_bytes, 500u << 20);
  EXPECT_DOUBLE_EQ(r.cpu_seconds, 2);
}

TEST(SlurmJobRecord, KeepsOnlyTheBusiestProcessesOfAJobThatStartsMany) {
  JobRecord r;
  for (int i = 0; i < 200; ++i) {
    Model m = interval(1, 0.01 * (i + 1), 0, 0, i);
    m.processes.resize(1);
    m.processes[0].pid = 1000 + i;
    r.observe(m, 0, 1, false);
  }
  EXPECT_EQ(r.processes.size(), JobRecord::kKeptProcesses);
  EXPECT_EQ(r.busiest()->first, 1199);
}

TEST(SlurmJobRecord, JsonRoundTripsAndABadDocumentIsNamed) {
  JobRecord r;
  r.job_id = "42";
  r.watcher_pid = 77;
  r.started_ns = 5;
  r.observe(interval(0, 0, 1u << 20, 2u << 20, 1), 1, 2, false);
  r.observe(interval(2, 0.5, 1u << 20, 3u << 20, 3), 1, 2, false);
  r.ended = true;
  auto back = dltune::slurm::record_from_json(to_json(r), "job-42.json");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(to_json(*back), to_json(r));
  auto bad = to_json(r);
  bad["seconds"] = "two";
  auto refused = dltune::slurm::record_from_json(bad, "job-42.json");
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("job-42.json"));
  EXPECT_FALSE(dltune::slurm::record_from_json({{"schema", "other/1"}}, "x"));
}

// The GPUs the job's processes use, sample by sample: a GPU none of them is on is not the job's;
// the utilisation is the mean of the readings, the memory the most held; kept in the state file
// and judged in the report.
TEST(SlurmJobRecord, TheGpusItsProcessesUseAreKeptAndJudged) {
  dltune::monitor::Sample s;
  for (pid_t pid : {100, 101}) {
    dltune::monitor::Process p;
    p.pid = pid;
    s.processes.push_back(p);
  }
  dltune::monitor::Gpu mine, other;
  mine.index = 1;
  mine.name = "NVIDIA H100 80GB HBM3";
  mine.memory_total_bytes = 80ull << 30;
  mine.processes = {{100, 6ull << 30}, {101, 1ull << 30}, {999, 50ull << 30}};
  other.index = 0;
  other.utilization_gpu_pct = 100;
  other.processes = {{999, 1}};
  JobRecord r;
  r.job_id = "42";
  for (std::uint32_t pct : {10, 30, 20}) {
    mine.utilization_gpu_pct = pct;
    s.gpus = {other, mine};
    dltune::slurm::add_gpu_use(s, r.gpus);
  }
  mine.processes = {{100, 2ull << 30}};  // less held later: the most stays
  s.gpus = {mine};
  dltune::slurm::add_gpu_use(s, r.gpus);
  ASSERT_EQ(r.gpus.size(), 1u) << "GPU 0 holds none of the job's processes";
  EXPECT_EQ(r.gpus[0].index, 1u);
  EXPECT_EQ(r.gpus[0].memory_bytes, 7ull << 30) << "the job's two processes, not pid 999";
  EXPECT_EQ(r.gpus[0].readings, 4u);
  EXPECT_DOUBLE_EQ(*r.gpus[0].utilization_pct, 20.0);  // (10 + 30 + 20 + 20) / 4
  r.observe(interval(0, 0, 1u << 20, 2u << 20, 1), 0, 2, false);
  r.observe(interval(2, 1.9, 1u << 20, 3u << 20, 3), 0, 2, false);
  auto back = dltune::slurm::record_from_json(to_json(r), "job-42.json");
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(to_json(*back), to_json(r));
  const auto e = dltune::slurm::judge_efficiency(back->use());
  ASSERT_FALSE(e.findings.empty());
  EXPECT_THAT(e.findings[0], HasSubstr("GPU 1 20%"));
  EXPECT_THAT(e.action, HasSubstr("dltune profile --slurm-job 42"));
  // A state file from before GPUs were kept reads as none.
  auto old = to_json(r);
  old.erase("gpus");
  auto without = dltune::slurm::record_from_json(old, "job-42.json");
  ASSERT_TRUE(without) << without.error().message();
  EXPECT_TRUE(without->gpus.empty());
}

TEST(SlurmJobRecord, JobIdsAreDigitsOnly) {
  EXPECT_TRUE(dltune::slurm::check_job_id("4711"));
  for (const char* bad : {"", "47a", "../x", "-1", "123456789012345678901"})
    EXPECT_FALSE(dltune::slurm::check_job_id(bad)) << bad;
}

TEST(SlurmJobReport, TheJobsOwnOomKillsAndTheNodesEventsButNotAnotherJobsKills) {
  const std::vector<LoggedEvent> events = {
      oom("python3", "6123", "/slurm_vm/uid_0/job_3/step_batch/task_0"),
      oom("python3", "7000", "/slurm_vm/uid_0/job_33/step_0/task_0"),  // job 33, not 3
      oom("java", "8000", "/user.slice"),
      node_event("xid"),
      node_event("segfault"),  // a process's, whose job is not known
  };
  const auto mine = dltune::slurm::job_events(events, "3", true);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].event.fields.at("pid"), "6123");
  EXPECT_EQ(mine[1].event.kind, "xid");
  // No window known: the node's events could be anyone's; the job's kills name its cgroup.
  const auto only_kills = dltune::slurm::job_events(events, "3", false);
  ASSERT_EQ(only_kills.size(), 1u);
  EXPECT_EQ(only_kills[0].event.fields.at("pid"), "6123");
}

TEST(SlurmJobReport, AnOomKillTheWatcherMissedIsCountedAndItsVictimNamedWithTheAction) {
  JobRecord r;
  r.job_id = "3";
  r.observe(interval(0, 0, 90u << 20, 99u << 20, 1), 0, 1, false);
  r.observe(interval(1, 0.9, 90u << 20, 99u << 20, 2), 0, 1, false);
  dltune::diagnose::DoctorReport log;
  log.since_wall_ns = 1;
  log.events = {oom("python3", "6123", "/slurm_vm/uid_0/job_3/step_batch/task_0")};
  const auto report =
      dltune::slurm::build_report({"3", "alice", "n1", "0:9"}, r, log, 3'000'000'000);
  ASSERT_TRUE(report.efficiency);
  EXPECT_EQ(*report.efficiency->use.oom_kills, 1u);
  const auto text = render_text(report);
  EXPECT_THAT(text, HasSubstr("killed for memory: python3 (pid 6123, 99.2 MiB anonymous)"));
  // It reached its limit (4 GiB here) whatever peak the watcher saw: half again that.
  EXPECT_THAT(report.action, HasSubstr("ask for more memory: --mem=6144M or more"));
  const auto j = to_json(report);
  EXPECT_EQ(j["schema"], "dltune.slurm-job-report/1");
  EXPECT_EQ(j["user"], "alice");
  EXPECT_EQ(j["events"][0]["fields"]["task"], "python3");
  EXPECT_EQ(j["efficiency"]["oom_kills"], 1);
}

TEST(SlurmJobReport, AJobKilledBeforeItsFirstSampleTakesItsLimitAndPeakFromTheKernel) {
  JobRecord r;  // the watch started, the job died before it saw the group
  r.job_id = "3";
  dltune::diagnose::DoctorReport log;
  log.since_wall_ns = 1;
  auto kill = oom("python3", "6123", "/slurm_vm/uid_0/job_3/step_batch/task_0");
  kill.event.fields["memory"] = "usage 102400kB, limit 102400kB, failcnt 0";
  log.events = {kill};
  const auto report = dltune::slurm::build_report({"3", "alice", "n1", "0:125"}, r, log, 1);
  ASSERT_TRUE(report.efficiency);
  EXPECT_EQ(report.efficiency->use.memory_limit_bytes, 100u << 20);
  EXPECT_EQ(report.efficiency->use.memory_peak_bytes, 100u << 20);
  EXPECT_THAT(report.action, HasSubstr("ask for more memory: --mem=150M or more"));
  // Without the kernel's figures either: no number made up.
  log.events = {oom("python3", "6123", "/slurm_vm/uid_0/job_3/step_batch/task_0")};
  const auto bare = dltune::slurm::build_report({"3", "alice", "n1", "0:125"}, r, log, 1);
  EXPECT_THAT(bare.action, HasSubstr("neither its peak nor its limit was measured"));
  EXPECT_THAT(bare.action, Not(HasSubstr("--mem=0M")));
  // No watch at all: the kernel's limit still gives the number; a limit of none is not one.
  auto unlimited = kill;
  unlimited.event.fields["memory"] = "usage 524288kB, limit 9007199254740988kB, failcnt 0";
  dltune::diagnose::DoctorReport since_boot;
  since_boot.events = {kill};
  EXPECT_THAT(dltune::slurm::build_report({"3", "", "n1", ""}, std::nullopt, since_boot, 1).action,
              HasSubstr("--mem=150M or more (the kernel killed python3 (pid 6123"));
  since_boot.events = {unlimited};
  EXPECT_THAT(dltune::slurm::build_report({"3", "", "n1", ""}, std::nullopt, since_boot, 1).action,
              HasSubstr("--mem=768M or more"))
      << "its usage, not the kernel's 'no limit'";
}

TEST(SlurmJobReport, WithoutAWatchTheKillsAreStillNamedAndTheGapIsSaid) {
  dltune::diagnose::DoctorReport log;  // since boot: no watch gave a window
  log.events = {oom("python3", "6123", "/slurm_vm/uid_0/job_3/step_0/task_0"), node_event("xid")};
  const auto report = dltune::slurm::build_report({"3", "", "n1", ""}, std::nullopt, log, 1);
  EXPECT_FALSE(report.efficiency);
  ASSERT_EQ(report.events.size(), 1u);
  EXPECT_THAT(report.action, HasSubstr("python3 (pid 6123"));
  EXPECT_THAT(render_text(report), HasSubstr("no watch of the job ran here"));
}

TEST(SlurmJobReport, AJobSeenOnceHasItsCpusNotJudged) {
  JobRecord r;
  r.job_id = "4";
  r.observe(interval(0, 0, 1u << 20, 1u << 20, 1), 0, 8, false);  // one sample: no interval
  dltune::diagnose::DoctorReport log;
  log.since_wall_ns = 1;
  const auto report = dltune::slurm::build_report({"4", "", "n1", ""}, r, log, 1);
  ASSERT_TRUE(report.efficiency);
  EXPECT_FALSE(report.efficiency->cpu_pct);
  EXPECT_TRUE(report.efficiency->findings.empty()) << "not 'asked for 8 CPUs and used 0'";
  EXPECT_THAT(render_text(report), HasSubstr("CPU      not measured"));
}

TEST(SlurmJobReport, AJobThatUsedWhatItHadSaysSo) {
  JobRecord r;
  r.job_id = "9";
  r.observe(interval(0, 0, 1u << 30, 3ull << 30, 1), 0, 2, false);
  r.observe(interval(10, 1.9, 1u << 30, 3ull << 30, 11), 0, 2, false);
  dltune::diagnose::DoctorReport log;
  log.since_wall_ns = 1;
  const auto report = dltune::slurm::build_report({"9", "bob", "n1", "0:0"}, r, log, 1);
  EXPECT_EQ(report.action, "");
  EXPECT_THAT(render_text(report), HasSubstr("nothing went wrong"));
}

TEST(SlurmJobReport, AFinishedJobsReportIsReadBackAsEfficiency) {
  dltune::testing::TempTree tree;
  const std::string dir = (tree.dir() / "jobs").string();
  std::filesystem::create_directories(dir);
  JobRecord r;
  r.job_id = "5";
  r.observe(interval(0, 0, 1u << 20, 1u << 20, 1), 0, 2, false);
  r.observe(interval(5, 1.0, 1u << 20, 1u << 20, 6), 0, 2, false);
  dltune::diagnose::DoctorReport log;
  log.since_wall_ns = 1;
  log.events = {oom("python3", "61", "/slurm/uid_5/job_5/step_0/task_0")};
  const auto report = dltune::slurm::build_report({"5", "eve", "n1", "0:0"}, r, log, 7);
  std::ofstream(dltune::slurm::report_path(dir, "5")) << to_json(report).dump(2);

  auto text = dltune::slurm::finished_job_efficiency(dir, "5", false);
  ASSERT_TRUE(text) << text.error().message();
  EXPECT_EQ(*text, render_text(report));
  auto json = dltune::slurm::finished_job_efficiency(dir, "5", true);
  ASSERT_TRUE(json);
  EXPECT_THAT(*json, HasSubstr("\"schema\": \"dltune.slurm-job-report/1\""));

  auto missing = dltune::slurm::finished_job_efficiency(dir, "6", false);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("job-6.json"));
  std::ofstream(dltune::slurm::report_path(dir, "8")) << "{\"schema\": \"dltune.doctor/1\"}";
  auto other = dltune::slurm::finished_job_efficiency(dir, "8", false);
  ASSERT_FALSE(other);
  EXPECT_THAT(other.error().message(), HasSubstr("not a dltune.slurm-job-report/1"));
  EXPECT_FALSE(dltune::slurm::finished_job_efficiency(dir, "../5", false));
}

TEST(SlurmJobWatch, StoppingAJobWithoutAWatcherReadsItsFileAndANonWatcherPidIsLeftAlone) {
  dltune::testing::TempTree tree;
  const std::string dir = (tree.dir() / "state").string();
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(dltune::slurm::stop_watch(dir, "12"));  // none ran
  JobRecord r;
  r.job_id = "12";
  r.watcher_pid = static_cast<int>(::getpid());  // this test: not "slurm watch 12"
  std::ofstream(dltune::slurm::record_path(dir, "12")) << to_json(r).dump();
  auto got = dltune::slurm::stop_watch(dir, "12", 100'000'000);
  ASSERT_TRUE(got) << got.error().message();  // and this process got no SIGTERM
  EXPECT_EQ(got->job_id, "12");
  EXPECT_FALSE(got->ended);
}

TEST(SlurmJobReport, ReportsAreMetricsOneSamplePerJobAndWhatIsNotMeasuredIsLeftOut) {
  JobRecord r;
  r.job_id = "5";
  r.observe(interval(0, 0, 1u << 20, 1u << 20, 1), 0, 2, false);
  r.observe(interval(5, 1.0, 1u << 20, 64u << 20, 6), 0, 2, false);
  dltune::diagnose::DoctorReport log;
  log.since_wall_ns = 1;
  log.events = {oom("python3", "61", "/slurm/uid_5/job_5/step_0/task_0"), node_event("xid")};
  const auto killed = dltune::slurm::build_report({"5", "eve", "n1", "0:9"}, r, log, 7'000'000'000);
  JobRecord once;  // seen for less than an interval: no CPU figures
  once.job_id = "6";
  once.observe(interval(0, 0, 1u << 20, 1u << 20, 1), 0, 2, false);
  const auto brief =
      dltune::slurm::build_report({"6", "o\"dd", "n1", "0:0"}, once, {}, 8'000'000'000);
  const auto text = dltune::slurm::job_metrics(
      {to_json(killed), to_json(brief), {{"schema", "dltune.doctor/1"}}});
  EXPECT_THAT(text, HasSubstr("# TYPE dltune_slurm_job_cpus_used gauge\n"));
  EXPECT_THAT(text, HasSubstr("dltune_slurm_job_cpus_used{slurm_job_id=\"5\",user=\"eve\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("dltune_slurm_job_oom_kills{slurm_job_id=\"5\",user=\"eve\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("dltune_slurm_job_node_events{slurm_job_id=\"5\",user=\"eve\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("dltune_slurm_job_end_time_seconds{slurm_job_id=\"5\",user=\"eve\"} 7\n"));
  EXPECT_THAT(text,
              HasSubstr("dltune_slurm_job_oom_kills{slurm_job_id=\"6\",user=\"o\\\"dd\"} 0\n"))
      << "the label value escaped";
  EXPECT_THAT(text, Not(HasSubstr("dltune_slurm_job_cpus{slurm_job_id=\"6\"")));
  EXPECT_THAT(text, Not(HasSubstr("dltune.doctor")));
  // No GPU was used: the families are there, without samples.
  EXPECT_THAT(text, HasSubstr("# TYPE dltune_slurm_job_gpu_utilization_ratio gauge\n"));
  EXPECT_THAT(text, Not(HasSubstr("dltune_slurm_job_gpu_utilization_ratio{")));
  // A job whose processes used GPU 3 (a mean of 25% busy, 4 GiB held) and GPU 0 (no utilisation
  // reported): one sample per GPU and what was measured.
  JobRecord g = r;
  g.job_id = "7";
  dltune::slurm::JobGpu three;
  three.index = 3;
  three.utilization_pct = 25;
  three.readings = 4;
  three.memory_bytes = 4ull << 30;
  dltune::slurm::JobGpu zero;
  zero.index = 0;
  zero.memory_bytes = 1024;
  g.gpus = {zero, three};
  const auto gpu = dltune::slurm::build_report({"7", "eve", "n1", "0:0"}, g, {}, 9'000'000'000);
  const auto gtext = dltune::slurm::job_metrics({to_json(gpu)});
  EXPECT_THAT(gtext, HasSubstr("dltune_slurm_job_gpu_utilization_ratio{slurm_job_id=\"7\","
                               "user=\"eve\",gpu=\"3\"} 0.25\n"));
  EXPECT_THAT(gtext, HasSubstr("dltune_slurm_job_gpu_memory_bytes{slurm_job_id=\"7\","
                               "user=\"eve\",gpu=\"3\"} 4294967296\n"));
  EXPECT_THAT(gtext, HasSubstr("dltune_slurm_job_gpu_memory_bytes{slurm_job_id=\"7\","
                               "user=\"eve\",gpu=\"0\"} 1024\n"));
  EXPECT_THAT(gtext, Not(HasSubstr("gpu_utilization_ratio{slurm_job_id=\"7\",user=\"eve\","
                                   "gpu=\"0\"}")));
}

// The watcher over a fixture v1 tree: a job's group that could not be sampled for a moment and
// is found again is the same group (its OOM kill is counted once); one that Slurm made again
// (its directory is another), between two samples or while the old one could not be read,
// counts from 0, added to the old group's kills.
TEST(SlurmJobWatch, AGroupFoundAgainIsTheSameUnlessItWasMadeAgain) {
  namespace fs = std::filesystem;
  dltune::testing::TempTree t;
  t.write("proc/self/mountinfo",
          "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n");
  const std::string uid = "sys/fs/cgroup/memory/slurm/uid_1000";
  auto make_job = [&](const std::string& name) {
    t.write(uid + "/" + name + "/memory.usage_in_bytes", "1048576\n");
    t.write(uid + "/" + name + "/memory.limit_in_bytes", "2097152\n");
    t.write(uid + "/" + name + "/memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    t.write(uid + "/" + name + "/cgroup.procs", "");
    t.write(uid + "/" + name + "/step_0/task_0/cgroup.procs", "");
  };
  make_job("job_5");
  const std::string state = (t.dir() / "state").string();
  dltune::slurm::WatchRequest request;
  request.job_id = "5";
  request.state_dir = state;
  request.interval_ns = 5'000'000;
  request.gpus = false;
  volatile sig_atomic_t stop = 0;
  const auto root = t.root();
  dltune::Result<void> watched;
  std::thread watcher([&] { watched = dltune::slurm::watch_job(root, request, &stop); });
  // The record once `ready` holds for it (the file is rewritten every interval), within 8 s.
  auto record_when = [&](auto ready, const char* what) {
    JobRecord r;
    for (int i = 0; i < 4000; ++i) {
      std::ifstream in(dltune::slurm::record_path(state, "5"));
      std::stringstream s;
      s << in.rdbuf();
      auto j = dltune::inventory::Json::parse(s.str(), nullptr, false);
      if (auto got = dltune::slurm::record_from_json(j, "state"); got && ready(*got)) return *got;
      ::usleep(2000);
    }
    ADD_FAILURE() << "the watcher's record never had " << what;
    return r;
  };
  // The record once it has `n` samples more than `after`.
  auto record_after = [&](std::uint64_t after, std::uint64_t n) {
    return record_when([&](const JobRecord& got) { return got.samples >= after + n; },
                       "new samples");
  };
  // Every rewrite is a new file renamed into place (another inode, or another mtime): three in a
  // row with the same number of samples, not above `seen`, are loops of the watcher that took no
  // sample, so it has let go of the group it read.
  auto let_go = [&](std::uint64_t seen) -> std::uint64_t {
    std::pair<ino_t, std::int64_t> last{0, 0};
    std::uint64_t samples = 0;
    int unchanged = 0;
    for (int i = 0; i < 20'000 && unchanged < 3; ++i, ::usleep(1000)) {
      struct stat st {};
      const auto path = dltune::slurm::record_path(state, "5");
      if (::stat(path.c_str(), &st) != 0) continue;
      const std::pair<ino_t, std::int64_t> now{
          st.st_ino, st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec};
      if (now == last) continue;
      last = now;
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      auto got = dltune::slurm::record_from_json(
          dltune::inventory::Json::parse(text.str(), nullptr, false), "state");
      if (!got) continue;
      unchanged = got->samples == samples && samples >= seen ? unchanged + 1 : 1;
      samples = got->samples;
    }
    EXPECT_GE(unchanged, 3) << "the watcher kept sampling a group whose file does not parse";
    return samples;
  };
  auto r = record_after(0, 2);
  EXPECT_EQ(r.oom_kills, 1u);
  // A sample that fails for a moment (a control file that does not parse), then reads again:
  // the same directory, the same group. The test waits until the watcher has let go of it (it
  // rewrote its record three times with no new sample), then counts from where it stopped.
  t.write(uid + "/job_5/memory.usage_in_bytes", "not a number\n");
  auto stalled = let_go(r.samples);
  t.write(uid + "/job_5/memory.usage_in_bytes", "1048576\n");
  r = record_after(stalled, 3);
  EXPECT_EQ(r.oom_kills, 1u) << "the same group's kill counted again";
  // Made again between two samples, while the watcher reads it (another directory with its own
  // kill swapped in at the path in one step, as rmdir and mkdir can fall between two samples):
  // the kills add up, and once only.
  make_job("job_5.new");
  const auto job = t.dir() / uid / "job_5";
  const auto made = t.dir() / uid / "job_5.new";
  ASSERT_EQ(::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, job.c_str(), RENAME_EXCHANGE), 0)
      << std::strerror(errno);
  fs::remove_all(made);
  r = record_when([](const JobRecord& got) { return got.oom_kills >= 2; }, "the second kill");
  r = record_after(r.samples, 3);
  EXPECT_EQ(r.oom_kills, 2u);
  // Made again while the old one could not be read: the watcher must not take the new group
  // for the old one found again.
  t.write(uid + "/job_5/memory.usage_in_bytes", "not a number\n");
  stalled = let_go(r.samples);
  make_job("job_5.new");
  fs::remove_all(job);
  fs::rename(made, job);
  r = record_when([](const JobRecord& got) { return got.oom_kills >= 3; }, "the third kill");
  r = record_after(r.samples, 3);
  EXPECT_EQ(r.oom_kills, 3u);
  stop = 1;
  watcher.join();
  ASSERT_TRUE(watched) << watched.error().message();
}

}  // namespace job_report_test
