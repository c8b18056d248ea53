// The cost of one sample, next to its floor: a minimal reader of the same files with
// pread on descriptors kept open, that parses nothing. CPU time per iteration is the figure
// (Google Benchmark's "CPU" column). Run by bench/run-sample-bench, which also measures top,
// htop, btop, atop and node_exporter in the same run; figures in bench/README.md.
//
//   BM_Floor/host         the 8 system files
//   BM_Floor/all          + list /proc, + stat and schedstat of every process (what top needs)
//   BM_Floor/tree         + stat, schedstat, status, io of the job tree (DLTUNE_BENCH_PID's, or
//                         20 processes made here), and each thread's children file
//   BM_Sampler/...        dltune's Sampler (no GPUs), same scopes, and two cheaper ones:
//                         screen: all processes, schedstat of 40 (top's rows on screen) only
//                         tree_main_status: the job tree, status of the main process only
//   BM_ColdFloor/wake     a 100 ms sleep and nothing else: the wake-up alone, at 10 Hz
//   BM_ColdFloor/tree     a 100 ms sleep, then what a sample of the asleep tree reads: the 8
//                         system files, the tree's group's files, each member's schedstat and
//                         the main process's children file. record at 10 Hz against this is
//                         its cost over the floor on this machine today (everything runs cold
//                         after 100 ms asleep, several times the hot-loop figure).
//   BM_File/<leaf>        one pread of /proc/PID/<leaf> on a kept descriptor, per process of the
//                         20-process tree: what each file costs (the kernel making its text)
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "monitor/sampler.hpp"

namespace {

const char* kSystemFiles[] = {"/proc/stat",         "/proc/meminfo",         "/proc/vmstat",
                              "/proc/pressure/cpu", "/proc/pressure/memory", "/proc/pressure/io",
                              "/proc/diskstats",    "/proc/net/dev"};

// A job tree of `n` processes (a main process and n-1 children that sleep), made once.
pid_t job_tree(int n) {
  static pid_t main_pid = 0;
  if (main_pid != 0) return main_pid;
  if (const char* p = std::getenv("DLTUNE_BENCH_PID")) return main_pid = std::atoi(p);
  main_pid = ::fork();
  if (main_pid == 0) {
    // A group of its own, killed whole at exit; no copy of the benchmark's stdout kept open.
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    for (int i = 1; i < n; ++i)
      if (::fork() == 0) {
        ::pause();
        ::_exit(0);
      }
    ::pause();
    ::_exit(0);
  }
  ::setpgid(main_pid, main_pid);
  std::atexit([] {
    ::kill(-main_pid, SIGKILL);
    ::waitpid(main_pid, nullptr, 0);
  });
  ::usleep(200'000);
  return main_pid;
}

std::vector<pid_t> tree_pids(pid_t root) {
  std::vector<pid_t> out{root};
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string f =
        "/proc/" + std::to_string(out[i]) + "/task/" + std::to_string(out[i]) + "/children";
    const int fd = ::open(f.c_str(), O_RDONLY);
    if (fd < 0) continue;
    char buf[8192];
    const auto n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    for (char* s = buf; *s;) {
      char* end = nullptr;
      const long v = std::strtol(s, &end, 10);
      if (end == s) break;
      out.push_back(static_cast<pid_t>(v));
      s = end;
    }
  }
  return out;
}

struct Kept {
  std::vector<int> fds;
  ~Kept() {
    for (int fd : fds) ::close(fd);
  }
  void open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) fds.push_back(fd);
  }
};

void raise_nofile() {
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &r);
}

