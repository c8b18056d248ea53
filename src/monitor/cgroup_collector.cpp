// CgroupCollector: one group's control files, opened once and pread at every sample.
// v2: one directory (Documentation/admin-guide/cgroup-v2.rst). v1: the same path in the cpu,
// cpuacct and memory hierarchies (cgroup-v1/{cpuacct,memory}.rst, scheduler/sched-bwc.rst), and
// on a hybrid host the group of that path in the cgroup2 mount for the job's own pressure files
// (`dltune run` makes it; docs/measurements.md "Caveats").
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/text.hpp"
#include "host/cgroup.hpp"
#include "monitor/parse_system.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

namespace {

enum Id : std::size_t {
  kCpuStat,       // v2 cpu.stat (usage too) / v1 cpu.stat (throttling only)
  kCpuMax,        // v2 cpu.max
  kCfsQuota,      // v1 cpu.cfs_quota_us
  kCfsPeriod,     // v1 cpu.cfs_period_us
  kCpuacctUsage,  // v1 cpuacct.usage (ns)
  kCpuacctStat,   // v1 cpuacct.stat (USER_HZ ticks)
  kMemCurrent,    // memory.current / memory.usage_in_bytes
  kMemMax,        // memory.max / memory.limit_in_bytes
  kMemPeak,       // memory.peak / memory.max_usage_in_bytes
  kSwapCurrent,   // v2 memory.swap.current
  kMemStat,       // memory.stat
  kMemEvents,     // v2 memory.events
  kFailcnt,       // v1 memory.failcnt
  kOomControl,    // v1 memory.oom_control
  kCpuPressure,
  kMemPressure,
  kIoPressure,
  kCpuset,  // v2 cpuset.cpus.effective / v1 cpuset.cpus
  kProcs,   // cgroup.procs
  kCount
};

struct File {
  std::optional<host::OpenFile> file;
  std::string buf;
};

// v1 reports "no limit" as the largest page count in bytes: LONG_MAX rounded down to a page
// (mm/page_counter.c PAGE_COUNTER_MAX), 0x7FFFFFFFFFFFF000 with 4 KiB pages. Anything from
// 2^62 up is that, whatever the page size.
constexpr std::uint64_t kUnlimited = 1ull << 62;

// How many CPUs a kernel CPU list names ("0-3,8,10-11\n": 7; "\n": 0), without allocating (a
// warm sample allocates nothing); nullopt for anything else. The kernel writes each CPU once
// (cpulist_parse's format, Documentation/admin-guide/cgroup-v2.rst "cpuset.cpus").
std::optional<std::uint32_t> count_cpu_list(std::string_view list) {
  while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.remove_suffix(1);
  std::uint64_t total = 0;
  while (!list.empty()) {
    const auto comma = list.find(',');
    auto item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    const auto dash = item.find('-');
    std::uint64_t first = 0, last = 0;
    if (!scan::to_u64(item.substr(0, dash), first)) return std::nullopt;
    last = first;
    if (dash != std::string_view::npos && !scan::to_u64(item.substr(dash + 1), last))
      return std::nullopt;
    if (last < first || last >= static_cast<std::uint64_t>(text::kMaxListId)) return std::nullopt;
    total += last - first + 1;
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(total, text::kMaxListId));
}

std::string join_path(const std::string& dir, const std::string& group) {
  return group == "/" ? dir : dir + group;
}

}  // namespace

struct CgroupCollector::State {
  std::string path, version;
  std::array<File, kCount> files;
  std::string procs_buf;  // pids() reads into its own buffer
  // What collect read of cgroup.procs (a view of its buffer) and, for a group that holds none
  // itself, the members found below it: pids() right after collect (a kCgroup scope's members,
  // every sample) takes them rather than reading and walking the groups again.
  bool procs_fresh = false;
  std::string_view procs_text;
  std::vector<pid_t> below;
  // count_every: a group that counted more than kSmallGroup at its last reading is counted
  // every `count_every` collects, its last count carried between.
  unsigned count_every = 1;
  std::uint64_t collects = 0;
  std::optional<std::uint64_t> last_count;
  std::uint64_t ticks_per_second = 100;
  std::vector<std::string> notes;  // said once at the first collect
  bool noted = false;
  // A group that holds no process itself has those of the groups below it: a Slurm job's are
  // all in its steps' and tasks' groups, a v2 parent's in its children (a group that holds
  // processes keeps to its own, and a warm sample of it allocates nothing). Where they are
  // listed, and which names there are groups.
  std::optional<host::Root> root;
  std::string procs_dir;
  std::map<std::string, bool> is_group;

