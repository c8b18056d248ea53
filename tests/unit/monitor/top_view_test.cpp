// The top view as text: what fits 80x24, the job's tree, the compact forms for big hosts.
#include "monitor/top_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace top_view_test {

using namespace dltune;
using monitor::Model;
using monitor::ProcessModel;
using monitor::Role;

namespace {

ProcessModel proc(pid_t pid, pid_t ppid, Role role, double cpu, std::string cmd) {
  ProcessModel p;
  p.pid = pid;
  p.ppid = ppid;
  p.role = role;
  p.state = 'R';
  p.has_rates = true;
  p.cpu_pct = cpu;
  p.rss_bytes = 100u << 20;
  p.threads = 3;
  p.comm = "python3";
  p.cmdline = std::move(cmd);
  p.run_queue_pct = 12.5;
  return p;
}

Model job_model(int extra_processes) {
  Model m;
  m.has_rates = true;
  m.interval_s = 1;
  m.wall_ns = 1'700'000'000'000'000'000;
  m.cpu.user_pct = 60;
  m.cpu.system_pct = 5;
  m.cpu.idle_pct = 35;
  for (int c = 0; c < 2; ++c) {
    monitor::CpuModel cpu;
    cpu.cpu = c;
    cpu.user_pct = 50.0 + c * 40;
    cpu.idle_pct = 50.0 - c * 40;
    m.cpus.push_back(cpu);
  }
  m.memory.total = 8ull << 30;
  m.memory.used = 3ull << 30;
  monitor::DiskModel d;
  d.name = "vda";
  d.read_bytes_s = 1.5 * (1 << 20);
  m.disks.push_back(d);
  m.cgroup = monitor::CgroupModel{};
  m.cgroup->path = "/dltune/run-1";
  m.cgroup->version = "v1";
  m.cgroup->cpu_pct = 150;
  m.cgroup->memory_bytes = 1ull << 30;
  m.cgroup->memory_limit_bytes = 4ull << 30;
  m.cgroup->memory_limit_pct = 25;
  // pids in an order that is not the tree's: a worker of the main (1000) has a lower pid than a
  // shell started by the main, and the shell has a child of its own.
  m.processes.push_back(proc(990, 1, Role::kOther, 1, "unrelated"));
  m.processes.push_back(proc(1000, 1, Role::kMain, 98, "python3 train.py"));
  m.processes.push_back(proc(1001, 1000, Role::kWorker, 45, "python3 train.py"));
  m.processes.push_back(proc(1003, 1002, Role::kChild, 0, "sleep 100"));
  m.processes.push_back(proc(1002, 1000, Role::kChild, 0, "sh -c sleep 100"));
  for (int i = 0; i < extra_processes; ++i)
    m.processes.push_back(proc(2000 + i, 1000, Role::kWorker, i, "python3 train.py"));
  std::sort(m.processes.begin(), m.processes.end(),
            [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return m;
}

std::vector<std::string> texts(const std::vector<monitor::TopLine>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text);
  return out;
}

int line_of(const std::vector<std::string>& lines, const std::string& needle) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return static_cast<int>(i);
  return -1;
}

}  // namespace

TEST(TopView, FitsEightyByTwentyFourWithTheJobTreeInOrder) {
  monitor::TopOptions o;
  o.title = "host  pid 1000";
  o.status = "q quit";
  const auto lines = monitor::top_view(job_model(0), o);
  ASSERT_LE(lines.size(), 24u);
  for (const auto& l : lines) EXPECT_LE(l.text.size(), 80u) << l.text;
  const auto t = texts(lines);
  EXPECT_NE(line_of(t, "dltune top  host  pid 1000"), -1);
  EXPECT_NE(line_of(t, "JOB  /dltune/run-1 (v1)  cpu 150.0%"), -1);
  EXPECT_NE(line_of(t, "1.0G/4.0G (25%)"), -1);
  EXPECT_NE(line_of(t, "DISK vda      read 1.5MB/s"), -1);
  // The tree: main, its worker, the shell, the shell's child (indented further), then the rest.
  const int main_row = line_of(t, "   1000 main");
  const int worker = line_of(t, "   1001 worker");
  const int shell = line_of(t, "   1002 child");
  const int sleeper = line_of(t, "   1003 child");
  const int other = line_of(t, "    990 ");
  ASSERT_NE(main_row, -1);
  EXPECT_LT(main_row, worker);
  EXPECT_LT(worker, shell);
  EXPECT_LT(shell, sleeper);
  EXPECT_LT(sleeper, other);
  EXPECT_NE(t[static_cast<std::size_t>(shell)].find("  sh -c sleep 1"), std::string::npos)
      << t[static_cast<std::size_t>(shell)];
  EXPECT_NE(t[static_cast<std::size_t>(sleeper)].find("    sleep 100"), std::string::npos);
  EXPECT_EQ(lines[static_cast<std::size_t>(main_row)].style, monitor::Style::kMain);
  EXPECT_EQ(lines[static_cast<std::size_t>(worker)].style, monitor::Style::kWorker);
  EXPECT_EQ(t.back(), "q quit");
}

