// The job cgroup's shared half: where the hierarchies are, names, checked writes and removal.
// The v1 and v2 specifics are in cgroup_v1.cpp and cgroup_v2.cpp; attach_self in attach.cpp.
#include "launch/cgroup.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "launch/cgroup_internal.hpp"

namespace dltune::launch {

namespace {

// How long remove() waits for killed processes to leave and for rmdir to succeed.
constexpr auto kRemoveWait = std::chrono::seconds(5);
constexpr auto kRemovePoll = std::chrono::milliseconds(10);

}  // namespace

Result<std::unique_ptr<JobCgroup>> create_job_cgroup(
    const host::Root& root, const CgroupLayout& layout, const std::string& name,
    const CgroupLimits& limits, const CgroupWriter& write, const CgroupPlace& place) {
  if (auto ok = host::check_cgroup_name(name); !ok) return tl::unexpected(ok.error());
  const detail::Writes writes(write);
  if (layout.version == "v2") return detail::create_v2(root, layout, name, limits, writes, place);
  if (layout.version == "v1") return detail::create_v1(root, layout, name, limits, writes, place);
  return fail("unknown cgroup version", "'" + layout.version + "'");
}

Result<std::unique_ptr<JobCgroup>> create_job_cgroup(const host::Root& root,
                                                     const CgroupLayout& layout,
                                                     const std::string& name,
                                                     const CgroupLimits& limits,
                                                     const CgroupPlace& place) {
  return create_job_cgroup(
      root, layout, name, limits,
      [&root](const std::string& path, const std::string& value) {
        return root.write_virtual(path, value);
      },
      place);
}

namespace detail {

bool same_value(std::string_view written, std::string_view read, Expect expect) {
  read = text::trim(read);
  switch (expect) {
    case Expect::kSame:
      return read == text::trim(written);
    case Expect::kWords:
      return text::normalise_spaces(read) == text::normalise_spaces(written);
    case Expect::kBytes: {
      const auto w = text::to_uint(text::trim(written));
      const auto r = text::to_uint(read);
      if (!w || !r) return false;
      const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
      return (*w > *r ? *w - *r : *r - *w) < page;
    }
    case Expect::kList: {
      const auto w = text::parse_cpu_list(text::trim(written));
      const auto r = text::parse_cpu_list(read);
      return w && r && *w == *r;
    }
  }
  return false;
}

Result<void> Writes::checked(const std::string& path, const std::string& value,
                             Expect expect) const {
  auto back = write_(path, value);
  if (!back) return tl::unexpected(back.error());
  // Some files (io.weight) read back more lines than were written: the first one is the value.
  const auto lines = text::lines(*back);
  const std::string_view first = lines.empty() ? std::string_view() : lines.front();
  if (!same_value(value, first, expect))
    return fail(fmt::format("the kernel did not take the value: wrote '{}', read back '{}' from",
                            value, text::trim(first)),
                path);
  return {};
}

std::optional<std::string> read_text(const host::Root& root, const std::string& path) {
  auto t = root.read(path, 65536);
  if (!t || !*t) return std::nullopt;
  return std::string(text::trim(**t));
}

std::optional<std::uint64_t> read_number(const host::Root& root, const std::string& path) {
  const auto t = read_text(root, path);
  if (!t) return std::nullopt;
  const auto f = text::fields(*t);
  return f.empty() ? std::nullopt : text::to_uint(f[0]);
}

std::optional<std::uint64_t> read_key(const host::Root& root, const std::string& path,
                                      std::string_view key) {
  const auto t = read_text(root, path);
  if (!t) return std::nullopt;
  for (const auto line : text::lines(*t)) {
    const auto f = text::fields(line);
    if (f.size() >= 2 && f[0] == key) return text::to_uint(f[1]);
  }
  return std::nullopt;
}

Result<void> check_absent(const host::Root& root, const std::vector<std::string>& dirs) {
  for (const auto& d : dirs)
    if (root.exists(d)) return fail("a cgroup of that name exists already:", d, EEXIST);
  return {};
}

Result<std::uint64_t> quota_us(double cpus) {
  if (!(cpus > 0) || cpus > 1e6)
    return fail("a CPU quota must be a positive number of CPUs, not", fmt::format("{}", cpus));
  const auto q = static_cast<std::uint64_t>(cpus * static_cast<double>(kCfsPeriodUs) + 0.5);
  // sched-bwc.rst: "the minimum quota allowed for the quota or period is 1ms".
  if (q < 1000)
    return fail("a CPU quota must be at least 0.01 CPU (1 ms per 100 ms), not",
                fmt::format("{}", cpus));
  return q;
}

Result<void> check_limits(const CgroupLimits& limits) {
  if (limits.cpu_quota_cpus)
    if (auto q = quota_us(*limits.cpu_quota_cpus); !q) return tl::unexpected(q.error());
  if (limits.cpu_weight && (*limits.cpu_weight < 1 || *limits.cpu_weight > 10000))
    return fail("a CPU weight must be 1 to 10000, not", std::to_string(*limits.cpu_weight));
  if (limits.memory_bytes && *limits.memory_bytes == 0)
    return fail("a memory limit must be above 0 bytes");
  const auto nonempty_list = [](const std::string& s) {
    const auto ids = text::parse_cpu_list(s);
    return ids && !ids->empty();
  };
  if (limits.cpus && !nonempty_list(*limits.cpus))
    return fail("not a CPU list (\"0-3,8\"):", "'" + *limits.cpus + "'");
  if (limits.mems && !nonempty_list(*limits.mems))
    return fail("not a NUMA node list (\"0-1\"):", "'" + *limits.mems + "'");
  return {};
}

Result<void> JobCgroupBase::make_group(const std::string& dir) {
  auto ok = root_.make_directory(dir);
  if (!ok) {
    if (ok.error().errno_ == EEXIST)
      return fail("a cgroup of that name exists already:", dir, EEXIST);
    return ok;
  }
  dirs_.push_back(dir);
  return {};
}

Result<void> JobCgroupBase::make_parent(const std::string& dir, bool remove_with_job) {
  // Whoever made it, the last job to leave a parent inside another manager's group removes it.
  if (remove_with_job &&
      std::find(own_parents_.begin(), own_parents_.end(), dir) == own_parents_.end())
    own_parents_.push_back(dir);
  if (root_.exists(dir)) return {};
  auto ok = root_.make_directory(dir);
  if (!ok && ok.error().errno_ != EEXIST) return ok;  // another job made it meanwhile: fine
  return {};
}

CgroupWriter JobCgroupBase::writer_or_root(const CgroupWriter& write) const {
  if (write) return write;
  return [root = root_](const std::string& path, const std::string& value) {
    return root.write_virtual(path, value);
  };
}

Result<void> check_child(const std::string& name, const CgroupLimits& limits) {
  if (auto ok = host::check_cgroup_name(name); !ok) return tl::unexpected(ok.error());
  if (limits.cpu_quota_cpus || limits.cpu_weight || limits.memory_bytes ||
      limits.memory_swap_bytes || limits.io_weight)
    return fail("a part of a job gets CPUs and NUMA nodes of its own, no other limit:", name);
  return check_limits(limits);
}

std::string base_of(const CgroupPlace& place, const std::string& mount) {
  const auto it = place.nest.find(mount);
  return it == place.nest.end() ? mount : it->second;
}

Result<void> JobCgroupBase::remove() {
  if (removed_) return {};
  const auto deadline = std::chrono::steady_clock::now() + kRemoveWait;
  // A tree's cgroup.procs hold no real processes: only the live host's are killed.
  if (root_.live()) {
    bool killed_all = false;
    for (bool first = true;; first = false) {
      bool any = false;
      for (const auto& dir : dirs_) {
        // cgroup.kill (v2, kernel 5.14): the whole group at once, forks included.
        const std::string kill_file = dir + "/cgroup.kill";
        if (first && root_.exists(kill_file)) (void)root_.write_control(kill_file, "1");
        const auto procs = read_text(root_, dir + "/cgroup.procs");
        if (!procs) continue;
        for (const auto p : text::fields(*procs)) {
          const auto pid = text::to_int(p);
          if (!pid || *pid <= 1 || *pid == ::getpid()) continue;
          ::kill(static_cast<pid_t>(*pid), SIGKILL);
          any = true;
        }
      }
      if (!any) {
        killed_all = true;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(kRemovePoll);
    }
    if (!killed_all)
      return fail("processes are still in the job's cgroup after SIGKILL and 5 s:",
                  text::join(dirs_, ", "));
  }
  std::optional<Error> first_error;
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    for (;;) {
      auto ok = root_.remove_directory(*it);
      if (ok || ok.error().errno_ == ENOENT) break;
      // EBUSY while the last killed task is still leaving.
      if (ok.error().errno_ != EBUSY || std::chrono::steady_clock::now() > deadline) {
        if (!first_error) first_error = ok.error();
        break;
      }
      std::this_thread::sleep_for(kRemovePoll);
    }
  }
  if (first_error) return tl::unexpected(*first_error);
  // A parent inside another manager's group goes too, unless another job is in it (EBUSY).
  for (const auto& parent : own_parents_) (void)root_.remove_directory(parent);
  removed_ = true;
  return {};
}

}  // namespace detail

}  // namespace dltune::launch
