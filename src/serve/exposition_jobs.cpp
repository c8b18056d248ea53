// The job cgroups' families (monitor/cgroup_collector.cpp reads the files): every series has
// the label cgroup, the group's path as /proc/PID/cgroup shows it, a Slurm job's also
// slurm_job_id and user, a Slurm step's those and step, a Kubernetes pod's pod_uid. A value the
// kernel does not give for the group (no limit, no memory.peak before Linux 5.19, no PSI on v1) is
// left out. The jobs' GPU families join NVML's process lists with the groups' member pids.
#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/text.hpp"
#include "serve/exposition.hpp"

namespace dltune::serve {

namespace {

using monitor::Cgroup;
using enum MetricType;

// A Slurm job's series also say which job and whose, so that Prometheus can sum a job over
// the nodes it ran on.
// The labels of `group` when it is a Slurm job's (looked up for each series: a warm render
// allocates nothing).
const SlurmJobLabels* slurm_of(const SlurmJobs* slurm, const Cgroup& group) {
  if (slurm == nullptr || slurm->empty()) return nullptr;
  const auto it = slurm->find(group.path);
  return it == slurm->end() ? nullptr : &it->second;
}

// A pod's UID when `group` is a Kubernetes pod's, else null.
const std::string* pod_of(const PodUids* pods, const Cgroup& group) {
  if (pods == nullptr || pods->empty()) return nullptr;
  const auto it = pods->find(group.path);
  return it == pods->end() ? nullptr : &it->second;
}

// Whose group it is: a Slurm job's (or step's), a pod's, or neither.
struct Owner {
  const SlurmJobLabels* slurm = nullptr;
  const std::string* pod_uid = nullptr;
};

template <class V>
void put(MetricSink& sink, const Cgroup& g, const Owner& o, V value) {
  const SlurmJobLabels* s = o.slurm;
  if (s == nullptr && o.pod_uid != nullptr)
    sink.sample({{"cgroup", g.path}, {"pod_uid", *o.pod_uid}}, value);
  else if (s == nullptr)
    sink.sample({{"cgroup", g.path}}, value);
  else if (s->step.empty())
    sink.sample({{"cgroup", g.path}, {"slurm_job_id", s->job_id}, {"user", s->user}}, value);
  else
    sink.sample(
        {{"cgroup", g.path}, {"slurm_job_id", s->job_id}, {"user", s->user}, {"step", s->step}},
        value);
}

// The same with two more labels after the group's.
template <class V>
void put(MetricSink& sink, const Cgroup& g, const Owner& o, Label a, Label b, V value) {
  const SlurmJobLabels* s = o.slurm;
  if (s == nullptr && o.pod_uid != nullptr)
    sink.sample({{"cgroup", g.path}, {"pod_uid", *o.pod_uid}, a, b}, value);
  else if (s == nullptr)
    sink.sample({{"cgroup", g.path}, a, b}, value);
  else if (s->step.empty())
    sink.sample({{"cgroup", g.path}, {"slurm_job_id", s->job_id}, {"user", s->user}, a, b}, value);
  else
    sink.sample({{"cgroup", g.path},
                 {"slurm_job_id", s->job_id},
                 {"user", s->user},
                 {"step", s->step},
                 a,
                 b},
                value);
}

struct Jobs {
  std::span<const Cgroup> groups;
  const SlurmJobs* slurm;
  const PodUids* pods;
  [[nodiscard]] Owner owner(const Cgroup& g) const { return {slurm_of(slurm, g), pod_of(pods, g)}; }
};

template <class Get>
void each(const Jobs& jobs, MetricSink& sink, const char* name, MetricType type, const char* help,
          Get get) {
  sink.family(name, type, help);
  for (const auto& g : jobs.groups)
    if (const auto v = get(g)) put(sink, g, jobs.owner(g), *v);
}

std::optional<double> us_to_seconds(const std::optional<std::uint64_t>& us) {
  if (!us) return std::nullopt;
  return static_cast<double>(*us) / 1e6;
}

}  // namespace

void render_jobs(std::span<const Cgroup> groups, const SlurmJobs* slurm, MetricSink& sink,
                 const PodUids* pods) {
  const Jobs all{groups, slurm, pods};
  each(all, sink, "dltune_job_cpu_seconds_total", kCounter,
       "CPU time of the group's processes (v2 cpu.stat usage_usec, v1 cpuacct.usage)",
       [](const Cgroup& c) { return us_to_seconds(c.cpu_usage_us); });
  each(all, sink, "dltune_job_cpu_user_seconds_total", kCounter,
       "User CPU time of the group's processes (v2 cpu.stat user_usec, v1 cpuacct.stat user)",
       [](const Cgroup& c) { return us_to_seconds(c.cpu_user_us); });
  each(all, sink, "dltune_job_cpu_system_seconds_total", kCounter,
       "System CPU time of the group's processes (v2 cpu.stat system_usec, v1 cpuacct.stat "
       "system)",
       [](const Cgroup& c) { return us_to_seconds(c.cpu_system_us); });
  each(all, sink, "dltune_job_cpu_quota_cpus", kGauge,
       "The group's CPU limit in CPUs, quota over period (v2 cpu.max, v1 cpu.cfs_quota_us); "
       "absent when unlimited",
       [](const Cgroup& c) { return c.cpu_quota_cpus; });
  each(all, sink, "dltune_job_cpus", kGauge,
       "The CPUs the group's cpuset allows (v2 cpuset.cpus.effective, v1 cpuset.cpus): a Slurm "
       "job's allocation on this node; absent without a cpuset of its own",
       [](const Cgroup& c) {
         return c.cpuset_cpus ? std::optional<std::uint64_t>(*c.cpuset_cpus) : std::nullopt;
       });
  each(all, sink, "dltune_job_cpu_periods_total", kCounter,
       "CFS bandwidth periods in which the group ran (cpu.stat nr_periods)",
       [](const Cgroup& c) { return c.nr_periods; });
  each(all, sink, "dltune_job_cpu_throttled_periods_total", kCounter,
       "Periods in which the group used up its quota and was throttled (cpu.stat nr_throttled)",
       [](const Cgroup& c) { return c.nr_throttled; });
  each(all, sink, "dltune_job_cpu_throttled_seconds_total", kCounter,
       "Time the group's threads were held back by its CPU quota (cpu.stat throttled_usec, v1 "
       "throttled_time)",
       [](const Cgroup& c) { return us_to_seconds(c.throttled_us); });
  each(all, sink, "dltune_job_memory_bytes", kGauge,
       "Memory charged to the group, page cache included (memory.current, v1 "
       "memory.usage_in_bytes)",
       [](const Cgroup& c) { return c.memory_bytes; });
  each(all, sink, "dltune_job_memory_limit_bytes", kGauge,
       "The group's memory limit (memory.max, v1 memory.limit_in_bytes); absent when unlimited",
       [](const Cgroup& c) { return c.memory_limit_bytes; });
  each(all, sink, "dltune_job_memory_peak_bytes", kGauge,
       "The most memory the group has used (memory.peak, v1 memory.max_usage_in_bytes)",
       [](const Cgroup& c) { return c.memory_peak_bytes; });
  each(all, sink, "dltune_job_swap_bytes", kGauge,
       "The group's memory in swap (memory.swap.current, v1 memory.stat swap)",
       [](const Cgroup& c) { return c.swap_bytes; });
  each(all, sink, "dltune_job_memory_anon_bytes", kGauge,
       "The group's anonymous memory (memory.stat anon, v1 rss)",
       [](const Cgroup& c) { return c.anon_bytes; });
  each(all, sink, "dltune_job_memory_file_bytes", kGauge,
       "The group's page cache (memory.stat file, v1 cache)",
       [](const Cgroup& c) { return c.file_bytes; });
  each(all, sink, "dltune_job_memory_limit_hits_total", kCounter,
       "Times the group's memory reached its limit (memory.events max, v1 memory.failcnt)",
       [](const Cgroup& c) { return c.failcnt; });
  each(all, sink, "dltune_job_oom_events_total", kCounter,
       "Times the group's memory limit invoked the OOM killer (v2 memory.events oom; v1 has no "
       "such counter)",
       [](const Cgroup& c) { return c.events_oom; });
  each(all, sink, "dltune_job_oom_kills_total", kCounter,
       "Processes of the group killed by the OOM killer (memory.events oom_kill, v1 "
       "memory.oom_control oom_kill)",
       [](const Cgroup& c) { return c.events_oom_kill; });
  each(all, sink, "dltune_job_workingset_refault_file_total", kCounter,
       "The group's page cache read again soon after eviction (memory.stat "
       "workingset_refault_file)",
       [](const Cgroup& c) { return c.workingset_refault_file; });
  each(all, sink, "dltune_job_major_page_faults_total", kCounter,
       "The group's page faults that needed I/O (memory.stat pgmajfault)",
       [](const Cgroup& c) { return c.pgmajfault; });

  sink.family("dltune_job_pressure_stall_seconds_total", kCounter,
              "Time in which some (kind=full: all) of the group's tasks were stalled on the "
              "resource (the group's cpu.pressure, memory.pressure, io.pressure, total=)");
  for (const auto& g : groups) {
    const Owner owner = all.owner(g);
    for_each_stall(g.pressure, [&](const char* resource, const char* kind, double seconds) {
      put(sink, g, owner, {"resource", resource}, {"kind", kind}, seconds);
    });
  }
  each(all, sink, "dltune_job_processes", kGauge,
       "Processes in the group and the groups below it now (cgroup.procs)",
       [](const Cgroup& c) { return c.pids; });
}

namespace {

// Whether `pid` is one of `members` (sorted).
bool member(std::span<const pid_t> members, pid_t pid) {
  return std::binary_search(members.begin(), members.end(), pid);
}

// For each group with members and each GPU that runs one of its processes, the sum of `get` over
// those processes, written through `as` with the GPU's labels; a pair where one process's value
// is unknown is left out rather than summed wrong.
template <class Get, class As>
void per_job_and_gpu(const Snapshot& s, const Jobs& all, MetricSink& sink, Get get, As as) {
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    const auto& group = s.jobs[j];
    const std::span<const pid_t> members = s.job_members[j];
    if (members.empty()) continue;
    const Owner owner = all.owner(group);
    for (const auto& g : s.sample->gpus) {
      std::uint64_t sum = 0;
      bool any = false, known = true;
      for (const auto& p : g.processes) {
        if (!member(members, p.pid)) continue;
        any = true;
        if (const auto v = get(p))
          sum += *v;
        else
          known = false;
      }
      if (!any || !known) continue;
      const fmt::format_int index(g.index);
      put(sink, group, owner, {"gpu", {index.data(), index.size()}},
          {"uuid", g.uuid ? std::string_view(*g.uuid) : std::string_view()}, as(sum));
    }
  }
}

// One dltune_gpu_job_info series: the GPU's labels (those dcgm-exporter's series join on), then
// the group's and its owner's.
void put_gpu_job(MetricSink& sink, const monitor::Gpu& gpu, std::string_view hostname,
                 const Cgroup& g, const Owner& o) {
  const fmt::format_int index(gpu.index);
  const std::string_view i(index.data(), index.size());
  const std::string_view uuid = gpu.uuid ? std::string_view(*gpu.uuid) : std::string_view();
  const SlurmJobLabels* s = o.slurm;
  if (s == nullptr && o.pod_uid != nullptr)
    sink.sample({{"gpu", i},
                 {"UUID", uuid},
                 {"Hostname", hostname},
                 {"hostname", hostname},
                 {"cgroup", g.path},
                 {"pod_uid", *o.pod_uid}},
                std::uint64_t{1});
  else if (s == nullptr)
    sink.sample({{"gpu", i},
                 {"UUID", uuid},
                 {"Hostname", hostname},
                 {"hostname", hostname},
                 {"cgroup", g.path}},
                std::uint64_t{1});
  else if (s->step.empty())
    sink.sample({{"gpu", i},
                 {"UUID", uuid},
                 {"Hostname", hostname},
                 {"hostname", hostname},
                 {"cgroup", g.path},
                 {"slurm_job_id", s->job_id},
                 {"user", s->user}},
                std::uint64_t{1});
  else
    sink.sample({{"gpu", i},
                 {"UUID", uuid},
                 {"Hostname", hostname},
                 {"hostname", hostname},
                 {"cgroup", g.path},
                 {"slurm_job_id", s->job_id},
                 {"user", s->user},
                 {"step", s->step}},
                std::uint64_t{1});
}

}  // namespace

