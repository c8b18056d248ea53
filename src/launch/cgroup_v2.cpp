// The job's group in the unified hierarchy (Documentation/admin-guide/cgroup-v2.rst):
// <mount>/dltune/<name> (or <a Slurm step's group>/dltune/<name>), with cpu, memory, cpuset and io
// enabled for it in the cgroup.subtree_control of the group above dltune's and of dltune's.
#include <cmath>
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"
#include "launch/cgroup_internal.hpp"

namespace dltune::launch::detail {

namespace {

// The words of a controller list ("cpuset cpu io memory"), without a leading '+' (a fixture tree
// reads back what was written; the kernel lists the names alone).
std::set<std::string> controller_words(const std::optional<std::string>& list) {
  std::set<std::string> out;
  if (!list) return out;
  for (auto w : text::fields(*list)) {
    if (w.starts_with('+')) w.remove_prefix(1);
    out.emplace(w);
  }
  return out;
}

// Enables `wanted` for the children of `dir` ("Enabling and Disabling" in cgroup-v2.rst), writing
// only the controllers that are not enabled yet, and checks that the kernel took them.
Result<void> enable(const host::Root& root, const Writes& writes, const std::string& dir,
                    const std::vector<std::string>& wanted) {
  const std::string file = dir + "/cgroup.subtree_control";
  const auto enabled = controller_words(read_text(root, file));
  std::vector<std::string> missing;
  for (const auto& c : wanted)
    if (!enabled.count(c)) missing.push_back("+" + c);
  if (missing.empty()) return {};
  const std::string value = text::join(missing, " ");
  auto back = writes.write(file, value);
  if (!back) return tl::unexpected(back.error());
  const auto now = controller_words(*back);
  for (const auto& c : missing)
    if (!now.count(c.substr(1)))
      return fail(fmt::format("the kernel did not enable the {} controller: wrote '{}', read "
                              "back '{}' from",
                              c.substr(1), value, text::trim(*back)),
                  file);
  return {};
}

class V2JobCgroup final : public JobCgroupBase {
 public:
  V2JobCgroup(const host::Root& root, std::string dir, CgroupLimits asked)
      : JobCgroupBase(root), dir_(std::move(dir)), asked_(std::move(asked)) {}

  [[nodiscard]] Result<CgroupLimits> read_back() const override {
    CgroupLimits got;
    if (asked_.cpu_quota_cpus) {
      // cpu.max: "$MAX $PERIOD", "max" for no limit.
      const auto cpu_max = read_text(root_, dir_ + "/cpu.max").value_or("");
      const auto f = text::fields(cpu_max);
      if (f.size() == 2) {
        const auto q = text::to_uint(f[0]);
        const auto p = text::to_uint(f[1]);
        if (q && p && *p > 0)
          got.cpu_quota_cpus = static_cast<double>(*q) / static_cast<double>(*p);
      }
    }
    if (asked_.cpu_weight) got.cpu_weight = read_number(root_, dir_ + "/cpu.weight");
    if (asked_.memory_bytes) got.memory_bytes = read_number(root_, dir_ + "/memory.max");
    if (asked_.memory_swap_bytes)
      got.memory_swap_bytes = read_number(root_, dir_ + "/memory.swap.max");
    if (asked_.cpus || asked_.mems) {
      got.cpus = read_text(root_, dir_ + "/cpuset.cpus");
      got.mems = read_text(root_, dir_ + "/cpuset.mems");
    }
    if (asked_.io_weight) got.io_weight = read_key(root_, dir_ + "/io.weight", "default");
    return got;
  }

