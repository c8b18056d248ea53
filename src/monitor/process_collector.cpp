// ProcessCollector: /proc/PID/{stat,schedstat,status,io,cmdline} of the processes in scope
// (monitor/sampler.hpp).
//
// Per process per sample: stat always (for top's list with ProcessDetail::every_sample: those
// processes every sample, the others and the /proc listing every others_every samples, each
// carried between its readings); schedstat, status and io only for the processes of
// ProcessDetail::pids (all by default), status only for the main process and the ranks when
// ProcessDetail::switches_of_main_and_ranks_only (read after the roles are known); for top's
// list (Scope::kAll) schedstat only, never status or io. schedstat is read first: a
// single-threaded process that has not run since its last reading keeps it, stat, io and status
// unread (ProcessDetail::unchanged_every).
//
// Cost is the point. Each process's files are kept open and pread each sample (host::OpenFile);
// the lists of /proc and /proc/PID/task come from Root::list_pids into reused vectors; parsing
// is on views of one reused buffer; the output's elements and strings are reused. cmdline is
// read once per process (again only when its name changes: an exec), environ (for RANK) once per
// main process or rank.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "core/text.hpp"
#include "host/parse/process.hpp"
#include "monitor/roles.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

namespace {

using host::parse::cmdline_text;
using host::parse::kCmdlineMax;
// The environment read for RANK: Linux caps argv and envp together at a quarter of the stack
// limit; 64 KiB holds a training job's environment (a few KiB) many times over.
constexpr std::size_t kEnvironMax = 64 * 1024;
using host::parse::parse_proc_io;
using host::parse::parse_proc_schedstat;
using host::parse::parse_proc_stat;
using host::parse::parse_proc_status_switches;

// The descriptors this collector keeps open: half of the soft RLIMIT_NOFILE, at most 4096. The
// soft limit is often 1024: 512 then, enough for a job tree of ~60 processes (stat, schedstat,
// status, io, and one children file per thread of a few threads each) or for `top`'s stat and
// schedstat of ~250 processes. The other half is left to the program (SQLite, the terminal,
// NVML, the job's pipes). Files beyond the budget are opened, read and closed each sample:
// slower, never failing.
std::size_t fd_budget() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 512;
  return std::clamp<std::size_t>(static_cast<std::size_t>(r.rlim_cur) / 2, 16, 4096);
}

// "/proc/PID/leaf" or "/proc/PID/task/TID/leaf" in a fixed buffer (no allocation).
class ProcPath {
 public:
  std::string_view of(pid_t pid, std::string_view leaf) {
    n_ = 0;
    put("/proc/");
    num(pid);
    put("/");
    put(leaf);
    return {buf_, n_};
  }
  std::string_view of(pid_t pid, pid_t tid, std::string_view leaf) {
    n_ = 0;
    put("/proc/");
    num(pid);
    put("/task/");
    num(tid);
    put("/");
    put(leaf);
    return {buf_, n_};
  }

 private:
  void put(std::string_view s) {
    const auto k = std::min(s.size(), sizeof buf_ - n_);
    std::copy_n(s.data(), k, buf_ + n_);
    n_ += k;
  }
  void num(pid_t v) {
    const auto [p, ec] = std::to_chars(buf_ + n_, buf_ + sizeof buf_, v);
    if (ec == std::errc()) n_ = static_cast<std::size_t>(p - buf_);
  }
  char buf_[64];
  std::size_t n_ = 0;
};

// One process followed from sample to sample. Identity is (pid, start_ticks): a pid that the
// kernel gave to a new process is a new Tracked.
struct Tracked {
  pid_t pid = 0;
  std::uint64_t start_ticks = 0;
  bool known = false;  // start_ticks read at least once
  host::OpenFile stat, schedstat, status, io;
  std::string comm, cmdline;
  std::uint64_t startstack = 0;  // stat's, at its last reading: another is another exec
  bool cmdline_read = false;
  std::optional<int> rank;
  bool environ_read = false;   // for a main process or a rank only: RANK
  bool io_denied = false;      // another user's process: not tried again
  bool status_wanted = false;  // its status was read at the last sample (main or rank)
  // Its last reading of stat, given again while it is carried (ProcessDetail::others_every).
  struct StatReading {
    pid_t ppid = 0;
    char state = '?';
    std::uint64_t utime = 0, stime = 0, minflt = 0, majflt = 0, threads = 0, rss_bytes = 0;
    int processor = -1;
    std::int64_t at_ns = 0;
  } last;
  // The schedstat read just before `last` (when it was read), and the fields of the files
  // beyond stat at its last reading of them: what a process that has not run since keeps
  // (ProcessDetail::unchanged_every).
  std::optional<host::parse::ProcSchedstat> sched_of_last;
  std::optional<std::uint64_t> read_bytes, write_bytes, rchar, wchar, voluntary, involuntary;
  bool unchanged = false;  // this sample: kept, not read (it has not run)
  unsigned quiet = 0;      // samples in a row it was kept so (ProcessDetail::quiet_every)
};

