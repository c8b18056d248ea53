#include "host/cgroup.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "host/parse/proc.hpp"

namespace dltune::host {

namespace {

// The v1 controllers (Documentation/admin-guide/cgroup-v1/cgroups.rst); the other words in a v1
// mount's super options are options ("rw", "name=systemd", "clone_children", "noprefix"...).
bool is_v1_controller(std::string_view word) {
  static const std::set<std::string_view> kControllers = {
      "cpu",     "cpuacct",  "cpuset", "memory",     "blkio",   "devices", "freezer",
      "net_cls", "net_prio", "pids",   "perf_event", "hugetlb", "rdma",    "misc"};
  return kControllers.count(word) != 0;
}

// The hierarchy whose /dltune lists the jobs on a v1 host: memory first (every job has a memory
// group), else the CPU accounting ones.
std::optional<std::string> v1_mount(const CgroupLayout& layout) {
  for (const char* want : {"memory", "cpuacct", "cpu"})
    for (const auto& [controller, mount] : layout.v1)
      if (controller == want) return mount;
  return std::nullopt;
}

}  // namespace

Result<CgroupLayout> cgroup_layout(const Root& root) {
  constexpr const char* kMountinfo = "/proc/self/mountinfo";
  auto text = root.read(kMountinfo);
  if (!text) return tl::unexpected(text.error());
  if (!*text) return fail("cannot find the mounted cgroups: no", kMountinfo, ENOENT);
  auto mounts = parse::mountinfo(**text);
  if (!mounts)
    return fail(mounts.error().what, std::string(kMountinfo) + ": " + mounts.error().input);
  CgroupLayout layout;
  for (const auto& m : *mounts) {
    if (m.fstype == "cgroup2") {
      if (!layout.unified) layout.unified = m.mount_point;
      continue;
    }
    if (m.fstype != "cgroup") continue;
    for (const auto& o : m.super_options) {
      if (!is_v1_controller(o)) continue;
      const bool known = std::any_of(layout.v1.begin(), layout.v1.end(),
                                     [&](const auto& p) { return p.first == o; });
      if (!known) layout.v1.emplace_back(o, m.mount_point);  // a second mount: the same tree
    }
  }
  if (!layout.v1.empty())
    layout.version = "v1";
  else if (layout.unified)
    layout.version = "v2";
  else
    return fail("no cgroup file system is mounted (neither cgroup2 nor a v1 controller) in",
                kMountinfo);
  return layout;
}

bool is_plain_cgroup_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
         });
}

Result<void> check_cgroup_name(const std::string& name) {
  if (!is_plain_cgroup_name(name) || name.size() > 64)
    return fail("a cgroup name is 1 to 64 of A-Z a-z 0-9 _ . - (and not '.' or '..'), not",
                "'" + name + "'");
  return {};
}

Result<std::vector<std::string>> discover_job_groups(const Root& root, const CgroupLayout& layout,
                                                     std::map<std::string, bool>* is_group) {
  const auto mount = layout.version == "v2" ? layout.unified : v1_mount(layout);
  std::vector<std::string> out;
  if (!mount) return out;
  const std::string parent = *mount + "/dltune";
  auto names = root.list(parent);
  if (!names) return tl::unexpected(names.error());
  if (!*names) return out;
  std::map<std::string, bool> seen;
  for (const auto& name : **names) {
    // The control files (cgroup.procs, memory.max, tasks) are files; a group is a directory.
    if (!check_cgroup_name(name)) continue;
    std::optional<bool> group;
    if (is_group != nullptr)
      if (const auto it = is_group->find(name); it != is_group->end()) group = it->second;
    if (!group) {
      auto info = root.stat(parent + "/" + name);
      if (!info || !*info) continue;  // gone meanwhile: not remembered
      group = (*info)->kind == Kind::kDirectory;
    }
    seen.emplace(name, *group);
    if (*group) out.push_back("/dltune/" + name);
  }
  if (is_group) *is_group = std::move(seen);
  return out;
}

namespace {

// Lists groups, each name's kind (group or control file) looked up once: what `known` says
// from the last discovery, else a stat. `seen` is what this discovery found, for the next.
struct Groups {
  const Root& root;
  const std::map<std::string, bool>* known;
  std::map<std::string, bool> seen;