  // Appends the PIDs listed in every group below `dir` (at most 6 levels down). The names'
  // kinds are remembered for the next time; names gone are forgotten.
  void descendant_pids(const std::string& dir, std::vector<pid_t>& out) {
    if (!root || dir.empty()) return;
    std::map<std::string, bool> seen;
    walk(dir, out, seen, 0);
    is_group = std::move(seen);
  }
  void walk(const std::string& dir, std::vector<pid_t>& out, std::map<std::string, bool>& seen,
            int depth) {
    auto names = root->list(dir);
    if (!names || !*names) return;
    for (const auto& name : **names) {
      // Control files and groups alike (a group may have a dot: systemd's session-1.scope):
      // each name's kind is looked up once and remembered.
      const std::string sub = dir + "/" + name;
      std::optional<bool> group;
      if (const auto it = is_group.find(sub); it != is_group.end()) group = it->second;
      if (!group) {
        auto info = root->stat(sub);
        if (!info || !*info) continue;
        group = (*info)->kind == host::Kind::kDirectory;
      }
      seen.emplace(sub, *group);
      if (!*group) continue;
      if (auto r = root->read(sub + "/cgroup.procs"); r && *r) {
        scan::Lines lines(**r);
        std::string_view line;
        std::uint64_t v = 0;
        while (lines.next(line))
          if (scan::to_u64(line, v) && v > 0) out.push_back(static_cast<pid_t>(v));
      }
      if (depth < 6) walk(sub, out, seen, depth + 1);
    }
  }

  Result<void> open(const host::Root& root, Id id, const std::string& path) {
    auto f = root.open(path);
    if (!f) return tl::unexpected(f.error());
    if (*f) files[id].file = std::move(*f);
    return {};
  }
};

CgroupCollector::CgroupCollector() : state_(std::make_unique<State>()) {}
CgroupCollector::~CgroupCollector() = default;
CgroupCollector::CgroupCollector(CgroupCollector&&) noexcept = default;
CgroupCollector& CgroupCollector::operator=(CgroupCollector&&) noexcept = default;

