#include "launch/summary.hpp"

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "inventory/json.hpp"

namespace dltune::launch {

namespace {

using inventory::Json;
using inventory::put;

Json limits_json(const CgroupLimits& l) {
  Json j = Json::object();
  put(j, "cpu_quota_cpus", l.cpu_quota_cpus);
  put(j, "cpu_weight", l.cpu_weight);
  put(j, "memory_bytes", l.memory_bytes);
  put(j, "memory_swap_bytes", l.memory_swap_bytes);
  put(j, "cpus", l.cpus);
  put(j, "mems", l.mems);
  put(j, "io_weight", l.io_weight);
  return j;
}

std::string exit_text(const SpawnResult& r) {
  if (r.signal) return fmt::format("killed by signal {} (exit status {})", *r.signal, r.exit_code);
  return fmt::format("exit status {}", r.exit_code);
}

}  // namespace

Json to_json(const RunSummary& s) {
  const auto& r = s.result;
  Json j;
  j["schema"] = "dltune.run/1";
  j["name"] = s.plan.name;
  j["command"] = s.plan.argv;
  j["exit_code"] = r.exit_code;
  put(j, "signal", r.signal);
  j["wall_seconds"] = r.wall.count();
  j["user_seconds"] = r.user_seconds;
  j["system_seconds"] = r.system_seconds;
  j["max_rss_bytes"] = r.max_rss_bytes;
  Json cg;
  cg["version"] = s.cgroup_version;
  cg["directories"] = s.cgroup_dirs;
  cg["requested"] = limits_json(s.plan.limits);
  if (s.verified) cg["verified"] = limits_json(*s.verified);
  Json st = Json::object();
  put(st, "cpu_seconds", s.stats.cpu_seconds);
  put(st, "throttled_seconds", s.stats.throttled_seconds);
  put(st, "nr_throttled", s.stats.nr_throttled);
  put(st, "memory_peak_bytes", s.stats.memory_peak_bytes);
  put(st, "oom_kills", s.stats.oom_kills);
  put(st, "memory_limit_hits", s.stats.memory_limit_hits);
  cg["stats"] = std::move(st);
  j["cgroup"] = std::move(cg);
  if (s.slurm) {
    Json nested = Json::array();
    for (const auto& [mount, group] : s.slurm->place.nest) nested.push_back(group);
    j["slurm"] = Json{{"job_id", s.slurm->job_id}, {"step", s.slurm->step}, {"inside", nested}};
  } else {
    j["slurm"] = nullptr;
  }
  Json victims = Json::array();
  for (const auto& v : s.oom_victims) {
    Json x{{"pid", v.pid}, {"task", v.task}, {"constraint", v.constraint}};
    put(x, "uid", v.uid);
    victims.push_back(std::move(x));
  }
  j["oom_victims"] = std::move(victims);
  Json placement;
  if (s.plan.cpus) placement["cpus"] = text::format_cpu_list(*s.plan.cpus);
  placement["numa_nodes"] = s.plan.numa_nodes;
  placement["gpus"] = s.plan.gpus;
  j["placement"] = std::move(placement);
  put(j, "user", s.user);
  j["allocator"] = allocator_name(s.plan.allocator);
  Json env = Json::object();
  for (const char* k : {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT",
                        "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_PRELOAD", "MALLOC_CONF",
                        "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"})
    if (const auto it = s.plan.env.find(k); it != s.plan.env.end()) env[k] = it->second;
  j["environment"] = std::move(env);
  Json progress = Json::object();
  if (r.progress.samples > 0) {
    progress["samples"] = r.progress.samples;
    progress["unit"] = r.progress.unit;
    put(progress, "last_rate", r.progress.last_rate);
    put(progress, "median_rate", r.progress.median_rate);
  }
  j["progress"] = std::move(progress);
  Json ranks = Json::array();
  for (const auto& rank : s.ranks) {
    Json x{{"rank", rank.rank},
           {"pid", rank.result.pid},
           {"cpus", text::format_cpu_list(rank.cpus)},
           {"numa_nodes", rank.numa_nodes},
           {"exit_code", rank.result.exit_code},
           {"stopped", rank.stopped},
           {"wall_seconds", rank.result.wall.count()},
           {"user_seconds", rank.result.user_seconds},
           {"system_seconds", rank.result.system_seconds},
           {"max_rss_bytes", rank.result.max_rss_bytes},
           {"cgroup", rank.cgroup_dir}};
    put(x, "gpu", rank.gpu);
    put(x, "signal", rank.result.signal);
    put(x, "cpu_seconds", rank.stats.cpu_seconds);
    put(x, "memory_peak_bytes", rank.stats.memory_peak_bytes);
    put(x, "oom_kills", rank.stats.oom_kills);
    ranks.push_back(std::move(x));
  }
  j["ranks"] = std::move(ranks);
  j["failed_rank"] = s.failed_rank ? Json(*s.failed_rank) : Json(nullptr);
  if (!s.master_port.empty()) j["master_port"] = s.master_port;
  j["notes"] = s.plan.notes;
  Json problems = Json::array();
  for (const auto& p : s.environment) problems.push_back(audit::to_json(p));
  j["environment_problems"] = std::move(problems);
  j["interrupts"] = s.interrupts ? to_json(*s.interrupts) : Json(nullptr);
  Json output = Json::array();
  for (const auto& e : r.output_events) output.push_back(to_json(e));
  j["output_events"] = std::move(output);
  j["warnings"] = r.warnings;
  return j;
}

std::string render_text(const RunSummary& s) {
  const auto& r = s.result;
  std::string out = fmt::format("dltune run: {} ({}), {}\n", text::join(s.plan.argv, " "),
                                s.plan.name, exit_text(r));
  const auto line = [&](const char* label, const std::string& value) {
    out += fmt::format("  {:<14} {}\n", label, value);
  };
  line("wall", fmt::format("{:.2f} s", r.wall.count()));
  std::string cpu = fmt::format("{:.2f} s user, {:.2f} s system", r.user_seconds, r.system_seconds);
  if (s.stats.cpu_seconds) cpu += fmt::format(" ({:.2f} s in the cgroup)", *s.stats.cpu_seconds);
  line("cpu", cpu);
  std::string mem = s.stats.memory_peak_bytes
                        ? text::human_bytes(*s.stats.memory_peak_bytes) + " peak (cgroup)"
                        : text::human_bytes(r.max_rss_bytes) + " largest process RSS";
  if (s.plan.limits.memory_bytes)
    mem += " of " + text::human_bytes(*s.plan.limits.memory_bytes) + " limit";
  line("memory", mem);
  if (s.stats.oom_kills || !s.oom_victims.empty()) {
    std::vector<std::string> who;
    for (const auto& v : s.oom_victims) who.push_back(fmt::format("{} (pid {})", v.task, v.pid));
    const auto count = std::max<std::uint64_t>(s.stats.oom_kills.value_or(0), s.oom_victims.size());
    line("OOM kills",
         count == 0 ? std::string("none")
                    : fmt::format("{}: the kernel killed {} for memory", count,
                                  who.empty() ? std::string("a process of the job (the kernel log "
                                                            "names it: dmesg | grep -i killed)")
                                              : text::join(who, ", ")));
  }
  if (s.stats.throttled_seconds)
    line("throttled",
         fmt::format(
             "{:.2f} s{}", *s.stats.throttled_seconds,
             s.stats.nr_throttled ? fmt::format(" in {} periods", *s.stats.nr_throttled) : ""));
  std::vector<std::string> lim;
  if (s.plan.limits.cpu_quota_cpus)
    lim.push_back(fmt::format("{:g} CPUs", *s.plan.limits.cpu_quota_cpus));
  if (s.plan.limits.cpu_weight)
    lim.push_back(fmt::format("cpu weight {}", *s.plan.limits.cpu_weight));
  if (s.plan.limits.io_weight) lim.push_back(fmt::format("io weight {}", *s.plan.limits.io_weight));
  if (s.plan.limits.memory_swap_bytes)
    lim.push_back("swap " + text::human_bytes(*s.plan.limits.memory_swap_bytes));
  line("cgroup",
       fmt::format("{} {}{}", s.cgroup_version, s.cgroup_dirs.empty() ? "" : s.cgroup_dirs.front(),
                   lim.empty() ? "" : " (" + text::join(lim, ", ") + ")"));
  if (s.slurm)
    line("slurm", fmt::format("job {} step {}: the job's groups are inside the step's ({} "
                              "hierarchies), under its limits and counted in its use",
                              s.slurm->job_id, s.slurm->step, s.slurm->place.nest.size()));
  if (s.plan.cpus)
    line("cpus", text::format_cpu_list(*s.plan.cpus) +
                     (s.plan.numa_nodes.empty()
                          ? ""
                          : ", NUMA node(s) " + text::format_cpu_list(s.plan.numa_nodes)));
  if (s.user) line("user", *s.user);
  if (!s.ranks.empty())
    line("ranks", fmt::format("{} started by dltune, meeting at {}:{}{}", s.ranks.size(),
                              s.plan.env.count("MASTER_ADDR") ? s.plan.env.at("MASTER_ADDR") : "?",
                              s.master_port,
                              s.failed_rank ? fmt::format("; rank {} failed first and dltune "
                                                          "stopped the others",
                                                          *s.failed_rank)
                                            : ""));
  for (const auto& rank : s.ranks) {
    std::string what = fmt::format(
        "CPUs {}{}{}: {}{}, {:.2f} s, {:.2f} s CPU", text::format_cpu_list(rank.cpus),
        rank.numa_nodes.empty() ? "" : " (node " + text::format_cpu_list(rank.numa_nodes) + ")",
        rank.gpu ? fmt::format(", GPU {}", *rank.gpu) : "", exit_text(rank.result),
        s.failed_rank == rank.rank ? " (failed first)"
        : rank.stopped             ? " (stopped by dltune)"
                                   : "",
        rank.result.wall.count(),
        rank.stats.cpu_seconds.value_or(rank.result.user_seconds + rank.result.system_seconds));
    if (rank.stats.memory_peak_bytes)
      what += ", " + text::human_bytes(*rank.stats.memory_peak_bytes) + " peak";
    if (rank.stats.oom_kills.value_or(0) > 0)
      what += fmt::format(", {} OOM kill(s)", *rank.stats.oom_kills);
    line(fmt::format("rank {}", rank.rank).c_str(), what);
  }
  if (r.progress.samples > 0 && r.progress.median_rate)
    line("progress",
         fmt::format("{:.3g} {} median, {:.3g} last ({} readings)", *r.progress.median_rate,
                     r.progress.unit.empty() ? "/s" : r.progress.unit,
                     r.progress.last_rate.value_or(0), r.progress.samples));
  if (s.interrupts) {
    line("interrupts", render_text(*s.interrupts));
    if (const auto advice = irqbalance_advice(*s.interrupts)) line("", *advice);
  }
  for (const auto& n : s.plan.notes) line("set", n);
  for (const auto& p : s.environment)
    if (p.severity >= audit::Severity::kWarn) line("environment", audit::one_line(p));
  for (const auto& w : r.warnings) line("warning", w);
  // What the job's output said of its GPUs, each with its actions, indented under one label.
  for (const auto& e : r.output_events) {
    const auto text = render_text(e);
    bool first = true;
    for (const auto& l : text::lines(text)) {
      line(first ? "job output" : "", std::string(l));
      first = false;
    }
  }
  return out;
}

}  // namespace dltune::launch