// /proc/PID/task/TID/children of one thread of a tree member (kTree).
struct ChildrenFile {
  pid_t pid = 0, tid = 0;
  host::OpenFile file;
};

// /proc/PID/task of a tree member, listed for its threads (kTree) every
// ProcessDetail::threads_every samples; the threads of its last listing.
struct TaskDir {
  pid_t pid = 0;
  host::OpenFile dir;
  std::vector<int> tids;
  std::vector<int> children;  // what its threads' children files named at their last reading
};

bool by_ids(const ChildrenFile& a, const ChildrenFile& b) {
  return a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid;
}

// The fields of the files beyond stat, emptied until they are read.
void clear_beyond_stat(Process& p) {
  p.run_ns.reset();
  p.wait_ns.reset();
  p.timeslices.reset();
  p.voluntary_switches.reset();
  p.involuntary_switches.reset();
  p.read_bytes.reset();
  p.write_bytes.reset();
  p.rchar.reset();
  p.wchar.reset();
}

void put_schedstat(const host::parse::ProcSchedstat& s, Process& p) {
  p.run_ns = s.run_ns;
  p.wait_ns = s.wait_ns;
  p.timeslices = s.timeslices;
}

template <class T>
void assign_if_changed(std::string& to, const T& from) {
  if (std::string_view(to) != std::string_view(from)) to.assign(from);
}

}  // namespace

struct ProcessCollector::State {
  host::Root root;
  Scope scope;
  ProcessDetail detail;  // pids sorted
  std::size_t budget = fd_budget();
  std::size_t open = 0;  // descriptors kept now
  std::uint64_t page_size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<Tracked> tracked, next;
  std::vector<ChildrenFile> children, children_next;
  std::vector<TaskDir> task_dirs, task_dirs_next;
  host::OpenFile proc_dir;  // /proc, for kAll
  std::vector<int> pids, tids;
  // kTree: the main process and the ranks at the last sample, whose threads' children files are
  // read every sample (they start the job's workers); a worker's in its turn (threads_every).
  std::vector<pid_t> forkers;
  std::vector<std::pair<pid_t, pid_t>> parents;  // (ppid, pid), the fallback scan's
  std::string buf, path_text;
  ProcPath path;
  bool no_children_file = false;
  // This collect's number, from 0: whose turn it is to be read (ProcessDetail::others_every).
  std::uint64_t turn = 0, collects = 0;

  void close(host::OpenFile& f) {
    if (f.is_open()) {
      f = host::OpenFile();
      --open;
    }
  }
  void release(Tracked& t) {
    close(t.stat);
    close(t.schedstat);
    close(t.status);
    close(t.io);
  }

  // The text of `p` through `f`: pread when `f` is open; else opened, read, and kept while the
  // budget allows. Empty when the file (or its process) is gone.
  Result<std::optional<std::string_view>> read_kept(host::OpenFile& f, std::string_view p) {
    if (f.is_open()) {
      auto r = f.read(buf);
      if (r && !*r) close(f);
      return r;
    }
    auto o = root.open(p);
    if (!o) return tl::unexpected(o.error());
    if (!*o) return std::optional<std::string_view>();
    auto r = (*o)->read(buf);
    if (r && *r && open < budget) {
      f = std::move(**o);
      ++open;
    }
    return r;
  }

  // Whether the files beyond stat of `pid` are read.
  [[nodiscard]] bool detailed(pid_t pid) const {
    return !detail.pids || std::binary_search(detail.pids->begin(), detail.pids->end(), pid);
  }

