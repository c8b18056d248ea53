// The profile's signals from a Model (diagnose/signals.hpp).
#include "diagnose/signals.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/core.h>

namespace dltune::diagnose {

namespace {

using monitor::Role;

// The clock event reasons that slow a GPU below what it would run at (NVML "Clocks Event
// Reasons", gpu/nvml_types.hpp): SwPowerCap, HwSlowdown, SwThermalSlowdown, HwThermalSlowdown,
// HwPowerBrakeSlowdown. Not GpuIdle, the applications or display clock settings, or SyncBoost.
constexpr std::uint64_t kSlowdownReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

constexpr std::array<SignalInfo, kSignalCount> kTable = {{
    {Signal::kMainOnCpu, "main.on_cpu", "%", "main thread on a CPU", Aggregate::kMean},
    {Signal::kMainCpu, "main.cpu", "%", "main process CPU (all its threads)", Aggregate::kMean},
    {Signal::kMainRunQueue, "main.run_queue", "%", "main thread waiting for a CPU",
     Aggregate::kMean},
    {Signal::kMainSystemShare, "main.system_share", "%", "main process CPU spent in the kernel",
     Aggregate::kMean},
    {Signal::kMainMinorFaults, "main.minor_faults", "/s", "main process minor page faults",
     Aggregate::kMean},
    {Signal::kMainRunning, "main.running", "share", "main thread runnable (R)", Aggregate::kMean},
    {Signal::kMainSleeping, "main.sleeping", "share", "main thread sleeping (S, waiting)",
     Aggregate::kMean},
    {Signal::kMainBlocked, "main.blocked", "share", "main thread in uninterruptible I/O wait (D)",
     Aggregate::kMean},
    {Signal::kMainInvoluntary, "main.involuntary", "/s",
     "main thread preempted (involuntary switches)", Aggregate::kMean},
    {Signal::kMainThreads, "main.threads", "", "main process threads", Aggregate::kMax},
    {Signal::kWorkersCount, "workers.count", "", "DataLoader workers", Aggregate::kMax},
    {Signal::kWorkersCpu, "workers.cpu", "%", "CPU per DataLoader worker", Aggregate::kMean},
    {Signal::kWorkersOnCpu, "workers.on_cpu", "%", "worker thread on a CPU", Aggregate::kMean},
    {Signal::kWorkersRunning, "workers.running", "share", "workers runnable (R)", Aggregate::kMean},
    {Signal::kWorkersBlocked, "workers.blocked", "share", "workers in uninterruptible I/O wait (D)",
     Aggregate::kMean},
    {Signal::kWorkersRunQueue, "workers.run_queue", "%", "workers waiting for a CPU",
     Aggregate::kMean},
    {Signal::kJobCpu, "job.cpu", "%", "the job's CPU", Aggregate::kMean},
    {Signal::kJobBlocked, "job.blocked", "", "the job's processes in D", Aggregate::kMean},
    {Signal::kJobReadBytes, "job.read_bytes", "B/s", "the job's storage reads", Aggregate::kMean},
    {Signal::kJobMajorFaults, "job.major_faults", "/s", "the job's major page faults",
     Aggregate::kMean},
    {Signal::kJobPsiCpu, "job.psi_cpu", "%", "the job's cgroup stalled on CPU (PSI some)",
     Aggregate::kMean},
    {Signal::kJobPsiMemory, "job.psi_memory", "%", "the job's cgroup stalled on memory (PSI some)",
     Aggregate::kMean},
    {Signal::kJobPsiIo, "job.psi_io", "%", "the job's cgroup stalled on I/O (PSI some)",
     Aggregate::kMean},
    {Signal::kJobPsiIoFull, "job.psi_io_full", "%",
     "the job's cgroup fully stalled on I/O (PSI full)", Aggregate::kMean},
    {Signal::kJobGpus, "job.gpus", "", "GPUs the job uses", Aggregate::kMax},
    {Signal::kGpuUtil, "gpu.util", "%", "utilisation of the job's GPUs", Aggregate::kMean},
    {Signal::kGpuSmClock, "gpu.sm_clock", "MHz", "SM clock of the job's GPUs", Aggregate::kMean},
    {Signal::kGpuSlowdown, "gpu.slowdown", "share",
     "a job's GPU slowed by its power cap or temperature", Aggregate::kMean},
    {Signal::kGpuSmActive, "gpu.sm_active", "%", "SM activity of the job's GPUs", Aggregate::kMean},
    {Signal::kHostCpus, "host.cpus", "", "CPUs", Aggregate::kMax},
    {Signal::kHostIdleCpus, "host.idle_cpus", "CPUs", "idle CPUs", Aggregate::kMean},
    {Signal::kHostOtherCpu, "host.other_cpu", "%", "CPU used outside the job", Aggregate::kMean},
    {Signal::kHostIowait, "host.iowait", "%", "host iowait", Aggregate::kMean},
    {Signal::kHostPsiCpu, "host.psi_cpu", "%", "host stalled on CPU (PSI some)", Aggregate::kMean},
    {Signal::kHostPsiMemory, "host.psi_memory", "%", "host stalled on memory (PSI some)",
     Aggregate::kMean},
    {Signal::kHostPsiIo, "host.psi_io", "%", "host stalled on I/O (PSI some)", Aggregate::kMean},
    {Signal::kHostSwapIn, "host.swap_in", "B/s", "swap-ins", Aggregate::kMean},
    {Signal::kHostMajorFaults, "host.major_faults", "/s", "host major page faults",
     Aggregate::kMean},
    {Signal::kHostRefaultFile, "host.refault_file", "/s", "host page-cache refaults",
     Aggregate::kMean},
    {Signal::kHostOomKills, "host.oom_kills", "", "OOM kills on the host", Aggregate::kSum},
    {Signal::kDiskRead, "disk.read", "B/s", "disk reads", Aggregate::kMean},
    {Signal::kDiskUtil, "disk.util", "%", "busiest disk's utilisation", Aggregate::kMean},
    {Signal::kCgroupThrottled, "cgroup.throttled", "%", "the job's cgroup CPU-throttled",
     Aggregate::kMean},
    {Signal::kCgroupMemoryUse, "cgroup.memory_use", "%", "the job's memory against its limit",
     Aggregate::kMean},
    {Signal::kCgroupFailcnt, "cgroup.failcnt", "/s", "the job's cgroup hitting its memory limit",
     Aggregate::kMean},
    {Signal::kCgroupRefaultFile, "cgroup.refault_file", "/s",
     "page cache of the job read again after eviction (refaults)", Aggregate::kMean},
    {Signal::kCgroupOomKills, "cgroup.oom_kills", "", "OOM kills in the job's cgroup",
     Aggregate::kSum},
    {Signal::kPySamples, "py.samples", "", "Python stacks of the main thread read",
     Aggregate::kSum},
    {Signal::kPyLoading, "py.loading", "share",
     "main thread's time on a CPU loading and decoding data (its Python stacks)", Aggregate::kMean},
    {Signal::kPyModel, "py.model", "share", "main thread's time on a CPU in the model",
     Aggregate::kMean},
    {Signal::kPyPython, "py.python", "share",
     "main thread's time on a CPU in Python outside the model and the data", Aggregate::kMean},
    {Signal::kPyWaitData, "py.wait_data", "share",
     "main thread waiting for the DataLoader's workers (its Python stacks)", Aggregate::kMean},
    {Signal::kPySync, "py.sync", "share", "main thread in a synchronising call", Aggregate::kMean},
    {Signal::kPyLogging, "py.logging", "share", "main thread logging or checkpointing",
     Aggregate::kMean},
    {Signal::kSuggestWorkers, "suggest.workers", "", "workers the idle CPUs allow",
     Aggregate::kMin},
}};

double share(bool b) {
  return b ? 1.0 : 0.0;
}

void set(SignalValues& v, Signal s, std::optional<double> x) {
  if (x && std::isfinite(*x)) v[static_cast<std::size_t>(s)] = *x;
}

std::optional<double> psi(const std::optional<monitor::PressureModel>& p) {
  if (!p) return std::nullopt;
  return p->some_pct;
}

}  // namespace

const std::array<SignalInfo, kSignalCount>& signal_table() {
  return kTable;
}

const SignalInfo& info(Signal s) {
  return kTable[static_cast<std::size_t>(s)];
}

std::optional<Signal> signal_by_name(std::string_view name) {
  for (const auto& i : kTable)
    if (i.name == name) return i.signal;
  return std::nullopt;
}

SignalValues signals_of(const monitor::Model& m) {
  SignalValues v{};
  if (!m.has_rates) return v;
  const monitor::ProcessModel* main = nullptr;
  std::vector<const monitor::ProcessModel*> workers;
  std::set<pid_t> job;
  double job_cpu = 0, job_read = 0, job_major = 0, job_blocked = 0;
  bool job_read_known = false;
  double sampled_cpu = 0;  // every sampled process: the job's tree (under a launcher, all ranks)
  for (const auto& p : m.processes) {
    if (p.has_rates) sampled_cpu += p.cpu_pct;
    if (p.role == Role::kOther || p.state == 'Z' || p.state == 'X') continue;  // ended
    job.insert(p.pid);
    if (p.role == Role::kMain) main = &p;
    if (p.role == Role::kWorker) workers.push_back(&p);
    if (p.state == 'D') job_blocked += 1;
    if (!p.has_rates) continue;
    job_cpu += p.cpu_pct;
    job_major += p.major_faults_s;
    if (p.read_bytes_s) {
      job_read += *p.read_bytes_s;
      job_read_known = true;
    }
  }
  if (!job.empty()) {
    set(v, Signal::kJobCpu, job_cpu);
    set(v, Signal::kJobBlocked, job_blocked);
    set(v, Signal::kJobMajorFaults, job_major);
    if (job_read_known) set(v, Signal::kJobReadBytes, job_read);
  }
  if (main != nullptr && main->has_rates) {
    set(v, Signal::kMainOnCpu, main->on_cpu_pct);
    set(v, Signal::kMainCpu, main->cpu_pct);
    set(v, Signal::kMainRunQueue, main->run_queue_pct);
    // The kernel's share means something only when the process does run.
    if (main->cpu_pct >= 20)
      set(v, Signal::kMainSystemShare, main->system_pct / main->cpu_pct * 100);
    set(v, Signal::kMainMinorFaults, main->minor_faults_s);
    set(v, Signal::kMainRunning, share(main->state == 'R'));
    set(v, Signal::kMainSleeping, share(main->state == 'S'));
    set(v, Signal::kMainBlocked, share(main->state == 'D'));
    set(v, Signal::kMainInvoluntary, main->involuntary_switches_s);
    set(v, Signal::kMainThreads, static_cast<double>(main->threads));
  }
  if (main != nullptr) set(v, Signal::kWorkersCount, static_cast<double>(workers.size()));
  {
    double cpu = 0, on = 0, rq = 0, running = 0, blocked = 0;
    int n = 0, n_on = 0, n_rq = 0;
    for (const auto* w : workers) {
      if (!w->has_rates) continue;
      ++n;
      cpu += w->cpu_pct;
      running += share(w->state == 'R');
      blocked += share(w->state == 'D');
      if (w->on_cpu_pct) {
        on += *w->on_cpu_pct;
        ++n_on;
      }
      if (w->run_queue_pct) {
        rq += *w->run_queue_pct;
        ++n_rq;
      }
    }
    if (n > 0) {
      set(v, Signal::kWorkersCpu, cpu / n);
      set(v, Signal::kWorkersRunning, running / n);
      set(v, Signal::kWorkersBlocked, blocked / n);
    }
    if (n_on > 0) set(v, Signal::kWorkersOnCpu, on / n_on);
    if (n_rq > 0) set(v, Signal::kWorkersRunQueue, rq / n_rq);
  }
  if (m.cgroup) {
    const auto& c = *m.cgroup;
    set(v, Signal::kJobPsiCpu, psi(c.pressure.cpu));
    set(v, Signal::kJobPsiMemory, psi(c.pressure.memory));
    set(v, Signal::kJobPsiIo, psi(c.pressure.io));
    if (c.pressure.io && c.pressure.io->full_pct)
      set(v, Signal::kJobPsiIoFull, *c.pressure.io->full_pct);
    set(v, Signal::kCgroupThrottled, c.throttled_pct);
    if (c.memory_limit_bytes) set(v, Signal::kCgroupMemoryUse, c.memory_limit_pct);
    if (c.failcnt_delta && m.interval_s > 0)
      set(v, Signal::kCgroupFailcnt, static_cast<double>(*c.failcnt_delta) / m.interval_s);
    set(v, Signal::kCgroupRefaultFile, c.refault_file_s);
    if (c.oom_kills_delta) set(v, Signal::kCgroupOomKills, static_cast<double>(*c.oom_kills_delta));
  }
  // GPUs: those with a process of the job; when no GPU lists processes (a container without the
  // host's PID namespace), every GPU, since the job's own cannot be told apart.
  {
    double util = 0, clock = 0, sm = 0;
    int used = 0, util_n = 0, clock_n = 0, sm_n = 0;
    std::optional<bool> slowed;
    bool any_processes = false;
    for (const auto& g : m.gpus) any_processes = any_processes || !g.processes.empty();
    for (const auto& g : m.gpus) {
      bool mine = !any_processes;
      for (const auto& gp : g.processes) mine = mine || job.count(gp.pid) > 0;
      if (!mine) continue;
      ++used;
      if (g.utilization_gpu_pct) {
        util += *g.utilization_gpu_pct;
        ++util_n;
      }
      if (g.sm_clock_mhz) {
        clock += *g.sm_clock_mhz;
        ++clock_n;
      }
      if (g.sm_active_pct) {
        sm += *g.sm_active_pct;
        ++sm_n;
      }
      if (g.clock_event_reasons)
        slowed = slowed.value_or(false) || (*g.clock_event_reasons & kSlowdownReasons) != 0;
    }
    set(v, Signal::kJobGpus, static_cast<double>(used));
    if (util_n > 0) set(v, Signal::kGpuUtil, util / util_n);
    if (clock_n > 0) set(v, Signal::kGpuSmClock, clock / clock_n);
    if (sm_n > 0) set(v, Signal::kGpuSmActive, sm / sm_n);
    if (slowed) set(v, Signal::kGpuSlowdown, share(*slowed));
  }
  const double cpus = m.cpus.empty() ? 1.0 : static_cast<double>(m.cpus.size());
  set(v, Signal::kHostCpus, cpus);
  const double idle = (m.cpu.idle_pct + m.cpu.iowait_pct) / 100.0 * cpus;
  set(v, Signal::kHostIdleCpus, idle);
  // Outside the job: the host's busy CPU less what the sampled tree used (a rank's siblings
  // under a launcher are the job's own load, not an outsider's). Steal is left out: it is the
  // hypervisor's, is not charged to any process here, and shows as no run-queue wait. Nor is the
  // observer (the sampling process: `dltune run --record`'s recorder) load on the job: under a
  // sanitizer build it took a fifth of a CPU and tipped a verdict to "oversubscribed".
  if (!job.empty())
    set(v, Signal::kHostOtherCpu,
        std::max(0.0, (m.cpu.busy_pct() - m.cpu.steal_pct) * cpus - sampled_cpu -
                          m.observer_cpu_pct.value_or(0.0)));
  set(v, Signal::kHostIowait, m.cpu.iowait_pct);
  set(v, Signal::kHostPsiCpu, psi(m.pressure.cpu));
  set(v, Signal::kHostPsiMemory, psi(m.pressure.memory));
  set(v, Signal::kHostPsiIo, psi(m.pressure.io));
  set(v, Signal::kHostSwapIn, m.memory.swap_in_bytes_s);
  set(v, Signal::kHostMajorFaults, m.memory.major_faults_s);
  set(v, Signal::kHostRefaultFile, m.memory.refault_file_s);
  set(v, Signal::kHostOomKills, static_cast<double>(m.memory.oom_kills));
  {
    double read = 0, util = 0;
    for (const auto& d : m.disks) {
      read += d.read_bytes_s;
      util = std::max(util, d.util_pct);
    }
    set(v, Signal::kDiskRead, read);
    if (!m.disks.empty()) set(v, Signal::kDiskUtil, util);
  }
  if (main != nullptr)
    set(v, Signal::kSuggestWorkers,
        static_cast<double>(workers.size()) + std::max(1.0, std::floor(idle + 0.2)));
  return v;
}

std::string format_value(Signal s, double v) {
  const auto unit = info(s).unit;
  if (unit == "%") return fmt::format("{:.0f}%", v);
  if (unit == "share") return fmt::format("{:.0f}%", v * 100);
  if (unit == "B/s") {
    if (v >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB/s", v / (1024.0 * 1024 * 1024));
    if (v >= 1024.0 * 1024) return fmt::format("{:.1f} MiB/s", v / (1024.0 * 1024));
    if (v >= 1024.0) return fmt::format("{:.0f} KiB/s", v / 1024.0);
    return fmt::format("{:.0f} B/s", v);
  }
  if (unit == "/s") return v >= 100 ? fmt::format("{:.0f}/s", v) : fmt::format("{:.1f}/s", v);
  if (unit == "CPUs") return fmt::format("{:.1f} CPUs", v);
  if (std::abs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

}  // namespace dltune::diagnose