TEST(TopView, SaysHowManyProcessesDidNotFitAndUsesATallerTerminal) {
  monitor::TopOptions o;
  o.status = "keys";
  const auto small = texts(monitor::top_view(job_model(40), o));
  ASSERT_EQ(small.size(), 24u);
  const int more = line_of(small, "more processes");
  ASSERT_NE(more, -1);
  // Shown rows + the hidden count = all 45.
  const int header = line_of(small, "    PID ROLE");
  const int shown = more - header - 1;
  EXPECT_EQ(small[static_cast<std::size_t>(more)],
            "  ... " + std::to_string(45 - shown) + " more processes");
  o.height = 60;
  o.width = 160;
  const auto tall = texts(monitor::top_view(job_model(80), o));
  EXPECT_EQ(tall.size(), 60u);
  EXPECT_GT(line_of(tall, "more processes"), more);
  EXPECT_EQ(texts(monitor::top_view(job_model(40), o)).size(), 56u) << "all 45 fit: no filler";
  o.height = 0;  // --once: everything
  const auto all = texts(monitor::top_view(job_model(40), o));
  EXPECT_EQ(line_of(all, "more processes"), -1);
  EXPECT_NE(line_of(all, "   2039 worker"), -1);
}

TEST(TopView, SortsByTheKeyAsked) {
  const auto m = job_model(3);
  const auto by_cpu = monitor::ordered_processes(m, monitor::TopSort::kCpu);
  ASSERT_EQ(by_cpu.size(), m.processes.size());
  EXPECT_EQ(by_cpu[0]->pid, 1000);  // 98%
  EXPECT_EQ(by_cpu[1]->pid, 1001);  // 45%
  const auto by_pid = monitor::ordered_processes(m, monitor::TopSort::kPid);
  EXPECT_EQ(by_pid.front()->pid, 990);
  EXPECT_EQ(by_pid.back()->pid, 2002);
  const auto tree = monitor::ordered_processes(m, monitor::TopSort::kTree);
  EXPECT_EQ(tree.size(), m.processes.size());  // nobody lost, nobody twice
  EXPECT_EQ(tree[0]->pid, 1000);
}

TEST(TopView, ManyCpusAndGpusTakeCompactForms) {
  Model m = job_model(0);
  m.cpus.clear();
  for (int c = 0; c < 128; ++c) {
    monitor::CpuModel cpu;
    cpu.cpu = c;
    cpu.user_pct = c < 64 ? 100 : 0;  // half busy: '#', half idle: '.'
    cpu.idle_pct = 100 - cpu.user_pct;
    m.cpus.push_back(cpu);
  }
  for (unsigned g = 0; g < 8; ++g) {
    monitor::GpuModel gpu;
    gpu.index = g;
    gpu.utilization_gpu_pct = 10.0 * g;
    gpu.memory_used_bytes = 40ull << 30;
    gpu.memory_total_bytes = 80ull << 30;
    gpu.power_watts = 300;
    gpu.temperature_celsius = 60;
    m.gpus.push_back(gpu);
  }
  monitor::TopOptions o;
  const auto t = texts(monitor::top_view(m, o));
  ASSERT_LE(t.size(), 24u);
  const int cpus = line_of(t, "cpu0");
  ASSERT_NE(cpus, -1);
  EXPECT_NE(t[static_cast<std::size_t>(cpus)].find("################"), std::string::npos);
  EXPECT_NE(line_of(t, "cpu68"), -1);  // the second row starts at CPU 68 (68 per 80 columns)
  const int util = line_of(t, "GPU  util%");
  ASSERT_NE(util, -1);
  EXPECT_NE(t[static_cast<std::size_t>(util)].find("      70"), std::string::npos);
  EXPECT_NE(line_of(t, "GPU  mem%         50"), -1);
  EXPECT_NE(line_of(t, "   1000 main"), -1);  // the job still shows
}