void BM_Floor(benchmark::State& state) {
  raise_nofile();
  const int mode = static_cast<int>(state.range(0));  // 0 host, 1 all, 2 tree
  const pid_t tree = job_tree(20);  // made first, so that every case sees the same processes
  Kept kept;
  for (const char* f : kSystemFiles) kept.open(f);
  std::vector<pid_t> pids;
  std::vector<int> task_dirs;
  if (mode == 2) pids = tree_pids(tree);
  if (mode == 1) {
    DIR* d = ::opendir("/proc");
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] >= '1' && e->d_name[0] <= '9') pids.push_back(std::atoi(e->d_name));
    ::closedir(d);
  }
  const std::vector<const char*> per_process =
      mode == 2 ? std::vector<const char*>{"stat", "schedstat", "status", "io"}
                : std::vector<const char*>{"stat", "schedstat"};
  for (pid_t p : pids) {
    for (const char* f : per_process) kept.open("/proc/" + std::to_string(p) + "/" + f);
    if (mode != 2) continue;
    // A tree is found from the children file of each thread, read every sample.
    const std::string task = "/proc/" + std::to_string(p) + "/task";
    // ...and the threads from the task directory, listed every sample (threads come and go).
    const int task_fd = ::open(task.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (task_fd >= 0) task_dirs.push_back(task_fd);
    if (DIR* d = ::opendir(task.c_str())) {
      while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') kept.open(task + "/" + e->d_name + "/children");
      ::closedir(d);
    }
  }
  std::vector<char> buf(1 << 16);
  const int proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  std::vector<char> dents(1 << 16);
  for (auto _ : state) {
    if (mode == 1) {  // the list of processes, as any `top` must read it each time
      ::lseek(proc_fd, 0, SEEK_SET);
      while (::syscall(SYS_getdents64, proc_fd, dents.data(), dents.size()) > 0) {
      }
    }
    for (int fd : task_dirs) {
      ::lseek(fd, 0, SEEK_SET);
      while (::syscall(SYS_getdents64, fd, dents.data(), dents.size()) > 0) {
      }
    }
    for (int fd : kept.fds) benchmark::DoNotOptimize(::pread(fd, buf.data(), buf.size(), 0));
  }
  for (int fd : task_dirs) ::close(fd);
  ::close(proc_fd);
  state.counters["processes"] = static_cast<double>(pids.size());
  state.counters["files"] = static_cast<double>(kept.fds.size());
}
BENCHMARK(BM_Floor)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->ArgNames({"host/all/tree"})
    ->Unit(benchmark::kMicrosecond);