  // The names in `dir` that are directories (groups), sorted; none when `dir` is not there.
  std::vector<std::string> below(const std::string& dir) {
    std::vector<std::string> out;
    auto names = root.list(dir);
    if (!names || !*names) return out;
    for (const auto& name : **names) {
      // Control files (cgroup.procs, memory.max) have a dot; of the groups looked for, only
      // slurm_NODE and NODE_slurmstepd.scope may.
      // Kubernetes' systemd driver names its slices kubepods*.slice.
      if (name.find('.') != std::string::npos && name.rfind("slurm", 0) != 0 &&
          !name.ends_with("slurmstepd.scope") && name.rfind("kubepods", 0) != 0)
        continue;
      const std::string path = dir + "/" + name;
      std::optional<bool> group;
      if (known != nullptr)
        if (const auto it = known->find(path); it != known->end()) group = it->second;
      if (!group) {
        auto info = root.stat(path);
        if (!info || !*info) continue;  // gone meanwhile: not remembered
        group = (*info)->kind == Kind::kDirectory;
      }
      seen.emplace(path, *group);
      if (*group) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

// "job_42" -> "42"; empty for any other name, and for a number past 32 bits (a uid and a
// Slurm job id, federated ones too, are 32-bit).
std::string number_after(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.size() > prefix.size() + 10 ||
      name.compare(0, prefix.size(), prefix) != 0)
    return {};
  const auto rest = name.substr(prefix.size());
  return std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                 std::stoull(rest) <= 0xFFFFFFFFull
             ? rest
             : std::string();
}

// The uid that owns the first process found in `dir` or a group below it (v2 has no uid level).
std::optional<unsigned> owner_below(Groups& groups, const std::string& dir, int depth = 0) {
  const Root& root = groups.root;
  if (auto procs = root.lines(dir + "/cgroup.procs"); procs && *procs)
    for (const auto& pid : **procs) {
      auto status = root.lines("/proc/" + pid + "/status");
      if (!status || !*status) continue;
      for (const auto& line : **status)
        if (line.rfind("Uid:", 0) == 0) {
          unsigned uid = 0;
          if (std::sscanf(line.c_str() + 4, "%u", &uid) == 1) return uid;
        }
    }
  if (depth >= 4) return std::nullopt;
  for (const auto& sub : groups.below(dir))
    if (auto uid = owner_below(groups, dir + "/" + sub, depth + 1)) return uid;
  return std::nullopt;
}

void add_job(Groups& groups, const std::string& mount, const std::string& path,
             const std::string& id, std::optional<unsigned> uid, std::vector<SlurmJobGroup>& out) {
  SlurmJobGroup job{path, id, uid, {}, 0, mount + path};
  if (auto info = groups.root.stat(job.dir); info && *info) job.inode = (*info)->inode;
  for (const auto& sub : groups.below(mount + path))
    if (sub.rfind("step_", 0) == 0) job.steps.push_back(sub.substr(5));
  if (!job.uid) job.uid = owner_below(groups, mount + path);
  out.push_back(std::move(job));
}

}  // namespace

Result<std::vector<SlurmJobGroup>> discover_slurm_jobs(const Root& root, const CgroupLayout& layout,
                                                       std::map<std::string, bool>* is_group) {
  std::vector<SlurmJobGroup> out;
  Groups groups{root, is_group, {}};
  if (layout.version == "v2") {
    if (!layout.unified) return out;
    const std::string mount = *layout.unified;
    // The scope systemd gives slurmstepd, or the same name at the top without systemd.
    for (const std::string parent : {"", "/system.slice"})
      for (const auto& scope : groups.below(mount + parent)) {
        if (!scope.ends_with("slurmstepd.scope")) continue;
        const std::string base = parent + "/" + scope;
        for (const auto& name : groups.below(mount + base))
          if (const auto id = number_after(name, "job_"); !id.empty())
            add_job(groups, mount, base + "/" + name, id, std::nullopt, out);
      }
  } else {
    std::optional<std::string> mount;
    for (const char* want : {"memory", "cpuset", "freezer", "cpuacct"})
      for (const auto& [controller, m] : layout.v1)
        if (!mount && controller == want) mount = m;
    if (!mount) return out;
    for (const auto& top : groups.below(*mount)) {
      if (top != "slurm" && top.rfind("slurm_", 0) != 0) continue;
      for (const auto& user : groups.below(*mount + "/" + top)) {
        const auto uid = number_after(user, "uid_");
        if (uid.empty()) continue;
        const std::string base = "/" + top + "/" + user;
        for (const auto& name : groups.below(*mount + base))
          if (const auto id = number_after(name, "job_"); !id.empty())
            add_job(groups, *mount, base + "/" + name, id, static_cast<unsigned>(std::stoull(uid)),
                    out);
      }
    }
  }
  if (is_group != nullptr) *is_group = std::move(groups.seen);
  std::sort(out.begin(), out.end(), [](const SlurmJobGroup& a, const SlurmJobGroup& b) {
    return a.job_id.size() != b.job_id.size() ? a.job_id.size() < b.job_id.size()
                                              : a.job_id < b.job_id;
  });
  return out;
}

namespace {

// A pod's UID from its group's name: "pod<UID>" (cgroupfs driver) or
// "kubepods[-QOS]-pod<UID with '_' for '-'>.slice" (systemd driver); empty for any other name.
// A UID is hex digits and dashes (a mirror pod's is its config's hash, without dashes).
std::string pod_uid_of(const std::string& name, const std::string& qos) {
  std::string uid;
  if (name.rfind("pod", 0) == 0) {
    uid = name.substr(3);
  } else {
    const std::string prefix = "kubepods-" + (qos.empty() ? "" : qos + "-") + "pod";
    if (name.rfind(prefix, 0) != 0 || !name.ends_with(".slice")) return {};
    uid = name.substr(prefix.size(), name.size() - prefix.size() - 6);
    std::replace(uid.begin(), uid.end(), '_', '-');
  }
  if (uid.empty() || uid.size() > 64 || !std::all_of(uid.begin(), uid.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
               c == '-';
      }))
    return {};
  return uid;
}

}  // namespace

Result<std::vector<PodGroup>> discover_pod_groups(const Root& root, const CgroupLayout& layout,
                                                  std::map<std::string, bool>* is_group) {
  std::vector<PodGroup> out;
  Groups groups{root, is_group, {}};
  std::optional<std::string> mount = layout.unified;
  if (layout.version != "v2") {
    mount.reset();
    for (const char* want : {"memory", "cpu", "cpuacct", "cpuset"})
      for (const auto& [controller, m] : layout.v1)
        if (!mount && controller == want) mount = m;
  }
  if (!mount) return out;
  // Guaranteed pods sit in the root group itself, Burstable and BestEffort pods in theirs.
  for (const auto& [top, slices] :
       {std::pair<std::string, bool>{"kubepods", false}, {"kubepods.slice", true}}) {
    const std::string base = "/" + top;
    const bool systemd = slices;  // (a structured binding, not captured by clang 14)
    const auto below = groups.below(*mount + base);
    if (below.empty()) continue;
    auto add = [&](const std::string& dir, const std::string& qos, const std::string& name) {
      if (const auto uid = pod_uid_of(name, systemd ? qos : ""); !uid.empty())
        out.push_back({dir + "/" + name, uid, qos.empty() ? "guaranteed" : qos});
    };
    for (const auto& name : below) {
      for (const std::string qos : {"burstable", "besteffort"}) {
        const std::string qos_group = systemd ? "kubepods-" + qos + ".slice" : qos;
        if (name != qos_group) continue;
        for (const auto& pod : groups.below(*mount + base + "/" + name))
          add(base + "/" + name, qos, pod);
      }
      add(base, "", name);
    }
  }
  if (is_group != nullptr) *is_group = std::move(groups.seen);
  std::sort(out.begin(), out.end(),
            [](const PodGroup& a, const PodGroup& b) { return a.path < b.path; });
  return out;
}

std::optional<SlurmStepPath> slurm_step_of(std::string_view cgroup_path) {
  if (!cgroup_path.starts_with('/')) return std::nullopt;
  std::vector<std::string> c;
  for (std::size_t at = 1; at <= cgroup_path.size();) {
    const auto slash = std::min(cgroup_path.find('/', at), cgroup_path.size());
    c.emplace_back(cgroup_path.substr(at, slash - at));
    at = slash + 1;
  }
  if (c.size() == 1 && c[0].empty()) return std::nullopt;  // "/"
  if (!std::all_of(c.begin(), c.end(), [](const std::string& n) {
        return n.size() <= 255 && is_plain_cgroup_name(n);  // NAME_MAX
      }))
    return std::nullopt;
  for (std::size_t j = 1; j + 1 < c.size(); ++j) {
    const auto id = number_after(c[j], "job_");
    if (id.empty() || c[j + 1].size() <= 5 || c[j + 1].rfind("step_", 0) != 0) continue;
    // Slurm's own root above the job: slurm, slurm_NODE (v1), ...slurmstepd.scope (v2).
    const bool slurms = std::any_of(
        c.begin(), c.begin() + static_cast<std::ptrdiff_t>(j), [](const std::string& n) {
          return n == "slurm" || n.rfind("slurm_", 0) == 0 || n.ends_with("slurmstepd.scope");
        });
    if (!slurms) return std::nullopt;
    SlurmStepPath out{id, c[j + 1].substr(5), "", ""};
    for (std::size_t i = 0; i <= j + 1; ++i) out.step_group += "/" + c[i];
    for (std::size_t i = j + 2; i < c.size(); ++i)
      out.below += (out.below.empty() ? "" : "/") + c[i];
    return out;
  }
  return std::nullopt;
}

}  // namespace dltune::host