TEST(TopView, FirstSampleShowsNoRates) {
  Model m = job_model(0);
  for (auto& p : m.processes) p.has_rates = false;
  const auto t = texts(monitor::top_view(m, monitor::TopOptions{}));
  const int main_row = line_of(t, "   1000 main");
  ASSERT_NE(main_row, -1);
  EXPECT_EQ(t[static_cast<std::size_t>(main_row)].find("98.0"), std::string::npos);
  EXPECT_NE(t[static_cast<std::size_t>(main_row)].find("     -"), std::string::npos);
}

TEST(TopView, CompactBytes) {
  EXPECT_EQ(monitor::compact_bytes(0), "0");
  EXPECT_EQ(monitor::compact_bytes(1000), "1000");
  EXPECT_EQ(monitor::compact_bytes(1536), "1.5K");
  EXPECT_EQ(monitor::compact_bytes(300.0 * 1024 * 1024), "300M");
  EXPECT_EQ(monitor::compact_bytes(-5), "0");
}

// /proc/PID/io is root's or the owner's: a view with no process's I/O has no IO/s column, and
// the column comes back (with "-" for the rest) when one process has it.
TEST(TopView, TheIoColumnOnlyWhenTheViewReadsIo) {
  monitor::TopOptions all;
  all.width = 100;
  all.height = 0;
  auto m = job_model(0);
  EXPECT_FALSE(monitor::reads_io(m));
  const auto plain = texts(monitor::top_view(m, all));
  const int header = line_of(plain, "COMMAND");
  ASSERT_GE(header, 0);
  EXPECT_EQ(plain[header].find("IO/s"), std::string::npos) << plain[header];
  m.processes[1].read_bytes_s = 2.0 * (1 << 20);
  m.processes[1].write_bytes_s = 0;
  EXPECT_TRUE(monitor::reads_io(m));
  const auto with = texts(monitor::top_view(m, all));
  EXPECT_NE(with[line_of(with, "COMMAND")].find("IO/s"), std::string::npos);
  EXPECT_NE(with[line_of(with, "train.py")].find("2.0M"), std::string::npos)
      << with[line_of(with, "train.py")];
  // Every row keeps the header's columns: COMMAND starts at the same place.
  const auto cmd_at = with[line_of(with, "COMMAND")].find("COMMAND");
  EXPECT_EQ(with[line_of(with, "unrelated")].find("unrelated"), cmd_at);
  EXPECT_EQ(plain[line_of(plain, "unrelated")].find("unrelated"), plain[header].find("COMMAND"));
}

// A notice longer than the width is wrapped, never cut: every word of it is on screen.
TEST(TopView, ALongNoticeIsWrappedWhole) {
  const std::string notice =
      "GPUs: cannot load libnvidia-ml.so.1 (the NVIDIA driver's NVML): no GPU columns; set "
      "DLTUNE_NVML_LIBRARY to the library's path if the driver is installed elsewhere, end.";
  monitor::TopOptions o;
  o.height = 0;
  o.notices = {notice};
  const auto lines = texts(monitor::top_view(job_model(0), o));
  std::string joined;
  for (const auto& l : lines) {
    EXPECT_LE(l.size(), 80u) << l;
    if (l.starts_with("! ") ||
        (!joined.empty() && l.starts_with("  ") && !joined.ends_with("end.")))
      joined += (joined.empty() ? l.substr(2) : " " + l.substr(2));
  }
  EXPECT_EQ(joined, notice);
}