  [[nodiscard]] CgroupStats stats() const override {
    CgroupStats s;
    const std::string cpu_stat = dir_ + "/cpu.stat";
    if (const auto us = read_key(root_, cpu_stat, "usage_usec"))
      s.cpu_seconds = static_cast<double>(*us) / 1e6;
    if (const auto us = read_key(root_, cpu_stat, "throttled_usec"))
      s.throttled_seconds = static_cast<double>(*us) / 1e6;
    s.nr_throttled = read_key(root_, cpu_stat, "nr_throttled");
    s.memory_peak_bytes = read_number(root_, dir_ + "/memory.peak");  // kernel 5.19 and later
    s.oom_kills = read_key(root_, dir_ + "/memory.events", "oom_kill");
    s.memory_limit_hits = read_key(root_, dir_ + "/memory.events", "max");
    return s;
  }

  [[nodiscard]] Result<std::unique_ptr<JobCgroup>> create_child(
      const std::string& name, const CgroupLimits& limits, const CgroupWriter& write) override {
    if (auto ok = check_child(name, limits); !ok) return tl::unexpected(ok.error());
    const Writes writes(writer_or_root(write));
    // The controllers this group has, for its children too: their own CPUs (cpuset) and their
    // own CPU time and memory (cpu, memory). The group holds no process yet ("no internal
    // processes", cgroup-v2.rst).
    const auto offered = controller_words(read_text(root_, dir_ + "/cgroup.controllers"));
    std::vector<std::string> controllers;
    for (const char* c : {"cpuset", "cpu", "memory"})
      if (offered.count(c)) controllers.emplace_back(c);
    if ((limits.cpus || limits.mems) && !offered.count("cpuset"))
      return fail("CPUs of its own for " + name + " need the cpuset controller, not in",
                  dir_ + "/cgroup.controllers");
    auto child = std::make_unique<V2JobCgroup>(root_, dir_ + "/" + name, limits);
    auto set_up = [&]() -> Result<void> {
      if (auto ok = enable(root_, writes, dir_, controllers); !ok) return ok;
      if (auto ok = child->make_group(child->dir_); !ok) return ok;
      if (limits.cpus)
        if (auto ok = writes.checked(child->dir_ + "/cpuset.cpus", *limits.cpus, Expect::kList);
            !ok)
          return ok;
      if (limits.mems)
        if (auto ok = writes.checked(child->dir_ + "/cpuset.mems", *limits.mems, Expect::kList);
            !ok)
          return ok;
      child->add_procs(child->dir_ + "/cgroup.procs");
      if (root_.exists(child->dir_ + "/cpu.pressure")) child->set_pressure(child->dir_);
      return {};
    };
    if (auto ok = set_up(); !ok) {
      (void)child->remove();
      return tl::unexpected(ok.error());
    }
    return std::unique_ptr<JobCgroup>(std::move(child));
  }

  // `nested`: `base` is another manager's group (a Slurm step's), not the mount point.
  Result<void> set_up(const std::string& base, bool nested,
                      const std::vector<std::string>& controllers, const Writes& writes) {
    const std::string parent = base + "/dltune";
    if (auto ok = make_parent(parent, nested); !ok) return ok;
    if (auto ok = enable(root_, writes, base, controllers); !ok) return ok;
    if (auto ok = enable(root_, writes, parent, controllers); !ok) return ok;
    if (auto ok = make_group(dir_); !ok) return ok;
    const auto& l = asked_;
    if (l.cpu_quota_cpus) {
      const auto q = quota_us(*l.cpu_quota_cpus);
      if (!q) return tl::unexpected(q.error());
      if (auto ok = writes.checked(dir_ + "/cpu.max", fmt::format("{} {}", *q, kCfsPeriodUs),
                                   Expect::kWords);
          !ok)
        return ok;
    }
    if (l.cpu_weight)
      if (auto ok =
              writes.checked(dir_ + "/cpu.weight", std::to_string(*l.cpu_weight), Expect::kSame);
          !ok)
        return ok;
    if (l.memory_bytes)
      if (auto ok =
              writes.checked(dir_ + "/memory.max", std::to_string(*l.memory_bytes), Expect::kBytes);
          !ok)
        return ok;
    if (l.memory_swap_bytes) {
      if (!root_.exists(dir_ + "/memory.swap.max"))
        return fail(
            "cannot limit swap: the kernel accounts no swap for cgroups (no "
            "memory.swap.max; CONFIG_MEMCG_SWAP or swapaccount=1 missing) in",
            dir_);
      if (auto ok = writes.checked(dir_ + "/memory.swap.max", std::to_string(*l.memory_swap_bytes),
                                   Expect::kBytes);
          !ok)
        return ok;
    }
    if (l.cpus)
      if (auto ok = writes.checked(dir_ + "/cpuset.cpus", *l.cpus, Expect::kList); !ok) return ok;
    if (l.mems)
      if (auto ok = writes.checked(dir_ + "/cpuset.mems", *l.mems, Expect::kList); !ok) return ok;
    if (l.io_weight)
      if (auto ok = writes.checked(dir_ + "/io.weight", fmt::format("default {}", *l.io_weight),
                                   Expect::kWords);
          !ok)
        return ok;
    procs_ = {dir_ + "/cgroup.procs"};
    if (root_.exists(dir_ + "/cpu.pressure")) pressure_ = dir_;
    return {};
  }