Result<CgroupCollector> CgroupCollector::open(const host::Root& root, const std::string& path) {
  if (path.empty() || path[0] != '/') return fail("a cgroup path starts with '/', not", path);
  std::string group = path;
  while (group.size() > 1 && group.back() == '/') group.pop_back();
  auto layout = host::cgroup_layout(root);
  if (!layout) return tl::unexpected(layout.error());
  CgroupCollector c;
  State& s = *c.state_;
  s.path = group;
  s.version = layout->version;
  if (const long t = ::sysconf(_SC_CLK_TCK); t > 0)
    s.ticks_per_second = static_cast<std::uint64_t>(t);
  std::vector<std::pair<Id, std::string>> want;
  bool found = false;
  // The group's directory in a hierarchy; empty when the hierarchy or the group is not there.
  auto dir_of = [&](const std::optional<std::string>& mount) -> std::string {
    if (!mount) return {};
    std::string d = join_path(*mount, group);
    if (!root.exists(d)) return {};
    found = true;
    return d;
  };
  if (layout->version == "v2") {
    const auto d = dir_of(layout->unified);
    if (!d.empty())
      want = {{kCpuStat, d + "/cpu.stat"},          {kCpuMax, d + "/cpu.max"},
              {kMemCurrent, d + "/memory.current"}, {kMemMax, d + "/memory.max"},
              {kMemPeak, d + "/memory.peak"},       {kSwapCurrent, d + "/memory.swap.current"},
              {kMemStat, d + "/memory.stat"},       {kMemEvents, d + "/memory.events"},
              {kCpuPressure, d + "/cpu.pressure"},  {kMemPressure, d + "/memory.pressure"},
              {kIoPressure, d + "/io.pressure"},    {kCpuset, d + "/cpuset.cpus.effective"},
              {kProcs, d + "/cgroup.procs"}};
    s.procs_dir = d;
  } else {
    auto mount = [&](const char* controller) -> std::optional<std::string> {
      for (const auto& [c, m] : layout->v1)
        if (c == controller) return m;
      return std::nullopt;
    };
    const auto cpu = dir_of(mount("cpu"));
    const auto cpuacct = dir_of(mount("cpuacct"));
    const auto memory = dir_of(mount("memory"));
    const auto cpuset = dir_of(mount("cpuset"));
    const auto unified = dir_of(layout->unified);
    if (!cpu.empty())
      want.insert(want.end(), {{kCpuStat, cpu + "/cpu.stat"},
                               {kCfsQuota, cpu + "/cpu.cfs_quota_us"},
                               {kCfsPeriod, cpu + "/cpu.cfs_period_us"}});
    if (!cpuacct.empty())
      want.insert(want.end(), {{kCpuacctUsage, cpuacct + "/cpuacct.usage"},
                               {kCpuacctStat, cpuacct + "/cpuacct.stat"}});
    else
      s.notes.push_back("cgroup " + group + " is in no cpuacct hierarchy: no CPU time for it");
    if (!memory.empty())
      want.insert(want.end(), {{kMemCurrent, memory + "/memory.usage_in_bytes"},
                               {kMemMax, memory + "/memory.limit_in_bytes"},
                               {kMemPeak, memory + "/memory.max_usage_in_bytes"},
                               {kFailcnt, memory + "/memory.failcnt"},
                               {kMemStat, memory + "/memory.stat"},
                               {kOomControl, memory + "/memory.oom_control"}});
    else
      s.notes.push_back("cgroup " + group + " is in no memory hierarchy: no memory figures for it");
    if (!unified.empty())
      want.insert(want.end(), {{kCpuPressure, unified + "/cpu.pressure"},
                               {kMemPressure, unified + "/memory.pressure"},
                               {kIoPressure, unified + "/io.pressure"}});
    else
      s.notes.push_back("cgroup " + group +
                        " has no group in a cgroup2 mount: no pressure figures of its own "
                        "(`dltune run` makes one on a hybrid host)");
    if (!cpuset.empty()) want.emplace_back(kCpuset, cpuset + "/cpuset.cpus");
    // The processes: the memory hierarchy's list first, as group_of names that group.
    for (const auto* d : {&memory, &cpu, &cpuacct, &unified})
      if (!d->empty()) {
        want.emplace_back(kProcs, *d + "/cgroup.procs");
        s.procs_dir = *d;
        break;
      }
  }
  if (!found) return fail("no such cgroup in any hierarchy:", group, ENOENT);
  if (!s.procs_dir.empty()) s.root = root;
  for (const auto& [id, p] : want)
    if (auto ok = s.open(root, id, p); !ok) return tl::unexpected(ok.error());
  return c;
}

