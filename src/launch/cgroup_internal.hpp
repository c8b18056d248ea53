#pragma once
// What the v1 and v2 job cgroups share (cgroup.cpp): the groups created so far and their
// removal, checked writes, and reading counters. Not part of the launch interface.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/cgroup.hpp"

namespace dltune::launch::detail {

// How a value read back is compared with the value written.
enum class Expect {
  kSame,   // the same text ("100000", "default 200")
  kWords,  // the same words, spaces normalised ("20000 100000")
  kBytes,  // the same number of bytes within a page: the kernel rounds memory limits down to
           // pages (Documentation/admin-guide/cgroup-v1/memory.rst, cgroup-v2.rst memory.max)
  kList,   // the same CPU or node list ("0-3" for "0,1,2,3")
};

// Whether `read` is what the kernel reports after `written` was written.
[[nodiscard]] bool same_value(std::string_view written, std::string_view read, Expect expect);

// A writer, and the error for a value the kernel did not take.
class Writes {
 public:
  explicit Writes(CgroupWriter write) : write_(std::move(write)) {}
  // Writes `value` to `path` and checks what it reads back.
  [[nodiscard]] Result<void> checked(const std::string& path, const std::string& value,
                                     Expect expect) const;
  // Writes `value` to `path`; what it reads back.
  [[nodiscard]] Result<std::string> write(const std::string& path, const std::string& value) const {
    return write_(path, value);
  }

 private:
  CgroupWriter write_;
};

// The first number of a file ("52428800\n"); empty when absent or not a number.
[[nodiscard]] std::optional<std::uint64_t> read_number(const host::Root& root,
                                                       const std::string& path);
// The value of `key` in a flat keyed file ("oom_kill 1", cpu.stat, memory.events).
[[nodiscard]] std::optional<std::uint64_t> read_key(const host::Root& root, const std::string& path,
                                                    std::string_view key);
// The trimmed text of a file, empty when absent.
[[nodiscard]] std::optional<std::string> read_text(const host::Root& root, const std::string& path);

// The shared half of a job cgroup: the directories it created, its procs files and notes;
// removal kills what is left and removes the directories, deepest first.
class JobCgroupBase : public JobCgroup {
 public:
  explicit JobCgroupBase(const host::Root& root) : root_(root) {}
  ~JobCgroupBase() override = default;

  [[nodiscard]] std::vector<std::string> directories() const override { return dirs_; }
  [[nodiscard]] std::vector<std::string> procs_files() const override { return procs_; }
  [[nodiscard]] std::optional<std::string> pressure_dir() const override { return pressure_; }
  [[nodiscard]] std::vector<std::string> notes() const override { return notes_; }
  [[nodiscard]] Result<void> remove() override;
  void add_note(std::string note) { notes_.push_back(std::move(note)); }
  void add_procs(std::string file) { procs_.push_back(std::move(file)); }
  void set_pressure(std::string dir) { pressure_ = std::move(dir); }
  // Root's own writer when `write` is empty (create_child).
  [[nodiscard]] CgroupWriter writer_or_root(const CgroupWriter& write) const;

  // mkdir, remembered for removal (so that a failure later removes it).
  [[nodiscard]] Result<void> make_group(const std::string& dir);
  // The shared parent ("dltune") of a hierarchy: created when absent. With `remove_with_job`
  // (inside another manager's group) remove() removes it too, unless another job is in it.
  [[nodiscard]] Result<void> make_parent(const std::string& dir, bool remove_with_job = false);

 protected:
  host::Root root_;                // a copy: the group outlives the caller's Root
  std::vector<std::string> dirs_;  // in creation order
  std::vector<std::string> procs_;
  std::optional<std::string> pressure_;
  std::vector<std::string> notes_;
  std::vector<std::string> own_parents_;  // make_parent(.., true)'s
  bool removed_ = false;
};

// The checks of a child group's name and limits (create_child): a plain name, CPUs and nodes only.
[[nodiscard]] Result<void> check_child(const std::string& name, const CgroupLimits& limits);

// Fails when a group of that name exists in any of `dirs`.
[[nodiscard]] Result<void> check_absent(const host::Root& root,
                                        const std::vector<std::string>& dirs);

// The group dltune's parent goes in for the hierarchy mounted at `mount`: the one `place` nests
// it in, or the mount point itself.
[[nodiscard]] std::string base_of(const CgroupPlace& place, const std::string& mount);

[[nodiscard]] Result<std::unique_ptr<JobCgroup>> create_v1(
    const host::Root& root, const CgroupLayout& layout, const std::string& name,
    const CgroupLimits& limits, const Writes& writes, const CgroupPlace& place);
[[nodiscard]] Result<std::unique_ptr<JobCgroup>> create_v2(
    const host::Root& root, const CgroupLayout& layout, const std::string& name,
    const CgroupLimits& limits, const Writes& writes, const CgroupPlace& place);

// The CFS period dltune uses, 100 ms (Documentation/scheduler/sched-bwc.rst: the default).
inline constexpr std::uint64_t kCfsPeriodUs = 100000;
// The checks both versions share, before anything is created: a quota of at least 1 ms per
// period, a CPU weight of 1..10000, memory above 0, CPU and node lists that parse.
[[nodiscard]] Result<void> check_limits(const CgroupLimits& limits);
// Quota in µs per period for `cpus` CPUs; the kernel's minimum is 1 ms.
[[nodiscard]] Result<std::uint64_t> quota_us(double cpus);

}  // namespace dltune::launch::detail