 private:
  std::string dir_;
  CgroupLimits asked_;
};

}  // namespace

Result<std::unique_ptr<JobCgroup>> create_v2(const host::Root& root, const CgroupLayout& layout,
                                             const std::string& name, const CgroupLimits& limits,
                                             const Writes& writes, const CgroupPlace& place) {
  if (!layout.unified) return fail("cgroup v2 without a cgroup2 mount in the layout");
  if (auto ok = check_limits(limits); !ok) return tl::unexpected(ok.error());
  if (limits.io_weight && (*limits.io_weight < 1 || *limits.io_weight > 10000))
    return fail("an io.weight must be 1 to 10000, not", std::to_string(*limits.io_weight));
  const std::string base = base_of(place, *layout.unified);
  const std::string dir = base + "/dltune/" + name;
  if (auto ok = check_absent(root, {dir}); !ok) return tl::unexpected(ok.error());

  // Which controllers the job needs, and whether this (maybe delegated) tree offers them.
  const std::string offered_file = base + "/cgroup.controllers";
  const auto offered = controller_words(read_text(root, offered_file));
  struct Need {
    const char* controller;
    const char* limit;  // the limit that needs it, or nullptr for statistics only
    const char* loses;  // what is missing without it
  };
  const Need needs[] = {
      {"cpu",
       limits.cpu_quota_cpus ? "a CPU quota"
       : limits.cpu_weight   ? "a CPU weight"
                             : nullptr,
       "CPU throttling statistics"},
      {"memory",
       limits.memory_bytes        ? "a memory limit"
       : limits.memory_swap_bytes ? "a swap limit"
                                  : nullptr,
       "peak memory and OOM statistics"},
      {"cpuset", limits.cpus || limits.mems ? "a CPU or NUMA node set" : nullptr, nullptr},
      {"io", limits.io_weight ? "an I/O weight" : nullptr, nullptr},
  };
  auto cg = std::make_unique<V2JobCgroup>(root, dir, limits);
  std::vector<std::string> controllers;
  for (const auto& n : needs) {
    if (!n.limit && !n.loses) continue;
    if (offered.count(n.controller)) {
      controllers.emplace_back(n.controller);
    } else if (n.limit) {
      return fail(fmt::format("{} needs the {} controller, which is not available (a delegated "
                              "subtree without it?) in",
                              n.limit, n.controller),
                  offered_file);
    } else {
      cg->add_note(fmt::format("the {} controller is not available in {}: no {}", n.controller,
                               offered_file, n.loses));
    }
  }
  if (auto ok = cg->set_up(base, base != *layout.unified, controllers, writes); !ok) {
    (void)cg->remove();
    return tl::unexpected(ok.error());
  }
  return std::unique_ptr<JobCgroup>(std::move(cg));
}

}  // namespace dltune::launch::detail
