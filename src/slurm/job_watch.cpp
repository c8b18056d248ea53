#include "slurm/job_watch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/private_files.hpp"
#include "core/text.hpp"
#include "host/cgroup.hpp"
#include "monitor/sampler.hpp"

namespace dltune::slurm {

namespace {

// The job's group now, or nullopt when this node has none for it.
std::optional<host::SlurmJobGroup> job_group(const host::Root& root,
                                             const host::CgroupLayout& layout,
                                             const std::string& job_id,
                                             std::map<std::string, bool>& kinds) {
  auto jobs = host::discover_slurm_jobs(root, layout, &kinds);
  if (!jobs) return std::nullopt;
  for (const auto& j : *jobs)
    if (j.job_id == job_id) return j;
  return std::nullopt;
}

Result<void> write_record(const std::string& path, const JobRecord& record) {
  auto pending = local_file::PendingFile::beside(path, 0600);
  if (!pending) return tl::unexpected(pending.error());
  {
    std::ofstream out(pending->temp_path());
    out << to_json(record).dump() << "\n";
    if (!out.flush()) return fail("cannot write", pending->temp_path(), errno);
  }
  return pending->commit(true);
}

void sleep_ns(std::int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  ::nanosleep(&ts, nullptr);  // a signal ends it early: the loop looks at the stop flag
}

}  // namespace

void JobRecord::observe(const monitor::Model& model, std::optional<std::uint64_t> oom_kills_now,
                        int cpus_now, bool new_group) {
  const auto& g = model.cgroup;
  if (!g) return;
  ++samples;
  if (first_seen_ns == 0) first_seen_ns = model.wall_ns;
  last_seen_ns = model.wall_ns;
  path = g->path;
  cpus = std::max(cpus, cpus_now);
  if (new_group) {
    oom_kills_closed_ = oom_kills;  // the new group counts from 0
  }
  if (oom_kills_now) oom_kills = std::max(oom_kills, oom_kills_closed_ + *oom_kills_now);
  if (g->memory_peak_bytes)
    memory_peak_bytes = std::max(memory_peak_bytes.value_or(0), *g->memory_peak_bytes);
  if (g->memory_bytes)
    memory_peak_bytes = std::max(memory_peak_bytes.value_or(0), *g->memory_bytes);
  if (g->memory_limit_bytes) memory_limit_bytes = g->memory_limit_bytes;
  processes_peak = std::max<std::uint64_t>(processes_peak, model.processes.size());
  if (!model.has_rates || model.interval_s <= 0) return;
  seconds += model.interval_s;
  if (g->cpu_pct) cpu_seconds += *g->cpu_pct / 100 * model.interval_s;
  cpu_from_processes = cpu_from_processes || g->cpu_from_processes;
  for (const auto& p : model.processes) {
    if (!p.has_rates) continue;
    auto& kept = processes[p.pid];
    kept.command = p.comm;
    kept.threads = std::max(kept.threads, p.threads);
    kept.cpu_seconds += p.cpu_pct / 100 * model.interval_s;
  }
  // Only the busiest few are kept: a job that starts thousands of short processes stays small.
  while (processes.size() > kKeptProcesses) {
    auto least = std::min_element(processes.begin(), processes.end(), [](auto& a, auto& b) {
      return a.second.cpu_seconds < b.second.cpu_seconds;
    });
    processes.erase(least);
  }
}

const std::pair<const int, JobRecord::Process>* JobRecord::busiest() const {
  const std::pair<const int, Process>* best = nullptr;
  for (const auto& p : processes)
    if (best == nullptr || p.second.cpu_seconds > best->second.cpu_seconds) best = &p;
  return best;
}

JobUse JobRecord::use() const {
  JobUse u;
  u.job_id = job_id;
  u.path = path;
  // CPUs are judged only over a measured time: a job seen once (it ran here for less than an
  // interval) has none.
  u.cpus = seconds > 0 ? cpus : 0;
  u.seconds = seconds;
  u.cpus_used = seconds > 0 ? cpu_seconds / seconds : 0;
  u.cpu_from_processes = cpu_from_processes;
  // Nor is a peak seen once one: the job may have grown after it, in its last interval.
  if (seconds > 0) u.memory_peak_bytes = memory_peak_bytes;
  u.memory_limit_bytes = memory_limit_bytes;
  u.oom_kills = oom_kills;
  u.processes = processes_peak;
  if (const auto* b = busiest(); b != nullptr && seconds > 0) {
    u.busiest_pid = b->first;
    u.busiest_command = b->second.command;
    u.busiest_cpus = b->second.cpu_seconds / seconds;
    u.busiest_threads = static_cast<int>(b->second.threads);
  }
  u.gpus = gpus;
  return u;
}

inventory::Json to_json(const JobRecord& r) {
  auto processes = inventory::Json::array();
  for (const auto& [pid, p] : r.processes)
    processes.push_back({{"pid", pid},
                         {"command", p.command},
                         {"cpu_seconds", p.cpu_seconds},
                         {"threads", p.threads}});
  auto gpus = inventory::Json::array();
  for (const auto& g : r.gpus) {
    auto x = to_json(g);
    x["readings"] = g.readings;  // to go on with the mean
    gpus.push_back(std::move(x));
  }
  return {{"schema", "dltune.slurm-job-watch/1"},
          {"job_id", r.job_id},
          {"cgroup", r.path},
          {"watcher_pid", r.watcher_pid},
          {"started_ns", r.started_ns},
          {"first_seen_ns", r.first_seen_ns},
          {"last_seen_ns", r.last_seen_ns},
          {"samples", r.samples},
          {"cpus", r.cpus},
          {"seconds", r.seconds},
          {"cpu_seconds", r.cpu_seconds},
          {"cpu_from_processes", r.cpu_from_processes},
          {"memory_peak_bytes", json_or_null(r.memory_peak_bytes)},
          {"memory_limit_bytes", json_or_null(r.memory_limit_bytes)},
          {"oom_kills", r.oom_kills},
          {"processes_peak", r.processes_peak},
          {"processes", processes},
          {"gpus", gpus},
          {"ended", r.ended}};
}

Result<JobRecord> record_from_json(const inventory::Json& j, const std::string& source) {
  if (!j.is_object() || j.value("schema", "") != "dltune.slurm-job-watch/1")
    return fail("not a dltune.slurm-job-watch/1 document", source);
  try {
    JobRecord r;
    r.job_id = j.at("job_id").get<std::string>();
    r.path = j.at("cgroup").get<std::string>();
    r.watcher_pid = j.at("watcher_pid").get<int>();
    r.started_ns = j.at("started_ns").get<std::int64_t>();
    r.first_seen_ns = j.at("first_seen_ns").get<std::int64_t>();
    r.last_seen_ns = j.at("last_seen_ns").get<std::int64_t>();
    r.samples = j.at("samples").get<std::uint64_t>();
    r.cpus = j.at("cpus").get<int>();
    r.seconds = j.at("seconds").get<double>();
    r.cpu_seconds = j.at("cpu_seconds").get<double>();
    r.cpu_from_processes = j.at("cpu_from_processes").get<bool>();
    if (!j.at("memory_peak_bytes").is_null())
      r.memory_peak_bytes = j.at("memory_peak_bytes").get<std::uint64_t>();
    if (!j.at("memory_limit_bytes").is_null())
      r.memory_limit_bytes = j.at("memory_limit_bytes").get<std::uint64_t>();
    r.oom_kills = j.at("oom_kills").get<std::uint64_t>();
    r.processes_peak = j.at("processes_peak").get<std::uint64_t>();
    for (const auto& p : j.at("processes"))
      r.processes[p.at("pid").get<int>()] = {p.at("command").get<std::string>(),
                                             p.at("cpu_seconds").get<double>(),
                                             p.at("threads").get<std::uint64_t>()};
    // (A watcher from before GPUs were read wrote none.)
    for (const auto& g : j.value("gpus", inventory::Json::array())) {
      JobGpu x;
      x.index = g.at("index").get<unsigned>();
      x.name = g.at("name").get<std::string>();
      if (!g.at("utilization_pct").is_null())
        x.utilization_pct = g.at("utilization_pct").get<double>();
      x.readings = g.at("readings").get<std::size_t>();
      // (A watcher from before Slurm's GPUs were read kept only those used.)
      x.allocated = g.value("allocated", false);
      x.used = g.value("used", true);
      x.memory_bytes = g.at("memory_bytes").get<std::uint64_t>();
      if (!g.at("memory_total_bytes").is_null())
        x.memory_total_bytes = g.at("memory_total_bytes").get<std::uint64_t>();
      r.gpus.push_back(std::move(x));
    }
    r.ended = j.at("ended").get<bool>();
    return r;
  } catch (const inventory::Json::exception& e) {
    return fail(
        std::string("a dltune.slurm-job-watch/1 document with a bad field (") + e.what() + ")",
        source);
  }
}

std::string record_path(const std::string& state_dir, const std::string& job_id) {
  return state_dir + "/job-" + job_id + ".json";
}

Result<void> check_job_id(const std::string& job_id) {
  if (job_id.empty() || job_id.size() > 20 ||
      !std::all_of(job_id.begin(), job_id.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return fail("not a Slurm job id (digits, as squeue's JOBID)", job_id);
  return {};
}

Result<void> watch_job(const host::Root& root, const WatchRequest& request,
                       const volatile sig_atomic_t* stop) {
  if (auto ok = check_job_id(request.job_id); !ok) return ok;
  // Root's own (the Epilog trusts the watcher's pid from the record kept there).
  if (auto ok = private_files::make_private_dir(request.state_dir); !ok) return ok;
  auto layout = host::cgroup_layout(root);
  if (!layout) return tl::unexpected(layout.error());
  const std::string file = record_path(request.state_dir, request.job_id);

  JobRecord record;
  record.job_id = request.job_id;
  record.watcher_pid = static_cast<int>(::getpid());
  record.started_ns = now_ns(CLOCK_REALTIME);
  if (auto ok = write_record(file, record); !ok) return ok;

  std::map<std::string, bool> kinds;
  std::unique_ptr<monitor::Sampler> sampler;
  monitor::Sample previous, now;
  std::int64_t absent_since = record.started_ns;
  std::uint64_t inode = 0;  // of the group last sampled
  std::string dir;          // its directory
  // Whether the directory sampled is still that group: Slurm removes a job's group when its
  // last step ends and makes it again for the next, which can fall between two samples; the
  // sampler would read the new group's counters (from 0) as the old one's. One stat, after the
  // sample, so that a sample that read the new group's files in part is not kept either. A
  // directory whose inode could not be read when found (0) is taken as the same, as before.
  const auto still_there = [&] {
    if (inode == 0) return true;
    auto info = root.stat(dir);
    return info && *info && (*info)->inode == inode;
  };
  // The GPUs Slurm gave the job here, from its processes' environment: looked for in each
  // process once, until found (in the first few hundred: a job without GPUs on a GPU node that
  // starts thousands of processes is not read for ever).
  std::vector<unsigned> allocated;
  std::vector<pid_t> tried;
  while (stop == nullptr || *stop == 0) {
    if (!sampler) {
      if (auto group = job_group(root, *layout, request.job_id, kinds)) {
        monitor::SamplerOptions options;
        options.scope = {monitor::Scope::Kind::kCgroup, 0, group->path};
        options.gpus = request.gpus;
        options.nvml_library = request.nvml_library;
        // The group listed again after its first sample, with the same inode: the files that
        // sample read are that group's, not those of one made again in between (its directory
        // was listed, then removed and made again before the files were opened).
        auto s = monitor::Sampler::open(root, options);
        const auto same = [&] {
          const auto again = job_group(root, *layout, request.job_id, kinds);
          return again && again->inode == group->inode;
        };
        if (s && (*s)->sample(previous) && same()) {
          sampler = std::move(*s);
          // A group found again after samples of an earlier one is a new one (its counters
          // start over) when it was made again; the same group again (a sample that failed for
          // a moment) goes on from where it was, or its OOM kills would be counted twice.
          const bool made_again =
              record.samples > 0 && (group->inode == 0 || group->inode != inode);
          inode = group->inode;
          dir = group->dir;
          record.observe(monitor::Model::from(previous, nullptr),
                         previous.cgroup ? previous.cgroup->events_oom_kill : std::nullopt,
                         allocated_cpus(root, *layout, group->path), made_again);
        }
      }
    } else if (auto ok = sampler->sample(now); !ok || !now.cgroup || !still_there()) {
      // The group is gone (the job's last step ended), unreadable, or made again (the next
      // loop finds it with its new inode).
      sampler.reset();
      absent_since = now_ns(CLOCK_REALTIME);
    } else {
      const auto m = monitor::Model::from(now, &previous);
      record.observe(m, now.cgroup->events_oom_kill,
                     allocated_cpus(root, *layout, now.cgroup->path), false);
      if (request.gpus && allocated.empty() && !now.gpus.empty() && tried.size() < 256) {
        std::vector<pid_t> pids;
        for (const auto& p : now.processes) pids.push_back(p.pid);
        allocated = slurm_gpus_of(root, pids, tried);
      }
      add_gpu_use(now, record.gpus, allocated);
      std::swap(previous, now);
    }
    if (auto ok = write_record(file, record); !ok) return ok;
    if (!sampler && now_ns(CLOCK_REALTIME) - absent_since > request.linger_ns) break;
    sleep_ns(request.interval_ns);
  }
  record.ended = true;
  return write_record(file, record);
}

Result<int> start_detached(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return fail("cannot make a pipe", "", errno);
  const pid_t first = ::fork();
  if (first < 0) {
    const int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    return fail("cannot fork", argv.front(), e);
  }
  if (first == 0) {
    // The first child: a session of its own, then a grandchild that no one waits for (init
    // reaps it), so that slurmd's kill of the Prolog's process group never reaches it.
    ::setsid();
    const pid_t second = ::fork();
    if (second != 0) {
      (void)!::write(report[1], &second, sizeof second);
      ::_exit(second < 0 ? 1 : 0);
    }
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    // Every descriptor slurmd left open (the report pipe closes on exec).
    if (::close_range(3, ~0U, 0) != 0)
      for (int fd = 3; fd < 1024; ++fd)
        if (fd != report[1]) ::close(fd);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(report[1]);
  pid_t second = -1;
  const auto n = ::read(report[0], &second, sizeof second);
  ::close(report[0]);
  int status = 0;
  ::waitpid(first, &status, 0);
  if (n != sizeof second || second <= 0) return fail("cannot fork", argv.front());
  return static_cast<int>(second);
}

std::optional<std::string> running_job_group(const host::Root& root, const std::string& job_id) {
  auto layout = host::cgroup_layout(root);
  if (!layout) return std::nullopt;
  std::map<std::string, bool> kinds;
  if (auto group = job_group(root, *layout, job_id, kinds)) return group->path;
  return std::nullopt;
}

Result<int> start_watch(const WatchRequest& request) {
  if (auto ok = check_job_id(request.job_id); !ok) return tl::unexpected(ok.error());
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return fail("cannot find this program", "/proc/self/exe", ec.value());
  return start_detached({self.string(), "slurm", "watch", request.job_id, "--state-dir",
                         request.state_dir, "--interval",
                         text::format_duration_ns(request.interval_ns)});
}

Result<JobRecord> stop_watch(const std::string& state_dir, const std::string& job_id,
                             std::int64_t wait_ns) {
  if (auto ok = check_job_id(job_id); !ok) return tl::unexpected(ok.error());
  const std::string file = record_path(state_dir, job_id);
  auto load = [&]() -> Result<JobRecord> {
    std::ifstream in(file);
    if (!in) return fail("no watch of the job on this node (the Prolog starts it)", file, ENOENT);
    std::stringstream s;
    s << in.rdbuf();
    auto j = inventory::Json::parse(s.str(), nullptr, false);
    return record_from_json(j, file);
  };
  auto record = load();
  if (!record || record->ended) return record;
  // Its watcher, if the pid is still one: "dltune slurm watch J" in its command line.
  const int pid = record->watcher_pid;
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::replace(args.begin(), args.end(), '\0', ' ');
  if (pid <= 0 || args.find(" slurm watch " + job_id + " ") == std::string::npos) return record;
  ::kill(pid, SIGTERM);
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(wait_ns);
  while (std::chrono::steady_clock::now() < end) {
    sleep_ns(20'000'000);
    if (auto r = load(); r && r->ended) return r;
  }
  return load();
}

namespace {

volatile sig_atomic_t g_watch_stop = 0;
void on_watch_stop(int) {
  g_watch_stop = 1;
}

}  // namespace

Result<void> watch_until_stopped(const host::Root& root, const WatchRequest& request) {
  g_watch_stop = 0;
  struct sigaction sa = {};
  sa.sa_handler = on_watch_stop;  // no SA_RESTART: the sleep between samples ends at once
  for (int s : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &sa, nullptr);
  return watch_job(root, request, &g_watch_stop);
}

}  // namespace dltune::slurm