void BM_Sampler(benchmark::State& state) {
  raise_nofile();
  const int mode = static_cast<int>(state.range(0));  // as BM_Floor; 3 screen, 4 tree_main
  const pid_t tree = job_tree(20);
  dltune::monitor::SamplerOptions o;
  o.gpus = false;
  if (mode == 1 || mode == 3) o.scope.kind = dltune::monitor::Scope::Kind::kAll;
  if (mode == 2 || mode == 4) {
    o.scope.kind = dltune::monitor::Scope::Kind::kTree;
    o.scope.pid = tree;
  }
  if (mode == 3) {  // the 40 rows a 50-line terminal shows: here the 40 newest processes
    std::vector<pid_t> all;
    if (DIR* d = ::opendir("/proc")) {
      while (const dirent* e = ::readdir(d))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9') all.push_back(std::atoi(e->d_name));
      ::closedir(d);
    }
    std::sort(all.begin(), all.end());
    if (all.size() > 40) all.erase(all.begin(), all.end() - 40);
    o.process_detail.pids = all;
  }
  if (mode == 4) o.process_detail.switches_of_main_and_ranks_only = true;
  dltune::host::Root root;
  auto sampler = dltune::monitor::Sampler::open(root, o);
  if (!sampler) {
    state.SkipWithError(sampler.error().message().c_str());
    return;
  }
  dltune::monitor::Sample sample;
  (void)(*sampler)->sample(sample);  // warm: files opened, buffers sized
  for (auto _ : state) {
    auto ok = (*sampler)->sample(sample);
    if (!ok) {
      state.SkipWithError(ok.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(sample);
  }
  state.counters["processes"] = static_cast<double>(sample.processes.size());
}
BENCHMARK(BM_Sampler)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->Arg(4)
    ->ArgNames({"host/all/tree/screen/tree_main_status"})
    ->Unit(benchmark::kMicrosecond);

// The tree's group's files that the sampler reads each sample (CgroupCollector): the group
// (its memory hierarchy's path on cgroup v1, else its cgroup2 path, from /proc/PID/cgroup) in
// each hierarchy mounted under /sys/fs/cgroup; those that exist.
std::vector<std::string> group_files(pid_t pid) {
  std::string text(8192, '\0');
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/cgroup").c_str(), O_RDONLY);
  if (fd < 0) return {};
  const auto n = ::read(fd, text.data(), text.size());
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::string group;
  for (const char* prefix : {":memory:", "0::"}) {
    const auto at = text.find(prefix);
    if (at == std::string::npos) continue;
    const auto from = at + std::strlen(prefix);
    group = text.substr(from, text.find('\n', from) - from);
    break;
  }
  if (group.empty()) return {};
  // By their real paths, each once: /sys/fs/cgroup/cpu is often a link to cpu,cpuacct.
  std::set<std::string> out;
  const auto add = [&](const std::string& mount, std::initializer_list<const char*> files) {
    for (const char* f : files) {
      const std::string path = "/sys/fs/cgroup" + mount + group + "/" + f;
      if (char* real = ::realpath(path.c_str(), nullptr)) {
        out.insert(real);
        std::free(real);
      }
    }
  };
  add("/memory", {"memory.usage_in_bytes", "memory.limit_in_bytes", "memory.max_usage_in_bytes",
                  "memory.failcnt", "memory.stat", "memory.oom_control", "cgroup.procs"});
  for (const char* cpu : {"/cpu", "/cpu,cpuacct"})
    add(cpu, {"cpu.stat", "cpu.cfs_quota_us", "cpu.cfs_period_us"});
  for (const char* acct : {"/cpuacct", "/cpu,cpuacct"})
    add(acct, {"cpuacct.usage", "cpuacct.stat"});
  add("/unified", {"cpu.pressure", "memory.pressure", "io.pressure"});  // a hybrid host's
  add("", {"cpu.stat", "cpu.max", "memory.current", "memory.max", "memory.peak",
           "memory.swap.current", "memory.stat", "memory.events", "cpu.pressure", "memory.pressure",
           "io.pressure", "cgroup.procs"});  // cgroup v2
  return {out.begin(), out.end()};
}

void BM_ColdFloor(benchmark::State& state) {
  raise_nofile();
  const pid_t tree = job_tree(20);
  Kept kept;
  if (state.range(0) == 1) {
    for (const char* f : kSystemFiles) kept.open(f);
    for (const auto& f : group_files(tree)) kept.open(f);
    for (const pid_t p : tree_pids(tree)) kept.open("/proc/" + std::to_string(p) + "/schedstat");
    kept.open("/proc/" + std::to_string(tree) + "/task/" + std::to_string(tree) + "/children");
  }
  std::vector<char> buf(1 << 16);
  const timespec interval{0, 100'000'000};
  for (auto _ : state) {
    ::nanosleep(&interval, nullptr);
    for (int fd : kept.fds) benchmark::DoNotOptimize(::pread(fd, buf.data(), buf.size(), 0));
  }
  state.counters["files"] = static_cast<double>(kept.fds.size());
}
// 30 samples at 10 Hz (3 s each): the thread's CPU per sample, as record's summary counts it.
BENCHMARK(BM_ColdFloor)
    ->Arg(0)
    ->Arg(1)
    ->ArgNames({"wake/tree"})
    ->Iterations(30)
    ->Unit(benchmark::kMicrosecond);

// What one file of one process costs, read on a kept descriptor (the kernel generating its text):
// the cost per process per sample that reading it adds. Per process of the 20-process tree.
const char* kLeaves[] = {"stat", "schedstat", "status", "io", "statm", "cmdline"};

void BM_File(benchmark::State& state) {
  const char* leaf = kLeaves[state.range(0)];
  Kept kept;
  for (const pid_t p : tree_pids(job_tree(20)))
    kept.open("/proc/" + std::to_string(p) + "/" + leaf);
  std::vector<char> buf(1 << 16);
  for (auto _ : state)
    for (int fd : kept.fds) benchmark::DoNotOptimize(::pread(fd, buf.data(), buf.size(), 0));
  state.counters["files"] = static_cast<double>(kept.fds.size());  // time / files: one file's
  state.SetLabel(leaf);
}
BENCHMARK(BM_File)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);

}  // namespace
