#pragma once
// Sampler: fills Samples from the host, cheaply.
//
// The collectors keep the descriptors of long-lived files open and pread them into buffers that
// are reused (host::OpenFile); per-process files are read only for the processes in scope. A
// process that exits mid-sample is simply gone. A source that is missing (no PSI, no NVML, an
// unreadable /proc/PID/io) is switched off once, with one notice, not one per sample.
//
// Collectors: system_collector.cpp, cgroup_collector.cpp, process_collector.cpp,
// gpu_collector.cpp.
#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "host/root.hpp"
#include "monitor/sample.hpp"

namespace dltune::monitor {

// Which processes are sampled per process.
struct Scope {
  enum class Kind {
    kNone,    // host only (and GPUs)
    kTree,    // `pid` and all its descendants; `pid` is the job's main process
    kCgroup,  // the processes in `cgroup` (a path as in /proc/PID/cgroup: "/dltune/job")
    kAll,     // every process (top without --pid)
  } kind = Kind::kNone;
  pid_t pid = 0;
  std::string cgroup;
};

// Which of a process's files beyond /proc/PID/stat are read. The default reads them all for
// every process in scope; a narrower choice leaves the fields of the files not read empty.
struct ProcessDetail {
  // The processes whose schedstat, status and io are read (sorted or not); nullopt: every
  // process in scope. `top` gives the pids of its rows on screen: the others carry what stat
  // gives (CPU, memory, state, name; cmdline, read once per process, too).
  std::optional<std::vector<pid_t>> pids;
  // /proc/PID/status (the context switches, the most costly file of a process) only for the
  // job's main process and its ranks: the only switches a verdict uses (diagnose's
  // main.involuntary). The other processes' voluntary_switches and involuntary_switches are
  // empty.
  bool switches_of_main_and_ranks_only = false;
  // Scope::kAll (top's list): when set, the processes whose stat is read every sample (top's
  // rows on screen and the job's). Every other process's stat is read every `others_every`
  // samples (a share of them each sample, by pid), and /proc is listed for new processes as
  // often: its text is most of what a sample of every process costs (bench/README.md). Between
  // two readings a process keeps its last one, Process::stat_ns says when that was (its rates
  // span the time between readings), and nothing beyond stat is read for it. nullopt, or
  // others_every 1: every process every sample.
  std::optional<std::vector<pid_t>> every_sample;
  unsigned others_every = 1;
  // Scope::kTree: each member's task directory (its threads, whose children files name its
  // children) is listed every `threads_every` samples, a share of the members each sample. The
  // main process's and the ranks' known threads' children files are read every sample (they
  // start the job's workers); a worker's only in its turn, its children carried between. A
  // child forked by a new thread, or by a worker, is found up to that many samples late. A
  // member single-threaded at its last reading (stat's thread count) is not listed at all until
  // its stat counts more (a child of a new thread: up to one sample later still).
  unsigned threads_every = 1;
  // A process whose schedstat is read (`pids`), single-threaded and not running at its last
  // reading, whose schedstat (read before its stat) shows the same run time and timeslices, has
  // not been switched in since: its CPU times, faults, I/O and switches are those of its last
  // reading, which it keeps as of now (stat and io are not read). What can change without it
  // running (its state once woken, its rss under reclaim, its parent when reparented, its CPU)
  // is read at least every `unchanged_every` samples, a share of the processes each sample (by
  // pid). 1: every such process read in full every sample.
  unsigned unchanged_every = 1;
  // Scope::kAll (top's rows on screen): a process kept unchanged (above) for `unchanged_every`
  // samples in a row is asked (its schedstat read) only every `quiet_every` samples, a share of
  // them each sample (by pid), its reading carried between with its time: a process that wakes
  // after a second asleep shows up to quiet_every - 1 samples late. 1: asked every sample.
  unsigned quiet_every = 1;
  bool operator==(const ProcessDetail&) const = default;
};

// The samples in about a second at `interval_ns` (1 to 100): how often what changes slowly is
// read (ProcessDetail::others_every, threads_every, unchanged_every) at a fast interval.
[[nodiscard]] inline unsigned samples_a_second(std::int64_t interval_ns) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>(1'000'000'000 / std::max<std::int64_t>(interval_ns, 1), 1, 100));
}

struct SamplerOptions {
  Scope scope;
  bool gpus = true;
  std::string nvml_library;  // DLTUNE_NVML_LIBRARY, or empty for the default names
  std::int64_t gpu_interval_ns = 1'000'000'000;  // NVML is read at its own, slower rate
  // The cgroup whose counters go into Sample::cgroup: for kTree the main process's own group
  // (found from /proc/PID/cgroup) unless set; for kCgroup that group.
  std::optional<std::string> cgroup;
  // Where a sample's wall and monotonic stamps come from; null: the machine's clocks.
  const Clock* clock = nullptr;
  // Which per-process files beyond stat are read; the default: all (Sampler::set_process_detail
  // changes it later, e.g. for the rows on screen).
  ProcessDetail process_detail;
  // Any scope but kCgroup (whose members are the group's processes, needed every sample): the
  // sampled group's process count is read every `group_count_every` samples when the group is
  // large (CgroupCollector::count_every). 1: every sample.
  unsigned group_count_every = 1;
  // The host's activity counters (/proc/vmstat, the PSI files, diskstats, net/dev: the rates of
  // swap, faults, stalls, disks and network) read every `host_activity_every` samples and
  // carried between (System::activity_carried); the Model takes their rates over the span
  // between two readings and keeps them between (Model::into). /proc/stat and meminfo (the CPU
  // bars, memory in use) are read every sample. For a live view at a fast interval, where these
  // rates over a fraction of a second are noise to the eye; 1: every sample.
  unsigned host_activity_every = 1;
};

// Messages said once per source ("no /proc/pressure: the kernel has PSI off (psi=0)").
class Notices {
 public:
  // Adds `text` under `key` unless that key was seen before.
  void once(const std::string& key, std::string text);
  // The messages added since the last call.
  [[nodiscard]] std::vector<std::string> take();