  Result<void> tree_members(Notices& notices);
  Result<void> scan_tree();
  // Whether `t`'s stat is read this sample, or its last reading carried.
  [[nodiscard]] bool read_now(const Tracked& t) const {
    if (scope.kind != Scope::Kind::kAll || !detail.every_sample || detail.others_every <= 1 ||
        !t.known)
      return true;
    if ((static_cast<std::uint64_t>(t.pid) + turn) % detail.others_every == 0) return true;
    return std::binary_search(detail.every_sample->begin(), detail.every_sample->end(), t.pid);
  }
  // Whether `t`, whose schedstat now is `now`, has not been switched in since its last reading
  // (ProcessDetail::unchanged_every), and it is not its turn to be read in full.
  [[nodiscard]] static bool not_run(const Tracked& t, const host::parse::ProcSchedstat& now) {
    return t.known && t.sched_of_last && t.last.threads == 1 && t.last.state != 'R' &&
           now.run_ns == t.sched_of_last->run_ns && now.timeslices == t.sched_of_last->timeslices;
  }
  [[nodiscard]] bool not_run_since(const Tracked& t, const host::parse::ProcSchedstat& now) const {
    return detail.unchanged_every > 1 && not_run(t, now) &&
           (static_cast<std::uint64_t>(t.pid) + turn) % detail.unchanged_every != 0;
  }
  // Whether `t`, a row of top quiet for about a second, is carried this sample without being
  // asked (ProcessDetail::quiet_every).
  [[nodiscard]] bool quiet_turn(const Tracked& t) const {
    if (scope.kind != Scope::Kind::kAll || detail.quiet_every <= 1 || !t.sched_of_last ||
        t.quiet < detail.unchanged_every || !detailed(t.pid))
      return false;
    const auto at = static_cast<std::uint64_t>(t.pid) + turn;
    return at % detail.quiet_every != 0 && at % detail.unchanged_every != 0;
  }
  [[nodiscard]] bool list_now() const {
    return scope.kind != Scope::Kind::kAll || !detail.every_sample || detail.others_every <= 1 ||
           tracked.empty() || turn % detail.others_every == 0;
  }

  Result<bool> sample_one(Tracked& t, Process& p, Notices& notices, std::int64_t now_ns);
  Result<void> merge(std::vector<Process>& out, Notices& notices, std::int64_t now_ns,
                     std::size_t& n);
  Result<void> after_sampling(std::vector<Process>& out, std::size_t n);
  static void from_last_reading(const Tracked& t, Process& p);
  Result<std::optional<host::parse::ProcSchedstat>> read_schedstat(Tracked& t);
  // The io and switches of its last reading of them into `p` (a process kept unchanged).
  void beyond_stat_kept(const Tracked& t, Process& p) const;
  Result<void> read_status(Tracked& t, Process& p);
  Result<void> read_io(Tracked& t, Process& p, Notices& notices);
};

ProcessCollector::ProcessCollector(const host::Root& root, Scope scope, ProcessDetail detail)
    : state_(std::make_unique<State>()) {
  state_->root = root;
  state_->scope = std::move(scope);
  set_detail(std::move(detail));
}

void ProcessCollector::set_detail(ProcessDetail detail) {
  State& s = *state_;
  for (auto* set : {&detail.pids, &detail.every_sample})
    if (*set) {
      std::sort((*set)->begin(), (*set)->end());
      (*set)->erase(std::unique((*set)->begin(), (*set)->end()), (*set)->end());
    }
  if (detail == s.detail) return;  // top gives it after every frame: mostly the same rows
  s.detail = std::move(detail);
  // The descriptors of files no longer read go back to the budget (those still read stay open).
  for (auto& t : s.tracked) {
    if (!s.detailed(t.pid)) {
      s.close(t.schedstat);
      s.close(t.status);
      s.close(t.io);
    } else if (s.detail.switches_of_main_and_ranks_only && !t.status_wanted) {
      s.close(t.status);
    }
  }
}
ProcessCollector::~ProcessCollector() = default;
ProcessCollector::ProcessCollector(ProcessCollector&&) noexcept = default;
ProcessCollector& ProcessCollector::operator=(ProcessCollector&&) noexcept = default;

