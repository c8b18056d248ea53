// The job's groups on a cgroup-v1 host: one <mount>/dltune/<name> per hierarchy that a
// controller the job needs is mounted in (cpu and cpuacct may be one hierarchy or two), and on a
// hybrid host a group in the cgroup2 mount as well, for the job's own pressure files.
// Documentation/admin-guide/cgroup-v1/: cgroups.rst, memory.rst, cpusets.rst, blkio-controller.rst;
// Documentation/scheduler/sched-bwc.rst for cpu.cfs_*.
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "core/text.hpp"
#include "launch/cgroup_internal.hpp"

namespace dltune::launch::detail {

namespace {

// cpu.shares for a v2-style weight (cgroup.hpp: shares = weight * 1024 / 100; 100 -> 1024).
std::uint64_t shares_of(std::uint64_t weight) {
  return weight * 1024 / 100;
}

class V1JobCgroup final : public JobCgroupBase {
 public:
  V1JobCgroup(const host::Root& root, CgroupLimits asked)
      : JobCgroupBase(root), asked_(std::move(asked)) {}

  // controller -> the job's directory in the hierarchy that has it
  std::map<std::string, std::string> dir_of;
  std::optional<std::string> unified_dir;

  [[nodiscard]] Result<CgroupLimits> read_back() const override {
    CgroupLimits got;
    if (const auto cpu = dir("cpu")) {
      if (asked_.cpu_quota_cpus) {
        // cfs_quota_us is -1 for no limit, which is not a number here.
        const auto q = text::to_uint(read_text(root_, *cpu + "/cpu.cfs_quota_us").value_or(""));
        const auto p = read_number(root_, *cpu + "/cpu.cfs_period_us");
        if (q && p && *p > 0)
          got.cpu_quota_cpus = static_cast<double>(*q) / static_cast<double>(*p);
      }
      if (asked_.cpu_weight)
        if (const auto shares = read_number(root_, *cpu + "/cpu.shares"))
          got.cpu_weight =
              static_cast<std::uint64_t>(std::lround(static_cast<double>(*shares) * 100 / 1024));
    }
    if (const auto mem = dir("memory")) {
      const auto limit = read_number(root_, *mem + "/memory.limit_in_bytes");
      if (asked_.memory_bytes) got.memory_bytes = limit;
      if (asked_.memory_swap_bytes) {
        const auto memsw = read_number(root_, *mem + "/memory.memsw.limit_in_bytes");
        if (limit && memsw && *memsw >= *limit) got.memory_swap_bytes = *memsw - *limit;
      }
    }
    if (const auto cs = dir("cpuset")) {
      got.cpus = read_text(root_, *cs + "/cpuset.cpus");
      got.mems = read_text(root_, *cs + "/cpuset.mems");
    }
    if (asked_.io_weight && !blkio_weight_file_.empty())
      got.io_weight = read_number(root_, blkio_weight_file_);
    return got;
  }

  [[nodiscard]] CgroupStats stats() const override {
    CgroupStats s;
    if (const auto acct = dir("cpuacct")) {
      if (const auto ns = read_number(root_, *acct + "/cpuacct.usage"))
        s.cpu_seconds = static_cast<double>(*ns) / 1e9;
    }
    if (!s.cpu_seconds && unified_dir) {
      // Without a cpuacct hierarchy the cgroup2 group still counts CPU time (cgroup-v2.rst
      // cpu.stat).
      if (const auto us = read_key(root_, *unified_dir + "/cpu.stat", "usage_usec"))
        s.cpu_seconds = static_cast<double>(*us) / 1e6;
    }
    if (const auto cpu = dir("cpu")) {
      if (const auto ns = read_key(root_, *cpu + "/cpu.stat", "throttled_time"))
        s.throttled_seconds = static_cast<double>(*ns) / 1e9;
      s.nr_throttled = read_key(root_, *cpu + "/cpu.stat", "nr_throttled");
    }
    if (const auto mem = dir("memory")) {
      s.memory_peak_bytes = read_number(root_, *mem + "/memory.max_usage_in_bytes");
      // memory.rst 10: "oom_kill" in memory.oom_control counts the OOM kills in the group.
      s.oom_kills = read_key(root_, *mem + "/memory.oom_control", "oom_kill");
      s.memory_limit_hits = read_number(root_, *mem + "/memory.failcnt");
    }
    return s;
  }