void render_job_gpus(const Snapshot& s, MetricSink& sink) {
  if (s.sample == nullptr || !s.gpus) return;
  const std::span<const monitor::Gpu> gpus = s.sample->gpus;
  // A GPU's process list is what NVML said once the GPU was read (sampled_at_ns); without any
  // such GPU no job's use is known. With processes listed, their owners are known only from the
  // groups' members.
  bool read = false, listed = false;
  for (const auto& g : gpus) {
    read = read || g.sampled_at_ns;
    listed = listed || !g.processes.empty();
  }
  if (!read || (listed && s.job_members.size() != s.jobs.size())) return;
  const Jobs all{s.jobs, s.slurm, s.pods};

  sink.family("dltune_job_gpu_memory_used_bytes", kGauge,
              "GPU memory used by the group's processes on this GPU "
              "(nvmlDeviceGetComputeRunningProcesses usedGpuMemory, summed over the group's "
              "processes); absent where NVML does not give a process's memory");
  if (listed)
    per_job_and_gpu(
        s, all, sink, [](const gpu::GpuProcess& p) { return p.used_memory_bytes; },
        [](std::uint64_t bytes) { return bytes; });

  sink.family("dltune_job_gpu_utilization_ratio", kGauge,
              "Share of the GPU's SMs the group's processes used over the last reading "
              "interval (nvmlDeviceGetProcessUtilization smUtil, summed over the group's "
              "processes, at most 1); absent where NVML does not give it");
  if (listed)
    per_job_and_gpu(
        s, all, sink,
        [](const gpu::GpuProcess& p) -> std::optional<std::uint64_t> {
          if (!p.sm_util_pct) return std::nullopt;
          return *p.sm_util_pct;
        },
        [](std::uint64_t pct) {
          return static_cast<double>(std::min<std::uint64_t>(pct, 100)) / 100.0;
        });

  sink.family("dltune_job_gpus", kGauge,
              "GPUs on which a process of the group runs now "
              "(nvmlDeviceGetComputeRunningProcesses)");
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    if (!s.jobs[j].pids) continue;  // its processes are not known
    std::uint64_t n = 0;
    if (listed) {
      const std::span<const pid_t> members = s.job_members[j];
      for (const auto& g : gpus)
        if (std::any_of(g.processes.begin(), g.processes.end(),
                        [&](const gpu::GpuProcess& p) { return member(members, p.pid); }))
          ++n;
    }
    put(sink, s.jobs[j], all.owner(s.jobs[j]), n);
  }

  // The join from a GPU to the job that holds it: for each GPU, the outermost of the groups
  // whose processes run on it (a Slurm job, not also its step; a pod, not also its container),
  // so that `* on (UUID) group_left (slurm_job_id) dltune_gpu_job_info` gives any GPU series,
  // dltune's or dcgm-exporter's, its job without a label per job on every GPU series.
  sink.family("dltune_gpu_job_info", kGauge,
              "1 for each GPU and the job whose processes run on it "
              "(nvmlDeviceGetComputeRunningProcesses and the job groups' members): join a GPU "
              "series on UUID to get its job's labels");
  if (!listed) return;
  // (Without a list of its own: a warm render allocates nothing. A few jobs and processes.)
  for (const auto& g : gpus) {
    const auto runs_on = [&](std::size_t j) {
      const std::span<const pid_t> members = s.job_members[j];
      return std::any_of(g.processes.begin(), g.processes.end(),
                         [&](const gpu::GpuProcess& p) { return member(members, p.pid); });
    };
    for (std::size_t j = 0; j < s.jobs.size(); ++j) {
      if (!runs_on(j)) continue;
      bool inner = false;
      for (std::size_t k = 0; k < s.jobs.size() && !inner; ++k)
        inner = k != j && text::path_within(s.jobs[j].path, s.jobs[k].path) && runs_on(k);
      if (!inner) put_gpu_job(sink, g, s.hostname, s.jobs[j], all.owner(s.jobs[j]));
    }
  }
}

}  // namespace dltune::serve