// scope.pid and its descendants into `pids`: the children files of every thread of each member
// (a child belongs to the thread that forked it; Documentation/filesystems/proc.rst,
// "/proc/<pid>/task/<tid>/children"), or a scan of every process's ppid where the kernel has no
// children files (CONFIG_PROC_CHILDREN off).
Result<void> ProcessCollector::State::tree_members(Notices& notices) {
  pids.clear();
  if (no_children_file) return scan_tree();
  pids.push_back(scope.pid);
  children_next.clear();
  task_dirs_next.clear();
  // A member's children are appended; a pid reused into a loop is cut by the bound.
  for (std::size_t i = 0; i < pids.size() && i < 65536; ++i) {
    const pid_t m = pids[i];
    // Its threads, from its task directory kept open (as the files are, within the budget), or
    // those of its last listing when it is not its turn (ProcessDetail::threads_every).
    TaskDir dir{m, {}, {}, {}};
    const auto known = std::lower_bound(task_dirs.begin(), task_dirs.end(), m,
                                        [](const TaskDir& d, pid_t p) { return d.pid < p; });
    const bool was_known = known != task_dirs.end() && known->pid == m;
    if (was_known) {
      dir.dir = std::move(known->dir);
      dir.tids.swap(known->tids);
      dir.children.swap(known->children);
    }
    const bool its_turn = !was_known || detail.threads_every <= 1 ||
                          (static_cast<std::uint64_t>(m) + turn) % detail.threads_every == 0;
    // A member whose stat at its last reading counted one thread, listed before as that thread
    // alone: its only thread is itself, and listing it again would say so (most of a job's
    // helpers, and a shell). A thread it starts shows in its stat at the sample it runs, so the
    // next turn lists it: a child forked by that thread is found up to a sample later still.
    const bool one_thread =
        its_turn && was_known && dir.tids.size() == 1 && dir.tids[0] == m && [&] {
          const auto t = std::lower_bound(tracked.begin(), tracked.end(), m,
                                          [](const Tracked& k, pid_t p) { return k.pid < p; });
          return t != tracked.end() && t->pid == m && t->known && t->last.threads == 1;
        }();
    if (!its_turn && m != scope.pid && !std::binary_search(forkers.begin(), forkers.end(), m)) {
      // A worker (not the main process or a rank, which start the job's processes): its
      // children as its threads' files last named them, those files kept for its turn.
      pids.insert(pids.end(), dir.children.begin(), dir.children.end());
      auto from =
          std::lower_bound(children.begin(), children.end(), ChildrenFile{m, 0, {}}, by_ids);
      for (; from != children.end() && from->pid == m; ++from)
        children_next.push_back(std::move(*from));
      task_dirs_next.push_back(std::move(dir));
      continue;
    }
    if (!its_turn || one_thread) {
      tids.assign(dir.tids.begin(), dir.tids.end());
    } else {
      Result<bool> listed = false;
      if (dir.dir.is_open()) {
        listed = dir.dir.list_pids(tids);
      } else {
        auto opened = root.open_directory(path.of(m, "task"));
        if (!opened) return tl::unexpected(opened.error());
        if (!*opened) continue;  // exited
        listed = (*opened)->list_pids(tids);
        if (listed && *listed && open < budget) {
          dir.dir = std::move(**opened);
          ++open;
        }
      }
      if (!listed) return tl::unexpected(listed.error());
      if (!*listed) {  // exited
        close(dir.dir);
        continue;
      }
      dir.tids.assign(tids.begin(), tids.end());
    }
    dir.children.clear();
    for (const int tid : tids) {
      ChildrenFile key{m, tid, {}};
      const auto it = std::lower_bound(children.begin(), children.end(), key, by_ids);
      if (it != children.end() && it->pid == m && it->tid == tid) key.file = std::move(it->file);
      auto r = read_kept(key.file, path.of(m, tid, "children"));
      if (!r) return tl::unexpected(r.error());
      if (!*r) {
        if (i == 0 && tid == m && root.exists(path.of(m, "stat"))) {
          notices.once("proc-children",
                       "no /proc/PID/task/TID/children (kernel without CONFIG_PROC_CHILDREN): "
                       "the job's processes are found by scanning every process's parent");
          no_children_file = true;
          close(dir.dir);
          for (auto& c : children_next) close(c.file);
          children_next.clear();
          for (auto& d : task_dirs_next) close(d.dir);
          for (auto& d : task_dirs) close(d.dir);
          task_dirs_next.clear();
          task_dirs.clear();
          return scan_tree();
        }
        continue;
      }
      const std::string_view text = **r;
      for (std::size_t pos = 0; pos < text.size();) {
        const auto end = text.find(' ', pos);
        const auto f = text.substr(pos, end == std::string_view::npos ? text.npos : end - pos);
        int child = 0;
        const auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), child);
        if (ec == std::errc() && p != f.data()) {
          pids.push_back(child);
          dir.children.push_back(child);
        }
        if (end == std::string_view::npos) break;
        pos = end + 1;
      }
      children_next.push_back(std::move(key));
    }
    task_dirs_next.push_back(std::move(dir));
  }
  for (auto& c : children) close(c.file);  // threads gone and members gone
  children.clear();
  for (auto& d : task_dirs) close(d.dir);
  task_dirs.clear();
  task_dirs.swap(task_dirs_next);  // in the order members were found: sorted for the lookup
  std::sort(task_dirs.begin(), task_dirs.end(),
            [](const TaskDir& a, const TaskDir& b) { return a.pid < b.pid; });
  std::sort(children_next.begin(), children_next.end(), by_ids);
  children.swap(children_next);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return {};
}