TEST(TopView, EachProcessShowsTheGpusItUsesAndTheMemoryItHoldsThere) {
  Model m = job_model(0);
  for (unsigned g = 0; g < 2; ++g) {
    monitor::GpuModel gpu;
    gpu.index = g;
    gpu.utilization_gpu_pct = 90;
    m.gpus.push_back(gpu);
  }
  // The main process on both GPUs (NVML's compute processes), the worker on none; a process
  // NVML gives no memory for (MIG) still shows its GPU.
  m.gpus[0].processes.push_back({1000, 3ull << 30});
  m.gpus[1].processes.push_back({1000, 1ull << 29});
  m.gpus[1].processes.push_back({990, std::nullopt});
  const auto t = texts(monitor::top_view(m, monitor::TopOptions{}));
  const int head = line_of(t, "    PID ROLE");
  ASSERT_NE(head, -1);
  EXPECT_NE(t[static_cast<std::size_t>(head)].find("GPU MEM"), std::string::npos);
  const int main = line_of(t, "   1000 main");
  ASSERT_NE(main, -1);
  EXPECT_NE(t[static_cast<std::size_t>(main)].find(" 0,1 3.5G "), std::string::npos)
      << t[static_cast<std::size_t>(main)];
  const int worker = line_of(t, "   1001 worker");
  ASSERT_NE(worker, -1);
  EXPECT_NE(t[static_cast<std::size_t>(worker)].find(" -        "), std::string::npos);
  EXPECT_NE(t[static_cast<std::size_t>(line_of(t, "    990"))].find(" 1        "),
            std::string::npos);
  // Without process lists (a container without the host's PIDs) there is no GPU column.
  for (auto& g : m.gpus) g.processes.clear();
  const auto plain = texts(monitor::top_view(m, monitor::TopOptions{}));
  EXPECT_EQ(plain[static_cast<std::size_t>(line_of(plain, "    PID ROLE"))].find("GPU MEM"),
            std::string::npos);
}

TEST(TopView, FilterKeepsTheProcessesWhoseCommandLineHoldsItAndNamesIt) {
  monitor::TopOptions o;
  o.filter = "sleep";
  const auto t = texts(monitor::top_view(job_model(5), o));
  EXPECT_NE(line_of(t, "filter \"sleep\""), -1) << t[0];
  EXPECT_NE(line_of(t, "   1002 child"), -1);
  EXPECT_NE(line_of(t, "   1003 child"), -1);
  EXPECT_EQ(line_of(t, "   1000 main"), -1);
  EXPECT_EQ(line_of(t, "    990 "), -1);
  monitor::ProcessModel kernel;
  kernel.comm = "kworker/0:1";
  EXPECT_TRUE(monitor::matches_filter(kernel, "[kworker"));
  EXPECT_TRUE(monitor::matches_filter(kernel, ""));
  EXPECT_FALSE(monitor::matches_filter(kernel, "python"));
}

TEST(TopView, TheSelectedRowIsShownReversedAndTheListScrollsToIt) {
  monitor::TopOptions o;
  o.status = "keys";
  o.sort = monitor::TopSort::kPid;
  o.selected = 40;
  monitor::TopLayout layout;
  const auto lines = monitor::top_view(job_model(40), o, &layout);
  ASSERT_EQ(lines.size(), 24u);
  EXPECT_EQ(layout.count, 45u);
  ASSERT_GT(layout.rows, 0u);
  EXPECT_EQ(layout.first, 40 - layout.rows + 1) << "the selected row is the last shown";
  const auto t = texts(lines);
  EXPECT_EQ(line_of(t, "more processes"), -1) << "the live view scrolls instead";
  int selected = -1;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].style == monitor::Style::kSelected) selected = static_cast<int>(i);
  ASSERT_NE(selected, -1);
  EXPECT_EQ(selected, 22) << "just above the status line";
  // pid order: 990, 1000..1003, then 2000.. : the 41st is 2035.
  EXPECT_NE(t[22].find("   2035 "), std::string::npos) << t[22];
  // Back at the top: the list starts there again.
  o.selected = 0;
  o.first = layout.first;
  (void)monitor::top_view(job_model(40), o, &layout);
  EXPECT_EQ(layout.first, 0u);
}