  [[nodiscard]] Result<std::unique_ptr<JobCgroup>> create_child(
      const std::string& name, const CgroupLimits& limits, const CgroupWriter& write) override {
    if (auto ok = check_child(name, limits); !ok) return tl::unexpected(ok.error());
    const Writes writes(writer_or_root(write));
    auto child = std::make_unique<V1JobCgroup>(root_, limits);
    for (const auto& [controller, d] : dir_of) child->dir_of[controller] = d + "/" + name;
    auto set_up = [&]() -> Result<void> {
      // memory.rst 6: without use_hierarchy (kernels before 5.11 could have it off) the job's
      // limit would not bind its children.
      if (const auto mem = dir("memory")) {
        const std::string file = *mem + "/memory.use_hierarchy";
        if (read_text(root_, file).value_or("1") == "0")
          if (auto ok = writes.checked(file, "1", Expect::kSame); !ok) return ok;
      }
      std::vector<std::string> procs;
      for (const auto& p : procs_) {
        const std::string d = p.substr(0, p.rfind('/'));
        if (unified_dir && d == *unified_dir) continue;
        if (auto ok = child->make_group(d + "/" + name); !ok) return ok;
        procs.push_back(d + "/" + name + "/cgroup.procs");
      }
      if (auto ok = child->write_limits(writes); !ok) return ok;
      for (auto& p : procs) child->add_procs(std::move(p));
      if (unified_dir) {
        const std::string u = *unified_dir + "/" + name;
        child->add_pressure_group(u, child->make_group(u));
      }
      return {};
    };
    if (auto ok = set_up(); !ok) {
      (void)child->remove();
      return tl::unexpected(ok.error());
    }
    return std::unique_ptr<JobCgroup>(std::move(child));
  }

  // The group `dir` in a hybrid host's cgroup2 mount, for the pressure files of its own
  // (docs/measurements.md): without it the job still runs, so a failure (`made`) is a note.
  void add_pressure_group(const std::string& dir, const Result<void>& made) {
    if (!made) {
      add_note("no per-job pressure: " + made.error().message());
      return;
    }
    unified_dir = dir;
    add_procs(dir + "/cgroup.procs");
    if (root_.exists(dir + "/cpu.pressure")) set_pressure(dir);
  }