// The fallback: every process's ppid from its stat (read, not kept: this is the rare case).
Result<void> ProcessCollector::State::scan_tree() {
  auto listed = root.list_pids("/proc", tids);
  if (!listed) return tl::unexpected(listed.error());
  parents.clear();
  for (const int p : tids) {
    auto text = root.read(path.of(p, "stat"));
    if (!text || !*text) continue;  // gone, or unreadable: not part of what we can see
    if (auto st = parse_proc_stat(**text)) parents.emplace_back(st->ppid, st->pid);
  }
  std::sort(parents.begin(), parents.end());
  pids.push_back(scope.pid);
  for (std::size_t i = 0; i < pids.size() && i < 65536; ++i) {
    const auto lo = std::lower_bound(parents.begin(), parents.end(), std::pair{pids[i], 0});
    for (auto it = lo; it != parents.end() && it->first == pids[i]; ++it)
      pids.push_back(it->second);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return {};
}

// `t`'s last reading of stat into `p` (this sample's, or carried from an earlier one), its name
// and command line, and the schedstat read with it; the fields of the other files empty.
void ProcessCollector::State::from_last_reading(const Tracked& t, Process& p) {
  p.pid = t.pid;
  p.ppid = t.last.ppid;
  p.state = t.last.state;
  p.start_ticks = t.start_ticks;
  p.utime = t.last.utime;
  p.stime = t.last.stime;
  p.minflt = t.last.minflt;
  p.majflt = t.last.majflt;
  p.threads = t.last.threads;
  p.rss_bytes = t.last.rss_bytes;
  p.processor = t.last.processor;
  p.stat_ns = t.last.at_ns;
  assign_if_changed(p.comm, t.comm);
  assign_if_changed(p.cmdline, t.cmdline);
  clear_beyond_stat(p);
  if (t.sched_of_last) put_schedstat(*t.sched_of_last, p);
}

Result<std::optional<host::parse::ProcSchedstat>> ProcessCollector::State::read_schedstat(
    Tracked& t) {
  auto ss = read_kept(t.schedstat, path.of(t.pid, "schedstat"));
  if (!ss) return tl::unexpected(ss.error());
  if (!*ss) return std::optional<host::parse::ProcSchedstat>();  // gone, or no CONFIG_SCHED_INFO
  auto v = parse_proc_schedstat(**ss);
  if (!v) return tl::unexpected(v.error());
  return std::optional(*v);
}

void ProcessCollector::State::beyond_stat_kept(const Tracked& t, Process& p) const {
  p.read_bytes = t.read_bytes;
  p.write_bytes = t.write_bytes;
  p.rchar = t.rchar;
  p.wchar = t.wchar;
  if (scope.kind == Scope::Kind::kAll) return;    // top's list: schedstat and I/O only
  if (!detail.switches_of_main_and_ranks_only) {  // else after the roles are known (collect)
    p.voluntary_switches = t.voluntary;
    p.involuntary_switches = t.involuntary;
  }
}

// One process into `p`; false when it is gone.
Result<bool> ProcessCollector::State::sample_one(Tracked& t, Process& p, Notices& notices,
                                                 std::int64_t now_ns) {
  t.unchanged = false;
  if (!read_now(t) || quiet_turn(t)) {
    from_last_reading(t, p);
    return true;
  }
  // schedstat before stat: a run between the two readings is then in stat and seen as a change
  // at the next sample, never in schedstat alone.
  const bool detailed_now = detailed(t.pid);
  std::optional<host::parse::ProcSchedstat> sched;
  bool sched_read = false;
  if (detailed_now && t.known) {
    auto ss = read_schedstat(t);
    if (!ss) return tl::unexpected(ss.error());
    sched = *ss;
    sched_read = true;
  }
  // Samples in a row it has not run: kept below, or read in full in its turn.
  t.quiet = sched && not_run(t, *sched) ? std::min(t.quiet + 1, 1u << 20) : 0;
  if (sched && not_run_since(t, *sched)) {
    t.unchanged = true;
    t.last.at_ns = now_ns;  // what stat would say now
    t.sched_of_last = sched;
    from_last_reading(t, p);  // with this schedstat
    beyond_stat_kept(t, p);
    return true;
  }
  const bool was_open = t.stat.is_open();
  auto r = read_kept(t.stat, path.of(t.pid, "stat"));
  if (!r) return tl::unexpected(r.error());
  if (!*r && was_open) {
    // The process we kept the file of has gone; the pid may already be another's.
    release(t);
    const pid_t pid = t.pid;
    t = Tracked();
    t.pid = pid;
    sched_read = false;
    r = read_kept(t.stat, path.of(t.pid, "stat"));
    if (!r) return tl::unexpected(r.error());
  }
  if (!*r) return false;
  auto st = parse_proc_stat(**r);
  if (!st) return tl::unexpected(st.error());
  if (t.known && st->start_ticks != t.start_ticks) {  // a new process under an old pid
    close(t.schedstat);
    close(t.status);
    close(t.io);
    t.comm.clear();
    t.cmdline.clear();
    t.cmdline_read = t.io_denied = t.environ_read = false;
    t.rank.reset();
    sched_read = false;
  }
  t.known = true;
  t.start_ticks = st->start_ticks;
  // New, or it exec'd: the command line changed too, and the environment. An exec of a program
  // of the same name (torchrun's python3 starting a rank's python3, a fork read before its exec)
  // keeps the name: its stack moved.
  const bool execd = st->startstack != 0 && t.startstack != 0 && st->startstack != t.startstack;
  // The name is the process's to choose (prctl PR_SET_NAME): kept printable.
  if (!text::is_printable_of(t.comm, st->comm) || execd) {
    t.comm = text::printable(st->comm);
    t.cmdline_read = t.environ_read = false;  // RANK is read again with the environment
  }
  t.startstack = st->startstack;
  t.sched_of_last.reset();  // set below, when read with this stat
  t.last = {st->ppid,      st->state,  st->utime,   st->stime,
            st->minflt,    st->majflt, st->threads, st->rss_pages * page_size,
            st->processor, now_ns};
  if (!t.cmdline_read) {
    // A kernel thread has none; its name changes with its work (kworkers, several times a
    // second on a busy host), which would read its empty command line again each time.
    if ((st->flags & host::parse::kPfKthread) != 0) {
      t.cmdline.clear();
    } else if (auto raw = root.read(path.of(t.pid, "cmdline"), kCmdlineMax + 1); raw && *raw) {
      cmdline_text(**raw, t.cmdline);
    }
    t.cmdline_read = true;
  }
  from_last_reading(t, p);
  if (!detailed_now) {  // not on screen: stat's fields only
    t.sched_of_last.reset();
    return true;
  }
  if (!sched_read) {  // new, or a new process under its pid: read after its stat
    auto ss = read_schedstat(t);
    if (!ss) return tl::unexpected(ss.error());
    sched = *ss;
  }
  // Read after stat, it may count a run that stat does not: the next reading is in full.
  t.sched_of_last = sched_read ? sched : std::nullopt;
  if (sched) put_schedstat(*sched, p);

  // Top's list: stat and schedstat, and for its rows on screen their I/O (its IO/s column and
  // sort); never status.
  if (scope.kind == Scope::Kind::kAll) {
    if (!detailed_now) return true;
    if (auto ok = read_io(t, p, notices); !ok) return tl::unexpected(ok.error());
    return true;
  }

  // With switches_of_main_and_ranks_only, after the roles are known (collect).
  if (!detail.switches_of_main_and_ranks_only)
    if (auto ok = read_status(t, p); !ok) return tl::unexpected(ok.error());
  if (auto ok = read_io(t, p, notices); !ok) return tl::unexpected(ok.error());
  return true;
}

// `p`'s I/O counters from its io file (kept open), unless it was refused once.
Result<void> ProcessCollector::State::read_io(Tracked& t, Process& p, Notices& notices) {
  if (!t.io_denied) {
    auto io = read_kept(t.io, path.of(t.pid, "io"));
    if (!io && io.error().errno_ == EACCES) {
      // Mode 0400 and a ptrace access check (Documentation/filesystems/proc.rst): only root or
      // the process's own user reads it.
      t.io_denied = true;
      // Root meets it too where it lacks CAP_SYS_PTRACE (a container's root, most often).
      notices.once("proc-io",
                   ::geteuid() == 0
                       ? "cannot read /proc/PID/io of other users' processes (root without "
                         "CAP_SYS_PTRACE, as in a container): their I/O is not shown"
                       : "cannot read /proc/PID/io of other users' processes (not root): "
                         "their I/O is not shown");
    } else if (!io) {
      return tl::unexpected(io.error());
    } else if (*io) {
      const auto v = parse_proc_io(**io);
      p.rchar = t.rchar = v.rchar;
      p.wchar = t.wchar = v.wchar;
      p.read_bytes = t.read_bytes = v.read_bytes;
      p.write_bytes = t.write_bytes = v.write_bytes;
    }
  }
  return {};
}

// The context switches of `p` from its status; left empty when it has gone.
Result<void> ProcessCollector::State::read_status(Tracked& t, Process& p) {
  auto status = read_kept(t.status, path.of(t.pid, "status"));
  if (!status) return tl::unexpected(status.error());
  if (*status) {
    const auto sw = parse_proc_status_switches(**status);
    p.voluntary_switches = t.voluntary = sw.voluntary;
    p.involuntary_switches = t.involuntary = sw.involuntary;
  }
  return {};
}

Result<void> ProcessCollector::collect(std::vector<Process>& out, Notices& notices,
                                       const std::vector<pid_t>& cgroup_pids, std::int64_t now_ns) {
  State& s = *state_;
  s.turn = s.collects++;
  bool listed = true;  // false: the processes tracked, without a listing this sample
  switch (s.scope.kind) {
    case Scope::Kind::kNone:
      out.clear();
      return {};
    case Scope::Kind::kTree:
      if (auto ok = s.tree_members(notices); !ok) return ok;
      break;
    case Scope::Kind::kCgroup:
      s.pids.assign(cgroup_pids.begin(), cgroup_pids.end());
      std::sort(s.pids.begin(), s.pids.end());
      s.pids.erase(std::unique(s.pids.begin(), s.pids.end()), s.pids.end());
      break;
    case Scope::Kind::kAll:
      if (!s.list_now()) {  // the processes known; new ones are found at the next listing
        listed = false;
        break;
      }
      // /proc kept open like the files (and counted in the same budget).
      if (!s.proc_dir.is_open() && s.open < s.budget) {
        auto d = s.root.open_directory("/proc");
        if (!d) return tl::unexpected(d.error());
        if (*d) {
          s.proc_dir = std::move(**d);
          ++s.open;
        }
      }
      auto ok =
          s.proc_dir.is_open() ? s.proc_dir.list_pids(s.pids) : s.root.list_pids("/proc", s.pids);
      if (!ok) return tl::unexpected(ok.error());
      break;
  }

  std::size_t n = 0;
  if (!listed || std::equal(s.pids.begin(), s.pids.end(), s.tracked.begin(), s.tracked.end(),
                            [](pid_t pid, const Tracked& t) { return pid == t.pid; })) {
    // The same processes as before (every sample of top between two listings of /proc, and
    // most others): each sampled where it is, the ones gone mid-sample closed up over.
    for (std::size_t k = 0; k < s.tracked.size(); ++k) {
      Tracked& t = s.tracked[k];
      if (n == out.size()) out.emplace_back();
      auto ok = s.sample_one(t, out[n], notices, now_ns);
      if (!ok) {
        for (auto& x : s.tracked) s.release(x);
        s.tracked.clear();
        return tl::unexpected(ok.error());
      }
      if (!*ok) {
        s.release(t);  // exited mid-sample: simply gone
        continue;
      }
      if (n != k) s.tracked[n] = std::move(t);
      ++n;
    }
    s.tracked.erase(s.tracked.begin() + static_cast<std::ptrdiff_t>(n), s.tracked.end());
  } else if (auto ok = s.merge(out, notices, now_ns, n); !ok) {
    return ok;
  }
  out.resize(n);
  return s.after_sampling(out, n);
}

// Merge-walk the pids (sorted) with what was tracked (sorted): kept, new, and gone; `n`: how
// many of `out` are filled.
Result<void> ProcessCollector::State::merge(std::vector<Process>& out, Notices& notices,
                                            std::int64_t now_ns, std::size_t& n) {
  State& s = *this;
  s.next.clear();
  std::size_t j = 0;
  for (const int pid : s.pids) {
    while (j < s.tracked.size() && s.tracked[j].pid < pid) s.release(s.tracked[j++]);
    Tracked t;
    if (j < s.tracked.size() && s.tracked[j].pid == pid)
      t = std::move(s.tracked[j++]);
    else
      t.pid = pid;
    if (n == out.size()) out.emplace_back();
    auto ok = s.sample_one(t, out[n], notices, now_ns);
    if (!ok) {
      s.release(t);
      while (j < s.tracked.size()) s.release(s.tracked[j++]);
      for (auto& k : s.next) s.release(k);
      s.tracked.clear();
      s.next.clear();
      return tl::unexpected(ok.error());
    }
    if (*ok) {
      ++n;
      s.next.push_back(std::move(t));
    } else {
      s.release(t);  // exited mid-sample: simply gone
    }
  }
  while (j < s.tracked.size()) s.release(s.tracked[j++]);
  s.tracked.swap(s.next);
  s.next.clear();
  return {};
}

// The roles of the `n` processes sampled, and what is read once they are known.
Result<void> ProcessCollector::State::after_sampling(std::vector<Process>& out, std::size_t n) {
  State& s = *this;
  assign_roles(out, s.scope.kind, s.scope.pid);
  s.forkers.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (out[i].role == Role::kMain || out[i].role == Role::kRank) s.forkers.push_back(out[i].pid);
  // status (the context switches) of the main process and the ranks only, when so asked.
  if (s.detail.switches_of_main_and_ranks_only && s.scope.kind != Scope::Kind::kAll) {
    for (std::size_t i = 0; i < n; ++i) {
      auto& t = s.tracked[i];
      t.status_wanted =
          (out[i].role == Role::kMain || out[i].role == Role::kRank) && s.detailed(t.pid);
      if (!t.status_wanted) {
        s.close(t.status);  // a rank that became something else (rare): its file goes back
        continue;
      }
      if (t.unchanged && t.status.is_open()) {  // read at its last reading, and it has not run
        out[i].voluntary_switches = t.voluntary;
        out[i].involuntary_switches = t.involuntary;
        continue;
      }
      if (auto ok = s.read_status(t, out[i]); !ok) return ok;
    }
  }
  // A rank's number, from the environment its launcher gave it: read once per process, only for
  // the few that are a job's main process or its ranks (an environment is kilobytes).
  for (std::size_t i = 0; i < n; ++i) {
    auto& p = out[i];
    auto& t = s.tracked[i];
    if (p.role != Role::kMain && p.role != Role::kRank) {
      p.rank.reset();
      continue;
    }
    if (!t.environ_read) {
      t.environ_read = true;
      t.rank.reset();
      // torchrun's and dltune run's RANK first; then the task rank of the launchers that do not
      // set it: srun (SLURM_PROCID), Open MPI's mpirun (OMPI_COMM_WORLD_RANK), MPICH/Hydra
      // (PMI_RANK).
      if (auto raw = s.root.read(s.path.of(t.pid, "environ"), kEnvironMax); raw && *raw)
        for (const char* name : {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
          if (auto v = host::parse::environ_value(**raw, name)) {
            if (auto r = text::to_int(*v); r && *r >= 0 && *r <= std::numeric_limits<int>::max())
              t.rank = static_cast<int>(*r);
            break;
          }
    }
    p.rank = t.rank;
  }
  return {};
}

}  // namespace dltune::monitor