// K hides the kernel's threads: kthreadd (PID 2) and its children, nothing else.
TEST(TopView, KernelThreadsAreKthreaddAndItsChildrenAndCanBeHidden) {
  auto m = job_model(0);
  const auto all = monitor::visible_processes(m, monitor::TopSort::kPid, "").size();
  monitor::ProcessModel kthreadd;
  kthreadd.pid = 2;
  kthreadd.comm = "kthreadd";
  monitor::ProcessModel worker = kthreadd;
  worker.pid = 7;
  worker.ppid = 2;
  worker.comm = "kworker/0:1";
  m.processes.push_back(kthreadd);
  m.processes.push_back(worker);
  EXPECT_TRUE(monitor::is_kernel_thread(kthreadd));
  EXPECT_TRUE(monitor::is_kernel_thread(worker));
  EXPECT_FALSE(monitor::is_kernel_thread(m.processes.front()));
  EXPECT_EQ(monitor::visible_processes(m, monitor::TopSort::kPid, "").size(), all + 2);
  const auto shown = monitor::visible_processes(m, monitor::TopSort::kPid, "", std::nullopt, true);
  EXPECT_EQ(shown.size(), all);
  for (const auto* p : shown) EXPECT_FALSE(monitor::is_kernel_thread(*p)) << p->pid;
}

TEST(TopView, FollowKeepsAProcessAndItsDescendants) {
  const auto m = job_model(0);
  const auto under = monitor::visible_processes(m, monitor::TopSort::kPid, "", 1002);
  ASSERT_EQ(under.size(), 2u);
  EXPECT_EQ(under[0]->pid, 1002);
  EXPECT_EQ(under[1]->pid, 1003);
  EXPECT_EQ(monitor::visible_processes(m, monitor::TopSort::kPid, "", 1000).size(), 4u);
  monitor::TopOptions o;
  o.follow = 1002;
  EXPECT_NE(texts(monitor::top_view(m, o))[0].find("follow 1002"), std::string::npos);
}

TEST(TopView, TintsCpuModesMemoryKindsPressureAndAHotGpu) {
  auto m = job_model(0);
  m.memory.swap_used = 1 << 20;
  m.pressure.cpu = monitor::PressureModel{};
  m.pressure.cpu->some_pct = 30;
  monitor::GpuModel g;
  g.temperature_celsius = 90;
  g.clock_event_reasons = 0x20;  // SwThermalSlowdown
  m.gpus.push_back(g);
  const auto lines = monitor::top_view(m, monitor::TopOptions{});
  const auto tints = [&lines](const std::string& prefix) {
    std::vector<monitor::Tint> out;
    for (const auto& l : lines)
      if (l.text.rfind(prefix, 0) == 0)
        for (const auto& s : l.spans) out.push_back(s.tint);
    return out;
  };
  const auto cpu = tints("CPU ");
  ASSERT_EQ(cpu.size(), 4u);
  EXPECT_EQ(cpu[0], monitor::Tint::kUser);
  EXPECT_EQ(cpu[3], monitor::Tint::kSteal);
  EXPECT_EQ(tints("MEM ").size(), 2u);
  EXPECT_EQ(tints("SWAP ").at(0), monitor::Tint::kSwap);
  EXPECT_EQ(tints("PSI ").at(0), monitor::Tint::kBad);
  EXPECT_EQ(tints("cpu0").at(0), monitor::Tint::kUser);
  const auto gpu = tints("GPU0");
  EXPECT_EQ(gpu, (std::vector<monitor::Tint>{monitor::Tint::kBad, monitor::Tint::kBad}));
  EXPECT_EQ(monitor::pressure_tint(1), monitor::Tint::kGood);
  EXPECT_EQ(monitor::pressure_tint(10), monitor::Tint::kFair);
  // Spans lie within their lines.
  for (const auto& l : lines)
    for (const auto& s : l.spans)
      EXPECT_LE(s.start + s.length, static_cast<int>(l.text.size())) << l.text;
}