Result<void> CgroupCollector::collect(std::optional<Cgroup>& out, Notices& notices) {
  State& s = *state_;
  if (!s.noted) {
    s.noted = true;
    for (auto& n : s.notes) notices.once(n, n);
  }
  if (!out) out.emplace();
  Cgroup& c = *out;
  {
    // Every field afresh, keeping the strings' buffers.
    std::string path = std::move(c.path), version = std::move(c.version);
    c = Cgroup{};
    c.path = std::move(path);
    c.version = std::move(version);
  }
  if (c.path != s.path) c.path = s.path;
  if (c.version != s.version) c.version = s.version;
  const bool v2 = s.version == "v2";

  s.procs_fresh = false;
  const bool count_now = s.count_every <= 1 || !s.last_count || *s.last_count <= kSmallGroup ||
                         s.collects % s.count_every == 0;
  ++s.collects;
  for (std::size_t i = 0; i < kCount; ++i) {
    File& f = s.files[i];
    if (!f.file) continue;
    if (i == kProcs && !count_now) {
      c.pids = s.last_count;
      continue;
    }
    auto r = f.file->read(f.buf);
    if (!r) {
      // A pressure file of a group whose PSI is switched off (cgroup.pressure 0, Linux 6.5+).
      if (r.error().errno_ == EOPNOTSUPP) {
        notices.once(f.file->path(), "cannot read " + f.file->path() +
                                         ": pressure is switched off for this cgroup");
        f.file.reset();
        continue;
      }
      return tl::unexpected(r.error());
    }
    if (!*r) {  // the group was removed
      out.reset();
      return {};
    }
    const std::string_view text = **r;
    const std::string& name = f.file->path();
    Result<void> ok;
    auto number = [&](std::optional<std::uint64_t>& to, std::uint64_t divide = 1) {
      auto v = parse_number(text, name);
      if (!v) return Result<void>(tl::unexpected(v.error()));
      to = *v / divide;
      return Result<void>();
    };
    switch (static_cast<Id>(i)) {
      case kCpuStat:
        ok = parse_keyed(text, name, [&](std::string_view k, std::uint64_t v) {
          if (k == "nr_periods")
            c.nr_periods = v;
          else if (k == "nr_throttled")
            c.nr_throttled = v;
          else if (k == "throttled_usec")
            c.throttled_us = v;
          else if (k == "throttled_time")
            c.throttled_us = v / 1000;  // v1: ns
          else if (v2 && k == "usage_usec")
            c.cpu_usage_us = v;
          else if (v2 && k == "user_usec")
            c.cpu_user_us = v;
          else if (v2 && k == "system_usec")
            c.cpu_system_us = v;
        });
        break;
      case kCpuMax: {
        // "max 100000" or "QUOTA PERIOD" in µs (cgroup-v2.rst cpu.max)
        auto rest = text;
        const auto quota = scan::token(rest);
        auto period_word = scan::token(rest);
        if (!period_word.empty() && period_word.back() == '\n') period_word.remove_suffix(1);
        std::uint64_t q = 0, p = 0;
        if (quota.starts_with("max")) break;
        if (!scan::to_u64(quota, q) || !scan::to_u64(period_word, p) || p == 0)
          ok = scan::bad("not 'QUOTA PERIOD' in", name, 1, text);
        else
          c.cpu_quota_cpus = static_cast<double>(q) / static_cast<double>(p);
        break;
      }
      case kCfsQuota:
        // -1: no quota (sched-bwc.rst); the period is read below.
        if (!text.empty() && text[0] == '-') break;
        {
          std::optional<std::uint64_t> q;
          ok = number(q);
          if (ok) c.cpu_quota_cpus = static_cast<double>(*q);  // divided by the period below
        }
        break;
      case kCfsPeriod:
        if (c.cpu_quota_cpus) {
          std::optional<std::uint64_t> p;
          ok = number(p);
          if (ok && *p > 0)
            *c.cpu_quota_cpus /= static_cast<double>(*p);
          else
            c.cpu_quota_cpus.reset();
        }
        break;
      case kCpuacctUsage:
        ok = number(c.cpu_usage_us, 1000);
        break;  // ns
      case kCpuacctStat:
        ok = parse_keyed(text, name, [&](std::string_view k, std::uint64_t v) {
          const std::uint64_t us = v * 1'000'000 / s.ticks_per_second;  // USER_HZ ticks
          if (k == "user")
            c.cpu_user_us = us;
          else if (k == "system")
            c.cpu_system_us = us;
        });
        break;
      case kMemCurrent:
        ok = number(c.memory_bytes);
        break;
      case kMemMax: {
        auto v = parse_number(text, name, UINT64_MAX);
        if (!v)
          ok = tl::unexpected(v.error());
        else if (*v < kUnlimited)
          c.memory_limit_bytes = *v;
        break;
      }
      case kMemPeak:
        ok = number(c.memory_peak_bytes);
        break;
      case kSwapCurrent:
        ok = number(c.swap_bytes);
        break;
      case kFailcnt:
        ok = number(c.failcnt);
        break;
      case kMemStat:
        ok = parse_keyed(text, name, [&](std::string_view k, std::uint64_t v) {
          if (!v2) {
            // v1: the hierarchical totals, named total_* (cgroup-v1/memory.rst 5.2)
            if (!k.starts_with("total_")) return;
            k.remove_prefix(6);
            if (k == "rss")
              c.anon_bytes = v;
            else if (k == "cache")
              c.file_bytes = v;
            else if (k == "swap")
              c.swap_bytes = v;
          } else {
            if (k == "anon")
              c.anon_bytes = v;
            else if (k == "file")
              c.file_bytes = v;
          }
          if (k == "workingset_refault_file")
            c.workingset_refault_file = v;
          else if (k == "workingset_refault_anon")
            c.workingset_refault_anon = v;
          else if (k == "workingset_refault")
            c.workingset_refault_file = v;  // before 5.9
          else if (k == "pgmajfault")
            c.pgmajfault = v;
        });
        break;
      case kMemEvents:
        ok = parse_keyed(text, name, [&](std::string_view k, std::uint64_t v) {
          if (k == "max")
            c.failcnt = v;
          else if (k == "high")
            c.events_high = v;
          else if (k == "oom")
            c.events_oom = v;
          else if (k == "oom_kill")
            c.events_oom_kill = v;
        });
        break;
      case kOomControl:
        ok = parse_keyed(text, name, [&](std::string_view k, std::uint64_t v) {
          if (k == "oom_kill") c.events_oom_kill = v;
        });
        break;
      case kCpuPressure:
        ok = parse_pressure(text, name, c.pressure.cpu.emplace());
        break;
      case kMemPressure:
        ok = parse_pressure(text, name, c.pressure.memory.emplace());
        break;
      case kIoPressure:
        ok = parse_pressure(text, name, c.pressure.io.emplace());
        break;
      case kCpuset:
        // An empty list: the group's own cpuset is not set (v1 before a task runs there).
        if (const auto n = count_cpu_list(text); !n)
          ok = scan::bad("not a CPU list (\"0-3,8\") in", name, 1, text);
        else if (*n > 0)
          c.cpuset_cpus = *n;
        break;
      case kProcs: {
        std::uint64_t n = 0;
        for (const char ch : text) n += ch == '\n';
        s.below.clear();
        if (n == 0) {  // a group that holds none itself: those of the groups below it
          s.descendant_pids(s.procs_dir, s.below);
          std::sort(s.below.begin(), s.below.end());
          s.below.erase(std::unique(s.below.begin(), s.below.end()), s.below.end());
          n = s.below.size();
        }
        c.pids = s.last_count = n;
        s.procs_text = text;
        s.procs_fresh = true;
        break;
      }
      case kCount:
        break;
    }
    if (!ok) return ok;
  }
  return {};
}

void CgroupCollector::count_every(unsigned n) {
  state_->count_every = std::max(n, 1u);
}

std::vector<pid_t> CgroupCollector::pids() const {
  std::vector<pid_t> out;
  State& s = *state_;
  File& f = s.files[kProcs];
  if (!f.file) return out;
  // What collect read this sample, or the file now.
  const bool fresh = std::exchange(s.procs_fresh, false);
  std::string_view text = s.procs_text;
  if (!fresh) {
    auto r = f.file->read(s.procs_buf);
    if (!r || !*r) return out;
    text = **r;
  }
  scan::Lines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    std::uint64_t v = 0;
    if (scan::to_u64(line, v) && v > 0) out.push_back(static_cast<pid_t>(v));
  }
  if (out.empty()) {
    if (fresh)
      out = s.below;
    else
      s.descendant_pids(s.procs_dir, out);
  }
  // v1 lists are neither sorted nor free of repeats (cgroup-v1/cgroups.rst 1.4).
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace dltune::monitor
