#pragma once
// The job's own cgroup (docs/architecture.md "run"): created before the job starts, limits
// written and read back, the job's child attached between fork and exec, statistics read at the
// end, removed afterwards. cgroup v2 (the unified hierarchy) and v1 (one directory per
// hierarchy: cpu, cpuacct, cpuset, memory, blkio, each its own mount on some hosts).
//
// All files go through host::Root (writes only under dltune's own groups: see
// Root::is_writable_setting), so fixture roots show exactly what would be written.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/cgroup.hpp"
#include "host/root.hpp"

namespace dltune::launch {

using host::CgroupLayout;

struct CgroupLimits {
  std::optional<double> cpu_quota_cpus;  // 2.5 = two and a half CPUs (cfs quota/period)
  std::optional<std::uint64_t>
      cpu_weight;  // v2 cpu.weight 1..10000; v1 cpu.shares = weight*1024/100
  std::optional<std::uint64_t> memory_bytes;       // memory.max / memory.limit_in_bytes
  std::optional<std::uint64_t> memory_swap_bytes;  // swap on top: memory.swap.max / memsw - memory
  std::optional<std::string> cpus;                 // cpuset.cpus "0-7,16-23"
  std::optional<std::string> mems;                 // cpuset.mems "0"
  // The number is written as it is, so its range is the version's (v1 with BFQ: blkio.bfq.weight
  // 1..1000); unlike cpu_weight it is not converted.
  std::optional<std::uint64_t> io_weight;  // v2 io.weight 1..10000; v1 blkio.weight 10..1000
};

// At the end of the job (or at any time while it runs).
struct CgroupStats {
  std::optional<double> cpu_seconds;        // cpuacct.usage / cpu.stat usage_usec
  std::optional<double> throttled_seconds;  // cpu.stat throttled_time / throttled_usec
  std::optional<std::uint64_t> nr_throttled;
  std::optional<std::uint64_t> memory_peak_bytes;  // memory.max_usage_in_bytes / memory.peak
  std::optional<std::uint64_t> oom_kills;          // memory.oom_control oom_kill / memory.events
  std::optional<std::uint64_t> memory_limit_hits;  // memory.failcnt / memory.events max
};

// The write of one control file, returning what the file reads back afterwards. The default is
// Root::write_virtual. The kernel rounds, clamps and normalises what it is given; a fixture tree
// has no kernel, so tests stand in for it here (to see a value the "kernel" did not take).
using CgroupWriter =
    std::function<Result<std::string>(const std::string& path, const std::string& value)>;

class JobCgroup {
 public:
  virtual ~JobCgroup() = default;
  // Every directory created, one per hierarchy (v1) or one (v2), plus the pressure-only group in
  // a hybrid host's cgroup2 mount (per-job PSI, docs/measurements.md).
  [[nodiscard]] virtual std::vector<std::string> directories() const = 0;
  // The cgroup.procs files the child writes its PID into (host paths), in order. The child
  // writes them itself between fork and exec (attach_self), so no instruction of the job runs
  // outside the limits.
  [[nodiscard]] virtual std::vector<std::string> procs_files() const = 0;
  // The limits as the kernel reports them after writing (for "verified" in the summary).
  [[nodiscard]] virtual Result<CgroupLimits> read_back() const = 0;
  [[nodiscard]] virtual CgroupStats stats() const = 0;
  // The pressure files of the job's group (cpu.pressure, memory.pressure, io.pressure), if any.
  [[nodiscard]] virtual std::optional<std::string> pressure_dir() const = 0;
  // Kills what is left in the groups (SIGKILL) and removes every directory, deepest first.
  // Safe to call twice.
  [[nodiscard]] virtual Result<void> remove() = 0;
  // What could not be set up without failing the job: a controller that is not mounted or not
  // available, so that the summary lacks its statistics ("no cpuacct hierarchy: no CPU time").
  [[nodiscard]] virtual std::vector<std::string> notes() const { return {}; }
  // A group inside this one, in each of its hierarchies, for one part of the job (a rank of
  // `run --nproc N`, named "rank-N"): its own CPUs and NUMA nodes (`limits.cpus`, `.mems`; the
  // other limits are the job's, which bind it from above), its own statistics and procs files.
  // Written through `write` (a fixture tree's stand-in for the kernel; empty: Root's). Call it
  // before any process is in this group (v2 enables controllers for the children here), and
  // remove the children before this group.
  [[nodiscard]] virtual Result<std::unique_ptr<JobCgroup>> create_child(
      const std::string& name, const CgroupLimits& limits, const CgroupWriter& write) = 0;
};

// Where the job's groups go. By default in dltune's parent group right below each hierarchy's
// mount point (<mount>/dltune/<name>), a parent that stays for the next job. `nest` names, per
// mount point (a v1 hierarchy's or the cgroup2 mount), another group to put the parent inside:
// a Slurm step's (launch/slurm_step.hpp). There the parent ("<group>/dltune") goes with the job
// when no other job is in it, since Slurm removes the step's groups when the step ends, which a
// group left inside would stop.
struct CgroupPlace {
  std::map<std::string, std::string> nest;  // mount point -> the host directory of the group
};

// Creates the job's groups named `name` (a single path component: [A-Za-z0-9_.-]+) under
// dltune's parent group ("dltune" in each hierarchy, or in the group `place` names there),
// writes `limits`, and reads each back:
// a value the kernel did not take is an error naming the file, the value written and the value
// read (nothing is left behind on error). A group of that name that exists already is an error.
[[nodiscard]] Result<std::unique_ptr<JobCgroup>> create_job_cgroup(const host::Root& root,
                                                                   const CgroupLayout& layout,
                                                                   const std::string& name,
                                                                   const CgroupLimits& limits,
                                                                   const CgroupPlace& place = {});

[[nodiscard]] Result<std::unique_ptr<JobCgroup>> create_job_cgroup(
    const host::Root& root, const CgroupLayout& layout, const std::string& name,
    const CgroupLimits& limits, const CgroupWriter& write, const CgroupPlace& place = {});

// For the child between fork and exec: writes the calling process's PID into each of
// `procs_files` (on the live host), with open/write/close only (async-signal-safe). Returns 0,
// or the errno of the first failure.
int attach_self(const std::vector<std::string>& procs_files);

}  // namespace dltune::launch