TEST(TopView, TheNextSampleReadsDetailForTheRowsOnScreenAPageEitherSideAndTheRanks) {
  Model m;
  m.has_rates = true;
  // 100 processes by CPU, largest first: pid 2000+i has CPU 100-i; pid 50 is a rank far down.
  for (int i = 0; i < 100; ++i)
    m.processes.push_back(proc(2000 + i, 1, Role::kOther, 100.0 - i, "p"));
  m.processes.push_back(proc(50, 1, Role::kRank, 0, "rank"));
  const auto visible = monitor::visible_processes(m, monitor::TopSort::kCpu, "");
  monitor::TopLayout layout;
  layout.count = visible.size();
  layout.first = 30;  // scrolled: rows 30..39 on screen
  layout.rows = 10;
  const auto d = monitor::detail_for_view(visible, layout, monitor::TopSort::kCpu, m);
  EXPECT_TRUE(d.switches_of_main_and_ranks_only);
  ASSERT_TRUE(d.pids.has_value());
  auto pids = *d.pids;
  std::sort(pids.begin(), pids.end());
  std::vector<pid_t> want{50};  // the rank, then rows 20..49 (a page above, the page, below)
  for (int i = 20; i < 50; ++i) want.push_back(2000 + i);
  EXPECT_EQ(pids, want);

  // At the top: no page above; near the end: what is left.
  layout.first = 0;
  auto top = *monitor::detail_for_view(visible, layout, monitor::TopSort::kCpu, m).pids;
  EXPECT_EQ(top.size(), 21u);  // rows 0..19 and the rank
  layout.first = 95;
  auto end = *monitor::detail_for_view(visible, layout, monitor::TopSort::kCpu, m).pids;
  EXPECT_EQ(end.size(), 101u - 85u + 1u);  // rows 85..100 and the rank again (it is row 100)

  // A sort by the run queue or by I/O needs every process's file: no set.
  EXPECT_FALSE(monitor::detail_for_view(visible, layout, monitor::TopSort::kRunQueue, m).pids);
  EXPECT_FALSE(monitor::detail_for_view(visible, layout, monitor::TopSort::kIo, m).pids);

  // Stat every sample for the rows on screen and the rank only, the others in turn; not for a
  // sort by a file beyond stat, nor where the caller reads everything each time.
  layout.first = 30;
  EXPECT_FALSE(monitor::detail_for_view(visible, layout, monitor::TopSort::kCpu, m).every_sample);
  const auto turns = monitor::detail_for_view(visible, layout, monitor::TopSort::kCpu, m, 10);
  ASSERT_TRUE(turns.every_sample.has_value());
  auto every = *turns.every_sample;
  std::sort(every.begin(), every.end());
  std::vector<pid_t> shown{50};
  for (int i = 30; i < 40; ++i) shown.push_back(2000 + i);
  EXPECT_EQ(every, shown);
  EXPECT_EQ(turns.others_every, 10u);
  EXPECT_FALSE(
      monitor::detail_for_view(visible, layout, monitor::TopSort::kRunQueue, m, 10).every_sample);
}

TEST(TopView, APythonProcessShowsItsCommandAndItsFunctionBoth) {
  Model m;
  m.has_rates = true;
  auto p = proc(4242, 1, Role::kMain, 50,
                "/usr/bin/python3 train.py --epochs 100 --lr 0.1 --data /datasets/imagenet");
  p.python_frame = "Samples.__getitem__ train.py:64";
  m.processes.push_back(p);
  monitor::TopOptions o;
  o.width = 120;
  o.height = 0;
  o.sort = monitor::TopSort::kPid;
  const auto t = texts(monitor::top_view(m, o));
  const int row = line_of(t, "   4242 main");
  ASSERT_NE(row, -1);
  const auto& line = t[static_cast<std::size_t>(row)];
  EXPECT_LE(line.size(), 120u) << line;
  // The program by its name, the command cut to leave the function room; both are there.
  EXPECT_NE(line.find(" python3 train.py --epochs"), std::string::npos) << line;
  EXPECT_EQ(line.find("/usr/bin"), std::string::npos) << line;
  EXPECT_NE(line.find(".. | py Samples.__getitem__ train.py:64"), std::string::npos) << line;
}