  Result<void> write_limits(const Writes& writes) {
    const auto& l = asked_;
    if (const auto cpu = dir("cpu")) {
      if (l.cpu_quota_cpus) {
        const auto q = quota_us(*l.cpu_quota_cpus);
        if (!q) return tl::unexpected(q.error());
        if (auto ok = writes.checked(*cpu + "/cpu.cfs_period_us", std::to_string(kCfsPeriodUs),
                                     Expect::kSame);
            !ok)
          return ok;
        if (auto ok = writes.checked(*cpu + "/cpu.cfs_quota_us", std::to_string(*q), Expect::kSame);
            !ok)
          return ok;
      }
      // The kernel clamps cpu.shares to 2..262144 without an error; the read-back would see it.
      if (l.cpu_weight)
        if (auto ok = writes.checked(*cpu + "/cpu.shares", std::to_string(shares_of(*l.cpu_weight)),
                                     Expect::kSame);
            !ok)
          return ok;
    }
    if (const auto mem = dir("memory")) {
      if (l.memory_bytes)
        if (auto ok = writes.checked(*mem + "/memory.limit_in_bytes",
                                     std::to_string(*l.memory_bytes), Expect::kBytes);
            !ok)
          return ok;
      if (l.memory_swap_bytes) {
        // memory.rst 2.4: memsw limits memory plus swap, and must be at least limit_in_bytes.
        const std::string memsw = *mem + "/memory.memsw.limit_in_bytes";
        if (!root_.exists(memsw))
          return fail(
              "cannot limit swap: the kernel accounts no swap for cgroups (no "
              "memory.memsw.limit_in_bytes; swapaccount=1 missing) in",
              *mem);
        if (auto ok = writes.checked(memsw, std::to_string(*l.memory_bytes + *l.memory_swap_bytes),
                                     Expect::kBytes);
            !ok)
          return ok;
      }
    }
    if (const auto cs = dir("cpuset")) {
      // cpusets.rst 2.1: a new cpuset has no CPUs and no nodes, and a task cannot join it until
      // it has both (ENOSPC); unset ones come from the parent.
      const std::string parent = cs->substr(0, cs->rfind('/'));
      const auto cpus = l.cpus ? l.cpus : read_text(root_, parent + "/cpuset.cpus");
      const auto mems = l.mems ? l.mems : read_text(root_, parent + "/cpuset.mems");
      if (auto ok = writes.checked(*cs + "/cpuset.cpus", cpus.value_or(""), Expect::kList); !ok)
        return ok;
      if (auto ok = writes.checked(*cs + "/cpuset.mems", mems.value_or(""), Expect::kList); !ok)
        return ok;
    }
    if (const auto blkio = dir("blkio"); blkio && l.io_weight) {
      // CFQ's blkio.weight (10..1000) is gone from recent kernels; BFQ's blkio.bfq.weight
      // (1..1000) is there when BFQ is built (blkio-controller.rst, block/bfq-cgroup.c).
      std::uint64_t low = 10;
      if (root_.exists(*blkio + "/blkio.weight")) {
        blkio_weight_file_ = *blkio + "/blkio.weight";
      } else if (root_.exists(*blkio + "/blkio.bfq.weight")) {
        blkio_weight_file_ = *blkio + "/blkio.bfq.weight";
        low = 1;
      } else {
        return fail(
            "cannot set an I/O weight: neither blkio.weight nor blkio.bfq.weight exists "
            "(no I/O scheduler with weights, such as BFQ) in",
            *blkio);
      }
      if (*l.io_weight < low || *l.io_weight > 1000)
        return fail(
            fmt::format("an I/O weight in {} must be {} to 1000, not", blkio_weight_file_, low),
            std::to_string(*l.io_weight));
      if (auto ok = writes.checked(blkio_weight_file_, std::to_string(*l.io_weight), Expect::kSame);
          !ok)
        return ok;
    }
    return {};
  }

 private:
  [[nodiscard]] std::optional<std::string> dir(const std::string& controller) const {
    const auto it = dir_of.find(controller);
    if (it == dir_of.end()) return std::nullopt;
    return it->second;
  }

