#include "slurm/efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "host/cgroup.hpp"
#include "monitor/model.hpp"
#include "monitor/sampler.hpp"
#include "monitor/scope.hpp"

namespace dltune::slurm {

namespace {

constexpr std::uint64_t kGiB = 1ull << 30;
constexpr double kGpuBusyEnough = 50;  // % of the time a GPU's kernels ran (NVML's utilisation)

tl::unexpected<Failure> failure(bool bad_input, Error e) {
  return tl::unexpected(Failure{bad_input, std::move(e)});
}

}  // namespace

int allocated_cpus(const host::Root& root, const host::CgroupLayout& layout,
                   const std::string& path) {
  std::vector<std::string> files;
  if (layout.version == "v2") {
    if (layout.unified) files.push_back(*layout.unified + path + "/cpuset.cpus.effective");
  } else {
    for (const auto& [controller, mount] : layout.v1)
      if (controller == "cpuset") files.push_back(mount + path + "/cpuset.cpus");
  }
  for (const auto& f : files)
    if (auto text = root.read(f); text && *text)
      if (auto cpus = text::parse_cpu_list(text::trim(**text)); cpus && !cpus->empty())
        return static_cast<int>(cpus->size());
  return 0;
}

std::vector<unsigned> slurm_gpus_of(const host::Root& root, const std::vector<pid_t>& pids,
                                    std::vector<pid_t>& tried, std::size_t max_processes) {
  std::vector<unsigned> out;
  std::size_t read = 0;
  for (const pid_t pid : pids) {
    if (read >= max_processes) break;
    if (std::find(tried.begin(), tried.end(), pid) != tried.end()) continue;
    tried.push_back(pid);
    ++read;
    auto text = root.read("/proc/" + std::to_string(pid) + "/environ", 1 << 20);
    if (!text || !*text) continue;
    std::string_view env = **text;
    while (!env.empty()) {
      const auto end = std::min(env.find('\0'), env.size());
      const auto entry = env.substr(0, end);
      env.remove_prefix(std::min(end + 1, env.size()));
      for (std::string_view name : {"SLURM_JOB_GPUS=", "SLURM_STEP_GPUS="}) {
        if (!entry.starts_with(name)) continue;
        // "0,1" (gres/gpu's list; a range as a cpu list's, should a version write one). Another
        // user's process writes this: ids beyond any GPU a host has make the list void.
        if (auto ids = text::parse_cpu_list(entry.substr(name.size()), text::kMaxGpuId))
          for (const int id : *ids) out.push_back(static_cast<unsigned>(id));
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void add_gpu_use(const monitor::Sample& sample, std::vector<JobGpu>& gpus,
                 const std::vector<unsigned>& allocated) {
  if (sample.gpus.empty()) return;
  // sample.processes is sorted by pid.
  const auto is_job = [&](pid_t pid) {
    const auto it =
        std::lower_bound(sample.processes.begin(), sample.processes.end(), pid,
                         [](const monitor::Process& p, pid_t wanted) { return p.pid < wanted; });
    return it != sample.processes.end() && it->pid == pid;
  };
  for (const auto& reading : sample.gpus) {
    std::uint64_t held = 0;
    bool used = false;
    for (const auto& p : reading.processes)
      if (is_job(p.pid)) {
        used = true;
        held += p.used_memory_bytes.value_or(0);
      }
    const bool given =
        std::find(allocated.begin(), allocated.end(), reading.index) != allocated.end();
    if (!used && !given) continue;
    auto it = std::find_if(gpus.begin(), gpus.end(),
                           [&](const JobGpu& g) { return g.index == reading.index; });
    if (it == gpus.end()) {
      gpus.push_back({reading.index, reading.name.value_or(""), std::nullopt, 0,
                      reading.memory_total_bytes, 0, false, false});
      it = gpus.end() - 1;
    }
    it->allocated = it->allocated || given;
    it->used = it->used || used;
    it->memory_bytes = std::max(it->memory_bytes, held);
    if (reading.utilization_gpu_pct) {
      // A running mean over the readings.
      const double n = static_cast<double>(it->readings);
      it->utilization_pct =
          (it->utilization_pct.value_or(0) * n + *reading.utilization_gpu_pct) / (n + 1);
      ++it->readings;
    }
  }
}

Efficiency judge_efficiency(const JobUse& use) {
  Efficiency e;
  e.use = use;
  if (use.cpus > 0) e.cpu_pct = use.cpus_used / use.cpus * 100;
  if (use.memory_peak_bytes && use.memory_limit_bytes && *use.memory_limit_bytes > 0)
    e.memory_pct = static_cast<double>(*use.memory_peak_bytes) /
                   static_cast<double>(*use.memory_limit_bytes) * 100;
  // OOM kills first: the job lost work.
  if (use.oom_kills && *use.oom_kills > 0) {
    // A group whose processes were killed for memory reached its limit, whatever peak was seen.
    const auto want =
        std::max(use.memory_peak_bytes.value_or(0), use.memory_limit_bytes.value_or(0));
    e.findings.push_back(fmt::format(
        "{} process(es) of the job were killed for memory (OOM kills in its group): its limit "
        "is {}",
        *use.oom_kills,
        use.memory_limit_bytes ? text::human_bytes(*use.memory_limit_bytes) : "unknown"));
    e.action = want > 0 ? fmt::format("ask for more memory: --mem={}M or more (its peak was {})",
                                      (want + want / 2) >> 20, text::human_bytes(want))
                        : std::string(
                              "ask for more memory (--mem): neither its peak nor its "
                              "limit was measured");
  }
  // GPUs given and never touched: the costliest waste of a GPU node, held from other jobs for
  // the whole run (jobstats' first GPU check too).
  std::vector<std::string> unused;
  std::size_t given = 0, used = 0;
  for (const auto& g : use.gpus) {
    given += g.allocated ? 1 : 0;
    used += g.used ? 1 : 0;
    if (g.allocated && !g.used) unused.push_back(std::to_string(g.index));
  }
  if (!unused.empty()) {
    e.findings.push_back(fmt::format(
        "Slurm gave the job {} GPU(s) and none of its processes used {} {} ({} of {} unused)",
        given, unused.size() == 1 ? "GPU" : "GPUs", text::join(unused, ", "), unused.size(),
        given));
    if (e.action.empty())
      e.action = used == 0
                     ? std::string(
                           "ask for no GPUs (drop --gres=gpu / --gpus), or find why the job does "
                           "not use them: torch.cuda.is_available() in the job, the CUDA build of "
                           "torch, CUDA_VISIBLE_DEVICES")
                     : fmt::format(
                           "ask for {0} GPU{1} (--gres=gpu:{0}), or run one rank per GPU "
                           "(torchrun --nproc-per-node={2}) so that each is used",
                           used, used == 1 ? "" : "s", given);
  }
  // GPUs left waiting: the costliest part of a GPU node (jobstats flags a GPU job by its GPU
  // utilisation first). Under half busy, the job does not feed them.
  std::vector<std::string> idle;
  for (const auto& g : use.gpus)
    if (g.used && g.utilization_pct && *g.utilization_pct < kGpuBusyEnough)
      idle.push_back(fmt::format("GPU {} {:.0f}%", g.index, *g.utilization_pct));
  if (!idle.empty()) {
    e.findings.push_back(fmt::format(
        "its GPUs were busy under half the time ({}): they wait for the job's input, CPU or I/O",
        text::join(idle, ", ")));
    if (e.action.empty())
      e.action = fmt::format(
          "find what the GPUs wait for: `dltune profile --slurm-job {}` names it (input "
          "pipeline, CPU contention, storage) with the fix to try first",
          use.job_id);
  }
  // The CPUs it uses, rounded up past a tenth of noise: 0.97 is one CPU, 1.3 two.
  const int enough = std::max(1, static_cast<int>(std::ceil(use.cpus_used - 0.1)));
  if (e.cpu_pct && enough < use.cpus && *e.cpu_pct < 70) {
    std::string why;
    if (use.busiest_pid != 0 && use.busiest_cpus >= 0.8 && use.busiest_cpus >= use.cpus_used * 0.8)
      why = fmt::format(
          ": one process does the work ({} {}, pid {}, {:.2f} of a CPU{})", use.busiest_command,
          use.busiest_threads > 1 ? "with its threads" : "on one thread", use.busiest_pid,
          use.busiest_cpus,
          use.busiest_threads > 1 ? fmt::format(", {} threads", use.busiest_threads) : "");
    else if (use.cpus_used < 0.2)
      why = ": it hardly runs (waiting on I/O, the network or another job step?)";
    e.findings.push_back(fmt::format("asked for {} CPUs and used {:.1f} ({:.0f}%){}", use.cpus,
                                     use.cpus_used, *e.cpu_pct, why));
    if (e.action.empty())
      e.action = fmt::format(
          "ask for {} CPU{} (--cpus-per-task={}), or give the job work for the others: "
          "DataLoader workers (num_workers) or intra-op threads (OMP_NUM_THREADS)",
          enough, enough == 1 ? "" : "s", enough);
  }
  if (e.memory_pct && *e.memory_pct < 33 && *use.memory_limit_bytes >= kGiB &&
      !(use.oom_kills && *use.oom_kills > 0)) {
    const auto peak = *use.memory_peak_bytes;
    e.findings.push_back(fmt::format("asked for {} of memory and used at most {} ({:.0f}%)",
                                     text::human_bytes(*use.memory_limit_bytes),
                                     text::human_bytes(peak), *e.memory_pct));
    if (e.action.empty())
      e.action = fmt::format("ask for less memory: --mem={}M (its peak and half again)",
                             std::max<std::uint64_t>((peak + peak / 2) >> 20, 1));
  }
  return e;
}

tl::expected<Efficiency, Failure> measure_efficiency(const host::Root& root,
                                                     const EfficiencyRequest& request) {
  auto path = monitor::slurm_job_cgroup(root, request.job_id);
  if (!path) return failure(true, path.error());
  auto layout = host::cgroup_layout(root);
  if (!layout) return failure(false, layout.error());
  monitor::SamplerOptions options;
  options.scope = {monitor::Scope::Kind::kCgroup, 0, *path};
  options.gpus = request.gpus;
  options.nvml_library = request.nvml_library;
  auto sampler = monitor::Sampler::open(root, options);
  if (!sampler) return failure(false, sampler.error());
  monitor::Sample before, after;
  if (auto ok = (*sampler)->sample(before); !ok) return failure(false, ok.error());
  // The CPU use is the window's (first and last sample); the GPUs' is read as often as NVML is
  // (the sampler's GPU interval), the job's processes on each as they are then. Without GPUs one
  // sample at the window's end is all there is to read.
  std::vector<JobGpu> gpus;
  std::vector<unsigned> allocated;
  std::vector<pid_t> tried;
  auto pids_of = [](const monitor::Sample& s) {
    std::vector<pid_t> pids;
    for (const auto& p : s.processes) pids.push_back(p.pid);
    return pids;
  };
  if (request.gpus) allocated = slurm_gpus_of(root, pids_of(before), tried);
  const std::chrono::nanoseconds step(
      request.gpus ? std::max(request.interval_ns, options.gpu_interval_ns) : request.duration_ns);
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(request.duration_ns);
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) break;
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(end - now, step));
    if (auto ok = (*sampler)->sample(after); !ok) return failure(false, ok.error());
    if (request.gpus && allocated.empty()) allocated = slurm_gpus_of(root, pids_of(after), tried);
    add_gpu_use(after, gpus, allocated);
  }
  if (!after.cgroup)
    return failure(false,
                   Error{"the job ended while it was measured", "--slurm-job " + request.job_id});
  const auto m = monitor::Model::from(after, &before);
  JobUse use;
  use.job_id = request.job_id;
  use.path = *path;
  use.cpus = allocated_cpus(root, *layout, *path);
  use.seconds = m.interval_s;
  if (m.cgroup && m.cgroup->cpu_pct) use.cpus_used = *m.cgroup->cpu_pct / 100;
  use.cpu_from_processes = m.cgroup && m.cgroup->cpu_from_processes;
  use.memory_bytes = after.cgroup->memory_bytes;
  use.memory_peak_bytes = after.cgroup->memory_peak_bytes;
  use.memory_limit_bytes = after.cgroup->memory_limit_bytes;
  use.oom_kills = after.cgroup->events_oom_kill;
  use.processes = m.processes.size();
  for (const auto& p : m.processes)
    if (p.cpu_pct / 100 > use.busiest_cpus || use.busiest_pid == 0) {
      use.busiest_cpus = p.cpu_pct / 100;
      use.busiest_pid = p.pid;
      use.busiest_command = p.comm;
      use.busiest_threads = static_cast<int>(p.threads);
    }
  std::sort(gpus.begin(), gpus.end(),
            [](const JobGpu& a, const JobGpu& b) { return a.index < b.index; });
  use.gpus = std::move(gpus);
  return judge_efficiency(use);
}

inventory::Json to_json(const JobGpu& g) {
  return {{"index", g.index},
          {"name", g.name},
          {"utilization_pct", json_or_null(g.utilization_pct)},
          {"memory_bytes", g.memory_bytes},
          {"memory_total_bytes", json_or_null(g.memory_total_bytes)},
          {"allocated", g.allocated},
          {"used", g.used}};
}

inventory::Json to_json(const Efficiency& e) {
  const auto& u = e.use;
  inventory::Json busiest = nullptr;
  if (u.busiest_pid != 0)
    busiest = {{"pid", u.busiest_pid},
               {"command", u.busiest_command},
               {"cpus", u.busiest_cpus},
               {"threads", u.busiest_threads}};
  inventory::Json gpus = inventory::Json::array();
  for (const auto& g : u.gpus) gpus.push_back(to_json(g));
  return {{"schema", "dltune.slurm-efficiency/1"},
          {"job_id", u.job_id},
          {"cgroup", u.path},
          {"seconds", u.seconds},
          {"cpus", u.cpus},
          {"cpus_used", u.cpus_used},
          {"cpu_from_processes", u.cpu_from_processes},
          {"cpu_pct", json_or_null(e.cpu_pct)},
          {"memory_bytes", json_or_null(u.memory_bytes)},
          {"memory_peak_bytes", json_or_null(u.memory_peak_bytes)},
          {"memory_limit_bytes", json_or_null(u.memory_limit_bytes)},
          {"memory_pct", json_or_null(e.memory_pct)},
          {"oom_kills", json_or_null(u.oom_kills)},
          {"processes", u.processes},
          {"busiest", busiest},
          {"gpus", gpus},
          {"findings", e.findings},
          {"action", e.action.empty() ? inventory::Json(nullptr) : inventory::Json(e.action)}};
}

std::string render_text(const Efficiency& e) {
  const auto& u = e.use;
  std::string out =
      fmt::format("Slurm job {} on this node ({}), over {:.1f} s\n", u.job_id, u.path, u.seconds);
  out +=
      fmt::format("  CPU      {:.2f} of {} CPU(s){}{}\n", u.cpus_used, u.cpus,
                  e.cpu_pct ? fmt::format(" ({:.0f}%)", *e.cpu_pct) : "",
                  u.cpu_from_processes ? ", its processes' (no CPU accounting for its group)" : "");
  out += fmt::format("  memory   peak {} of {}{}, now {}\n",
                     u.memory_peak_bytes ? text::human_bytes(*u.memory_peak_bytes) : "unknown",
                     u.memory_limit_bytes ? text::human_bytes(*u.memory_limit_bytes) : "no limit",
                     e.memory_pct ? fmt::format(" ({:.0f}%)", *e.memory_pct) : "",
                     u.memory_bytes ? text::human_bytes(*u.memory_bytes) : "unknown");
  out += fmt::format("  OOM      {}\n",
                     u.oom_kills ? fmt::format("{} kill(s)", *u.oom_kills) : "not counted here");
  if (u.busiest_pid != 0)
    out += fmt::format("  busiest  {} (pid {}): {:.2f} of a CPU, {} thread(s); {} process(es)\n",
                       u.busiest_command, u.busiest_pid, u.busiest_cpus, u.busiest_threads,
                       u.processes);
  for (const auto& g : u.gpus)
    out += g.used
               ? fmt::format("  GPU {:<4} {}{}, {} of {} held by the job\n", g.index,
                             g.name.empty() ? "" : g.name + ": ",
                             g.utilization_pct ? fmt::format("{:.0f}% busy", *g.utilization_pct)
                                               : std::string("busy unknown"),
                             text::human_bytes(g.memory_bytes),
                             g.memory_total_bytes ? text::human_bytes(*g.memory_total_bytes) : "?")
               : fmt::format("  GPU {:<4} {}given by Slurm, not used by the job\n", g.index,
                             g.name.empty() ? "" : g.name + ": ");
  for (const auto& f : e.findings) out += "  ! " + f + "\n";
  out += e.action.empty() ? "It uses what it was given.\n" : "Action: " + e.action + "\n";
  return out;
}

}  // namespace dltune::slurm