TEST(TopView, ACommandLineWithNewlinesStaysOneRow) {
  Model m;
  m.has_rates = true;
  m.processes.push_back(proc(77, 1, Role::kOther, 1, "python3 -c def f():\n\tpass\nf()"));
  monitor::TopOptions o;
  o.width = 100;
  o.height = 0;
  const auto t = texts(monitor::top_view(m, o));
  const int row = line_of(t, "     77 ");
  ASSERT_NE(row, -1);
  EXPECT_NE(t[static_cast<std::size_t>(row)].find("python3 -c def f():  pass f()"),
            std::string::npos)
      << t[static_cast<std::size_t>(row)];
  for (const auto& l : t) EXPECT_EQ(l.find('\n'), std::string::npos) << l;
}

// A process row, column by column, under the header: with and without rates, with the I/O and
// GPU columns, a rank's ROLE, a kernel thread's name, a row cut at the width.
TEST(TopView, EachColumnOfARowIsWhereTheHeaderSays) {
  Model m = job_model(0);
  m.processes.clear();
  auto a = proc(1000, 1, Role::kMain, 0, "python3 train.py --epochs 3");
  a.rank = 3;
  a.cpu_pct = 123.45;
  a.system_pct = 7.06;
  a.run_queue_pct = 4.25;
  a.rss_bytes = 1536ull << 20;
  a.major_faults_s = 12345.6;
  a.read_bytes_s = 5.0 * (1 << 20);
  a.write_bytes_s = 0;
  a.threads = 12;
  auto b = proc(1001, 1000, Role::kWorker, 0, "");
  b.comm = "kworker/0:1";
  b.state = 'S';
  b.run_queue_pct.reset();
  b.rss_bytes = 0;
  b.major_faults_s = 0.25;
  b.threads = 1;
  auto c = proc(1002, 1000, Role::kChild, 0, "sleep 100");
  c.has_rates = false;
  c.rss_bytes = 900;
  m.processes = {a, b, c};
  monitor::GpuModel g;
  g.index = 0;
  g.processes.push_back({1000, 2ull << 30});
  m.gpus.push_back(g);
  monitor::TopOptions o;
  o.width = 96;
  o.height = 0;
  const auto t = texts(monitor::top_view(m, o));
  const int header = line_of(t, "COMMAND");
  ASSERT_GE(header, 0);
  EXPECT_EQ(t[static_cast<std::size_t>(header)],
            "    PID ROLE   S   CPU%  SYS% RUNQ%    RSS  MAJF/s    IO/s GPU MEM   THR COMMAND");
  EXPECT_EQ(t[static_cast<std::size_t>(header) + 1],
            "   1000 rank3  R  123.5   7.1   4.2   1.5G   12K/s    5.0M 0 2.0G     12 python3 "
            "train.py --epoc");
  EXPECT_EQ(t[static_cast<std::size_t>(header) + 2],
            "   1001 worker S    0.0   0.0     -      0   0.2/s       - -           1   "
            "[kworker/0:1]");
  EXPECT_EQ(t[static_cast<std::size_t>(header) + 3],
            "   1002 child  R      -     -     -    900       -       - -           3   sleep 100");
}

}  // namespace top_view_test

namespace top_view_gpm_test {

// A GPU with NVML GPM's SM activity shows it beside its utilisation; one without shows none.
TEST(TopView, AGpuShowsItsSmActivityWhereNvmlGpmGivesIt) {
  dltune::monitor::Model m;
  dltune::monitor::GpuModel with, without;
  with.index = 0;
  with.utilization_gpu_pct = 97;
  with.sm_active_pct = 15;
  without.index = 1;
  without.utilization_gpu_pct = 97;
  m.gpus = {with, without};
  std::vector<std::string> lines;
  for (const auto& l : dltune::monitor::top_view(m, dltune::monitor::TopOptions{}))
    lines.push_back(l.text);
  const auto line = [&](const std::string& prefix) {
    for (const auto& l : lines)
      if (l.rfind(prefix, 0) == 0) return l;
    return std::string("(no line " + prefix + ")");
  };
  EXPECT_NE(line("GPU0").find("util 97.0% sm 15.0%  mem"), std::string::npos) << line("GPU0");
  EXPECT_NE(line("GPU1").find("util 97.0%  mem"), std::string::npos) << line("GPU1");
  EXPECT_EQ(line("GPU1").find(" sm "), std::string::npos) << line("GPU1");
}

}  // namespace top_view_gpm_test