 private:
  std::set<std::string> seen_;
  std::vector<std::string> pending_;
};

// Fills System from /proc/stat, meminfo, vmstat, pressure/*, diskstats, net/dev.
class SystemCollector {
 public:
  explicit SystemCollector(const host::Root& root);
  ~SystemCollector();
  SystemCollector(SystemCollector&&) noexcept;
  SystemCollector& operator=(SystemCollector&&) noexcept;
  // Errors only for a file that is there and does not parse (naming the file and the line).
  // `now_ns`: the sample's CLOCK_MONOTONIC time (System::activity_ns).
  [[nodiscard]] Result<void> collect(System& out, Notices& notices, std::int64_t now_ns = 0);
  // vmstat, the PSI files, diskstats and net/dev read every `n` collects from the next one
  // (which reads them), carried between (SamplerOptions::host_activity_every). 1 (the
  // default): every collect.
  void activity_every(unsigned n);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Fills Cgroup from a group's files (v1: the same path in each hierarchy; v2: one directory).
class CgroupCollector {
 public:
  // `path` as in /proc/PID/cgroup ("/dltune/job-1"). Error when the group exists in no hierarchy.
  [[nodiscard]] static Result<CgroupCollector> open(const host::Root& root,
                                                    const std::string& path);
  // The group of process `pid` (its v2 group, or on v1 the memory hierarchy's group).
  [[nodiscard]] static Result<std::string> group_of(const host::Root& root, pid_t pid);
  ~CgroupCollector();
  CgroupCollector(CgroupCollector&&) noexcept;
  CgroupCollector& operator=(CgroupCollector&&) noexcept;
  // The group removed since open: `out` is left empty, not an error.
  [[nodiscard]] Result<void> collect(std::optional<Cgroup>& out, Notices& notices);
  // The PIDs in the group (cgroup.procs), for Scope::kCgroup; for a group that holds none
  // itself (a Slurm job's), those of the groups below it. The first call after a collect gives
  // the members that collect read and counted (one sample, one reading: the Sampler calls it
  // right after); any other call reads them now.
  [[nodiscard]] std::vector<pid_t> pids() const;
  // For a group whose processes are not the scope's members (any scope but kCgroup): its
  // process count (Cgroup::pids) is read every `n` collects once a reading counted more than
  // kSmallGroup, the last count carried between. Reading cgroup.procs costs the kernel time in
  // proportion to the group's processes (it lists, sorts and prints them all: ~0.1 µs each on
  // this VM, 57 µs at 585), and a job that is in no group of its own shares one with many
  // others, on v1 often the root group: every process of the host. A small group is counted
  // every collect. 1 (the default): every collect. pids() reads the list itself when collect
  // did not.
  void count_every(unsigned n);
  static constexpr std::uint64_t kSmallGroup = 64;