  CgroupLimits asked_;
  std::string blkio_weight_file_;
};

// A cpuset parent needs CPUs and nodes before any child can have them (cpusets.rst 1.4: a
// child's are a subset of its parent's): those of the group above it (the root, or the Slurm
// step's), when the parent has none yet.
Result<void> fill_cpuset_parent(const host::Root& root, const Writes& writes,
                                const std::string& base) {
  for (const char* file : {"/cpuset.cpus", "/cpuset.mems"}) {
    const std::string mine = base + "/dltune" + file;
    if (!read_text(root, mine).value_or("").empty()) continue;
    const auto all = read_text(root, base + file);
    if (!all || all->empty())
      return fail("cannot read the CPUs or nodes of the cpuset group above dltune's:", base + file);
    if (auto ok = writes.checked(mine, *all, Expect::kList); !ok) return ok;
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<JobCgroup>> create_v1(const host::Root& root, const CgroupLayout& layout,
                                             const std::string& name, const CgroupLimits& limits,
                                             const Writes& writes, const CgroupPlace& place) {
  if (auto ok = check_limits(limits); !ok) return tl::unexpected(ok.error());
  if (limits.memory_swap_bytes && !limits.memory_bytes)
    return fail(
        "a swap limit on cgroup v1 needs a memory limit too (memory.memsw.limit_in_bytes "
        "limits memory plus swap)");
  std::map<std::string, std::string> mount_of(layout.v1.begin(), layout.v1.end());
  struct Need {
    const char* controller;
    const char* limit;  // the limit that needs it, or nullptr for statistics only
    const char* loses;  // what is missing without it; nullptr: not created unless a limit needs it
  };
  const Need needs[] = {
      {"memory",
       limits.memory_bytes        ? "a memory limit"
       : limits.memory_swap_bytes ? "a swap limit"
                                  : nullptr,
       "peak memory and OOM statistics"},
      {"cpu",
       limits.cpu_quota_cpus ? "a CPU quota"
       : limits.cpu_weight   ? "a CPU weight"
                             : nullptr,
       "CPU throttling statistics"},
      {"cpuacct", nullptr, "CPU time"},
      {"cpuset", limits.cpus || limits.mems ? "a CPU or NUMA node set" : nullptr, nullptr},
      {"blkio", limits.io_weight ? "an I/O weight" : nullptr, nullptr},
  };
  auto cg = std::make_unique<V1JobCgroup>(root, limits);
  std::vector<std::string> mounts;  // each hierarchy once, in the order above
  for (const auto& n : needs) {
    if (!n.limit && !n.loses) continue;
    const auto it = mount_of.find(n.controller);
    if (it == mount_of.end()) {
      if (n.limit)
        return fail(
            fmt::format("{} needs the {} controller, which no v1 hierarchy has mounted "
                        "(see /proc/self/mountinfo)",
                        n.limit, n.controller));
      cg->add_note(fmt::format("the {} controller is not mounted: no {}", n.controller, n.loses));
      continue;
    }
    cg->dir_of[n.controller] = base_of(place, it->second) + "/dltune/" + name;
    if (std::find(mounts.begin(), mounts.end(), it->second) == mounts.end())
      mounts.push_back(it->second);
  }
  std::vector<std::string> dirs;
  for (const auto& m : mounts) dirs.push_back(base_of(place, m) + "/dltune/" + name);
  if (layout.unified) dirs.push_back(base_of(place, *layout.unified) + "/dltune/" + name);
  if (auto ok = check_absent(root, dirs); !ok) return tl::unexpected(ok.error());

  auto set_up = [&]() -> Result<void> {
    for (const auto& m : mounts) {
      const std::string base = base_of(place, m);
      if (auto ok = cg->make_parent(base + "/dltune", base != m); !ok) return ok;
      if (mount_of.count("cpuset") && mount_of["cpuset"] == m && cg->dir_of.count("cpuset"))
        if (auto ok = fill_cpuset_parent(root, writes, base); !ok) return ok;
      if (auto ok = cg->make_group(base + "/dltune/" + name); !ok) return ok;
    }
    if (auto ok = cg->write_limits(writes); !ok) return ok;
    for (const auto& m : mounts)
      cg->add_procs(base_of(place, m) + "/dltune/" + name + "/cgroup.procs");
    if (layout.unified) {
      const std::string ubase = base_of(place, *layout.unified);
      const std::string u = ubase + "/dltune/" + name;
      auto ok = cg->make_parent(ubase + "/dltune", ubase != *layout.unified);
      if (ok) ok = cg->make_group(u);
      cg->add_pressure_group(u, ok);
    }
    return {};
  };
  if (auto ok = set_up(); !ok) {
    (void)cg->remove();
    return tl::unexpected(ok.error());
  }
  return std::unique_ptr<JobCgroup>(std::move(cg));
}

}  // namespace dltune::launch::detail