 private:
  CgroupCollector();
  struct State;
  std::unique_ptr<State> state_;
};

// Fills Process for the processes in scope, and names their roles.
class ProcessCollector {
 public:
  ProcessCollector(const host::Root& root, Scope scope, ProcessDetail detail = {});
  ~ProcessCollector();
  ProcessCollector(ProcessCollector&&) noexcept;
  ProcessCollector& operator=(ProcessCollector&&) noexcept;
  // `cgroup_pids`: the members for Scope::kCgroup (from CgroupCollector::pids); `now_ns`: the
  // sample's CLOCK_MONOTONIC, each read process's Process::stat_ns.
  [[nodiscard]] Result<void> collect(std::vector<Process>& out, Notices& notices,
                                     const std::vector<pid_t>& cgroup_pids = {},
                                     std::int64_t now_ns = 0);
  // From the next collect on. The files of processes that leave the set are closed.
  void set_detail(ProcessDetail detail);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads NVML, and AMD's GPUs from amdgpu's sysfs under `root` (numbered after NVML's), on a
// thread of its own every `interval_ns`; collect copies the latest reading and never waits.
class GpuCollector {
 public:
  GpuCollector(const host::Root& root, std::string nvml_library, std::int64_t interval_ns);
  ~GpuCollector();  // stops the thread
  GpuCollector(const GpuCollector&) = delete;
  GpuCollector& operator=(const GpuCollector&) = delete;
  // The latest reading into `out`, and every PCI GPU's slot (gpu/pci_gpus.hpp) into `slots`.
  void collect(std::vector<Gpu>& out, std::vector<gpu::GpuSlot>& slots, Notices& notices);
  // Blocks until the thread has finished `n` readings since it started, or has ended (no NVML to
  // read): what a test waits for instead of sleeping.
  void wait_for_readings(std::uint64_t n);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class Sampler {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Sampler>> open(const host::Root& root,
                                                             SamplerOptions options);
  ~Sampler();
  // Fills `out`, reusing its vectors and strings (no allocation once warm). Sets both clocks.
  [[nodiscard]] Result<void> sample(Sample& out);
  // Messages about sources switched off, each said once.
  [[nodiscard]] std::vector<std::string> take_notices() { return notices_.take(); }
  [[nodiscard]] const SamplerOptions& options() const { return options_; }
  // From the next sample on (ProcessCollector::set_detail); nothing without processes in scope.
  void set_process_detail(ProcessDetail detail);
  // SamplerOptions::host_activity_every from now on; the next sample reads the counters.
  void set_host_activity_every(unsigned n);

 private:
  Sampler() = default;
  SamplerOptions options_;
  std::uint64_t ticks_per_second_ = 100, page_size_ = 4096;  // sysconf, once
  Notices notices_;
  std::unique_ptr<SystemCollector> system_;
  std::unique_ptr<CgroupCollector> cgroup_;
  std::unique_ptr<ProcessCollector> processes_;
  std::unique_ptr<GpuCollector> gpus_;
  bool live_ = false;  // the root is this host's: the observer's own CPU is recorded
};

}  // namespace dltune::monitor
