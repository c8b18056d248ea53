#include "slurm/epilog.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "core/time_format.hpp"
#include "serve/exposition.hpp"

namespace dltune::slurm {

namespace {

// The kinds of event that are the node's, not one process's: whatever job ran then shares them.
constexpr std::array<std::string_view, 16> kNodeKinds = {"xid",
                                                         "gpu_lost",
                                                         "aer",
                                                         "pcie_link",
                                                         "hung_task",
                                                         "soft_lockup",
                                                         "page_alloc_failure",
                                                         "fs_error",
                                                         "nvme_timeout",
                                                         "driver_mismatch",
                                                         "gpu_probe_failed",
                                                         "gpu_init_failed",
                                                         "nouveau_bound",
                                                         "memory_error",
                                                         "machine_check",
                                                         "sxid"};

// Whether a cgroup path is job `job_id`'s or below it: a component "job_J".
bool in_job(const std::string& path, const std::string& job_id) {
  const std::string part = "/job_" + job_id;
  for (auto at = path.find(part); at != std::string::npos; at = path.find(part, at + 1)) {
    const auto end = at + part.size();
    if (end == path.size() || path[end] == '/') return true;
  }
  return false;
}

std::string field(const diagnose::LoggedEvent& e, const std::string& key) {
  const auto it = e.event.fields.find(key);
  return it == e.event.fields.end() ? std::string() : it->second;
}

// "python3 (pid 6123, 99.3 MiB anonymous)"
std::string victim(const diagnose::LoggedEvent& e) {
  std::string held;
  if (const auto anon = field(e, "anon_rss"); !anon.empty()) {
    if (auto kib = text::to_uint(anon.substr(0, anon.find_first_not_of("0123456789"))))
      held = ", " + text::human_bytes(*kib * 1024) + " anonymous";
  }
  return fmt::format("{} (pid {}{})", field(e, "task"), field(e, "pid"), held);
}

// The memory cgroup's usage and limit when the kernel killed for memory, from its report's
// "memory: usage 102400kB, limit 102400kB, failcnt 0" line (mm/memcontrol.c's
// mem_cgroup_print_oom_meminfo): the largest of each over `events`' kills. A job that dies before
// its watcher's first sample has no other record of either.
struct OomMemory {
  std::optional<std::uint64_t> usage, limit;
};

OomMemory oom_memory(const std::vector<diagnose::LoggedEvent>& events) {
  OomMemory out;
  const auto kib_after = [](std::string_view line, std::string_view key) {
    std::optional<std::uint64_t> v;
    const auto at = line.find(key);
    if (at == std::string_view::npos) return v;
    const auto rest = line.substr(at + key.size());
    const auto digits = rest.substr(0, rest.find_first_not_of("0123456789"));
    if (digits.empty() || !rest.substr(digits.size()).starts_with("kB")) return v;
    if (auto n = text::to_uint(digits); n && *n < (std::uint64_t{1} << 53)) v = *n * 1024;
    return v;
  };
  const auto keep = [](std::optional<std::uint64_t>& into, std::optional<std::uint64_t> v) {
    if (v) into = std::max(into.value_or(0), *v);
  };
  for (const auto& e : events) {
    if (e.event.kind != "oom_kill") continue;
    const auto line = field(e, "memory");
    keep(out.usage, kib_after(line, "usage "));
    // The kernel writes a limit of "no limit" as a huge page count: not a limit a job asked for.
    if (auto limit = kib_after(line, "limit "); limit && *limit < (std::uint64_t{1} << 50))
      keep(out.limit, limit);
  }
  return out;
}

}  // namespace

std::vector<diagnose::LoggedEvent> job_events(const std::vector<diagnose::LoggedEvent>& events,
                                              const std::string& job_id, bool node_events) {
  std::vector<diagnose::LoggedEvent> out;
  for (const auto& e : events) {
    const auto& kind = e.event.kind;
    if (kind == "oom_kill") {
      if (in_job(field(e, "cgroup"), job_id) || in_job(field(e, "oom_memcg"), job_id))
        out.push_back(e);
    } else if (node_events &&
               std::find(kNodeKinds.begin(), kNodeKinds.end(), kind) != kNodeKinds.end()) {
      out.push_back(e);
    }
  }
  return out;
}

JobReport build_report(const EpilogRequest& request, std::optional<JobRecord> record,
                       const diagnose::DoctorReport& log, std::int64_t end_ns) {
  JobReport r;
  r.job_id = request.job_id;
  r.user = request.user;
  r.node = request.node;
  r.exit_code = request.exit_code;
  r.start_ns = log.since_wall_ns;
  r.end_ns = end_ns;
  r.events = job_events(log.events, request.job_id, log.since_wall_ns > 0);
  r.notes = log.notes;
  if (log.nothing_readable)
    r.notes.push_back("no kernel log could be read (the Epilog runs as root: /dev/kmsg)");
  if (log.since_wall_ns == 0)
    r.notes.push_back(
        "no watch of the job ran here (no Prolog?): its OOM kills are those the kernel log has "
        "since boot, and the node's other events are left out");
  std::vector<std::string> victims;
  for (const auto& e : r.events)
    if (e.event.kind == "oom_kill") victims.push_back(victim(e));
  if (record) {
    JobUse use = record->use();
    // The kernel's count when the watcher missed kills (the group was gone before its sample).
    use.oom_kills = std::max<std::uint64_t>(use.oom_kills.value_or(0), victims.size());
    // The kernel's figures when the job died before the watcher measured them.
    const auto oom = oom_memory(r.events);
    if (!use.memory_limit_bytes) use.memory_limit_bytes = oom.limit;
    if (oom.usage) use.memory_peak_bytes = std::max(use.memory_peak_bytes.value_or(0), *oom.usage);
    auto e = judge_efficiency(use);
    if (!victims.empty())
      e.findings.insert(e.findings.begin() + std::min<std::ptrdiff_t>(1, std::ssize(e.findings)),
                        fmt::format("killed for memory: {}", fmt::join(victims, ", ")));
    r.action = e.action;
    r.efficiency = std::move(e);
    r.record = std::move(record);
  } else if (!victims.empty()) {
    const auto oom = oom_memory(r.events);
    const auto want = std::max(oom.usage.value_or(0), oom.limit.value_or(0));
    r.action = want > 0
                   ? fmt::format(
                         "ask for more memory: --mem={}M or more (the kernel killed {} "
                         "at {})",
                         (want + want / 2) >> 20, fmt::join(victims, ", "), text::human_bytes(want))
                   : fmt::format("ask for more memory (--mem): the kernel killed {}",
                                 fmt::join(victims, ", "));
  }
  if (r.action.empty())
    for (const auto& e : r.events)
      if (e.event.severity == diagnose::Severity::kCritical) {
        r.action = e.event.action;
        break;
      }
  return r;
}

std::string report_path(const std::string& report_dir, const std::string& job_id) {
  return report_dir + "/job-" + job_id + ".json";
}

Result<JobReport> run_epilog(const host::Root& root, const EpilogRequest& request,
                             const diagnose::XidTable& xids) {
  if (auto ok = check_job_id(request.job_id); !ok) return tl::unexpected(ok.error());
  auto record = stop_watch(request.state_dir, request.job_id);
  std::optional<JobRecord> kept;
  std::string record_note;
  if (record) {
    kept = std::move(*record);
  } else {
    record_note = record.error().message();
  }
  diagnose::DoctorRequest d;
  // From the watch's start (the Prolog ran before the job's first step here), else since boot.
  if (kept) d.since_wall_ns = kept->started_ns;
  d.now_wall_ns = now_ns(CLOCK_REALTIME);
  const auto log = diagnose::doctor(d, root, xids);
  auto report = build_report(request, std::move(kept), log, d.now_wall_ns);
  if (!record_note.empty()) report.notes.insert(report.notes.begin(), record_note);

  std::error_code ec;
  std::filesystem::create_directories(request.report_dir, ec);
  if (ec) return fail("cannot make the report directory", request.report_dir, ec.value());
  if (auto ok = local_file::write(
          report_path(request.report_dir, request.job_id), true,
          [&](std::ostream& out) { out << to_json(report).dump(2) << "\n"; }, "the job's report");
      !ok)
    return tl::unexpected(ok.error());
  if (record) ::unlink(record_path(request.state_dir, request.job_id).c_str());
  if (!request.textfile.empty())
    if (auto ok = write_textfile(request.report_dir, request.textfile); !ok)
      return tl::unexpected(ok.error());
  return report;
}

inventory::Json to_json(const JobReport& r) {
  auto events = inventory::Json::array();
  // doctor's own form of each event (nlohmann::json; the report keeps its keys' order).
  for (const auto& e : r.events)
    events.push_back(inventory::Json::parse(diagnose::event_json(e).dump()));
  return {{"schema", "dltune.slurm-job-report/1"},
          {"job_id", r.job_id},
          {"user", r.user},
          {"node", r.node},
          {"exit_code", r.exit_code},
          {"start_ns", r.start_ns},
          {"end_ns", r.end_ns},
          {"efficiency", r.efficiency ? to_json(*r.efficiency) : inventory::Json(nullptr)},
          {"record", r.record ? to_json(*r.record) : inventory::Json(nullptr)},
          {"events", events},
          {"notes", r.notes},
          {"action", r.action.empty() ? inventory::Json(nullptr) : inventory::Json(r.action)}};
}

std::string render_text(const JobReport& r) {
  std::string out =
      fmt::format("Slurm job {} on {} ({}), ended {}{}\n", r.job_id, r.node,
                  r.user.empty() ? "user unknown" : "user " + r.user, text::local_time_ns(r.end_ns),
                  r.exit_code.empty() ? "" : ", exit code " + r.exit_code);
  if (r.efficiency) {
    const auto& e = *r.efficiency;
    const auto& u = e.use;
    if (u.seconds > 0)
      out += fmt::format("  CPU      {:.2f} of {} CPU(s){} over {:.0f} s{}\n", u.cpus_used, u.cpus,
                         e.cpu_pct ? fmt::format(" ({:.0f}%)", *e.cpu_pct) : "", u.seconds,
                         u.cpu_from_processes ? ", its processes'" : "");
    else
      out += "  CPU      not measured: the job ran here for less than the watch's interval\n";
    out +=
        fmt::format("  memory   peak {} of {}{}\n",
                    u.memory_peak_bytes ? text::human_bytes(*u.memory_peak_bytes) : "not measured",
                    u.memory_limit_bytes ? text::human_bytes(*u.memory_limit_bytes) : "no limit",
                    e.memory_pct ? fmt::format(" ({:.0f}%)", *e.memory_pct) : "");
    out += fmt::format("  OOM      {} kill(s)\n", u.oom_kills.value_or(0));
    if (u.busiest_pid != 0)
      out += fmt::format("  busiest  {} (pid {}): {:.2f} of a CPU, {} thread(s)\n",
                         u.busiest_command, u.busiest_pid, u.busiest_cpus, u.busiest_threads);
    for (const auto& f : e.findings) out += "  ! " + f + "\n";
  }
  for (const auto& ev : r.events)
    out += fmt::format("  {} [{}] {}: {}\n", text::local_time_ns(ev.wall_ns),
                       diagnose::severity_name(ev.event.severity), ev.event.kind,
                       ev.event.explanation);
  for (const auto& n : r.notes) out += "  note: " + n + "\n";
  out += r.action.empty() ? "It used what it was given; nothing went wrong.\n"
                          : "Action: " + r.action + "\n";
  return out;
}

namespace {

// `name{slurm_job_id="J",user="U"` of report `r`, its label values escaped; the caller closes it.
void job_series(std::string& out, const char* name, const inventory::Json& r) {
  out += name;
  out += "{slurm_job_id=\"";
  serve::append_escaped_label(out, r.value("job_id", ""));
  out += "\",user=\"";
  serve::append_escaped_label(out, r.value("user", ""));
  out += '"';
}

}  // namespace

std::string job_metrics(const std::vector<inventory::Json>& reports) {
  struct Family {
    const char* name;
    const char* help;
    const char* type;
  };
  static constexpr Family kFamilies[] = {
      {"dltune_slurm_job_end_time_seconds", "When the job's Epilog ran on this node, Unix time",
       "gauge"},
      {"dltune_slurm_job_cpus", "CPUs the job was given on this node (its cpuset)", "gauge"},
      {"dltune_slurm_job_cpus_used", "CPUs the job used on this node, on average over its run",
       "gauge"},
      {"dltune_slurm_job_memory_peak_bytes", "The job's memory peak on this node", "gauge"},
      {"dltune_slurm_job_memory_limit_bytes", "The job's memory limit on this node (--mem)",
       "gauge"},
      {"dltune_slurm_job_oom_kills", "Processes of the job the OOM killer killed on this node",
       "gauge"},
      {"dltune_slurm_job_node_events",
       "Hardware and kernel events on this node during the job (Xid, hung tasks, PCIe, ...)",
       "gauge"},
  };
  auto value = [](const inventory::Json& r, std::size_t family) -> std::optional<double> {
    const auto& e = r.contains("efficiency") ? r["efficiency"] : inventory::Json();
    auto number = [&](const char* key) -> std::optional<double> {
      if (!e.is_object() || !e.contains(key) || !e[key].is_number()) return std::nullopt;
      return e[key].get<double>();
    };
    switch (family) {
      case 0:
        return r.value("end_ns", std::int64_t{0}) / 1e9;
      case 1:
        return e.is_object() && e.value("seconds", 0.0) > 0 ? number("cpus") : std::nullopt;
      case 2:
        return e.is_object() && e.value("seconds", 0.0) > 0 ? number("cpus_used") : std::nullopt;
      case 3:
        return number("memory_peak_bytes");
      case 4:
        return number("memory_limit_bytes");
      case 5: {
        double kills = 0;
        for (const auto& ev : r.value("events", inventory::Json::array()))
          if (ev.value("kind", "") == "oom_kill") kills += 1;
        return std::max(kills, number("oom_kills").value_or(0));
      }
      default: {
        double n = 0;
        for (const auto& ev : r.value("events", inventory::Json::array()))
          if (ev.value("kind", "") != "oom_kill") n += 1;
        return n;
      }
    }
  };
  std::string out;
  for (std::size_t f = 0; f < std::size(kFamilies); ++f) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", kFamilies[f].name, kFamilies[f].help,
                       kFamilies[f].name, kFamilies[f].type);
    for (const auto& r : reports) {
      if (!r.is_object() || r.value("schema", "") != "dltune.slurm-job-report/1") continue;
      const auto v = value(r, f);
      if (!v) continue;
      job_series(out, kFamilies[f].name, r);
      out += fmt::format("}} {}\n", *v);
    }
  }
  // Per GPU the job's processes used or Slurm gave it (its efficiency's `gpus`), labelled gpu
  // (NVML's index): a GPU given and unused is one at 0 bytes.
  struct GpuFamily {
    const char* name;
    const char* help;
    const char* key;
    double scale;
  };
  static constexpr GpuFamily kGpuFamilies[] = {
      {"dltune_slurm_job_gpu_utilization_ratio",
       "How busy a GPU the job used on this node was, on average over its run (NVML)",
       "utilization_pct", 0.01},
      {"dltune_slurm_job_gpu_memory_bytes",
       "The most memory the job's processes held on a GPU on this node", "memory_bytes", 1},
  };
  for (const auto& f : kGpuFamilies) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
    for (const auto& r : reports) {
      if (!r.is_object() || r.value("schema", "") != "dltune.slurm-job-report/1") continue;
      const auto& e = r.contains("efficiency") ? r["efficiency"] : inventory::Json();
      if (!e.is_object() || !e.contains("gpus") || !e["gpus"].is_array()) continue;
      for (const auto& g : e["gpus"]) {
        if (!g.is_object() || !g.contains(f.key) || !g[f.key].is_number() ||
            !g.value("index", inventory::Json()).is_number_unsigned())
          continue;
        job_series(out, f.name, r);
        out += fmt::format(",gpu=\"{}\"}} {}\n", g["index"].get<unsigned>(),
                           g[f.key].get<double>() * f.scale);
      }
    }
  }
  return out;
}

Result<void> write_textfile(const std::string& report_dir, const std::string& textfile,
                            std::size_t keep) {
  namespace fs = std::filesystem;
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(report_dir, ec)) {
    const auto name = entry.path().filename().string();
    if (!name.starts_with("job-") || !name.ends_with(".json")) continue;
    std::error_code time_ec;
    const auto when = entry.last_write_time(time_ec);
    if (!time_ec) files.emplace_back(when, entry.path());
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a > b; });
  if (files.size() > keep) files.resize(keep);
  std::vector<inventory::Json> reports;
  for (const auto& [when, path] : files) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    auto j = inventory::Json::parse(s.str(), nullptr, false);
    if (!j.is_discarded()) reports.push_back(std::move(j));
  }
  const auto text = job_metrics(reports);
  return local_file::write(
      textfile, true, [&](std::ostream& out) { out << text; }, "the metrics file");
}

Result<std::string> finished_job_efficiency(const std::string& report_dir,
                                            const std::string& job_id, bool json) {
  if (auto ok = check_job_id(job_id); !ok) return tl::unexpected(ok.error());
  const std::string path = report_path(report_dir, job_id);
  std::ifstream in(path);
  if (!in) return fail("no report of the job on this node (the Epilog writes it)", path, ENOENT);
  std::stringstream s;
  s << in.rdbuf();
  auto j = inventory::Json::parse(s.str(), nullptr, false);
  if (!j.is_object() || j.value("schema", "") != "dltune.slurm-job-report/1")
    return fail("not a dltune.slurm-job-report/1 document", path);
  if (json) return j.dump(2) + "\n";
  // The text again, from the document: the record judged anew, the events as they were.
  JobReport r;
  try {
    r.job_id = j.at("job_id").get<std::string>();
    r.user = j.at("user").get<std::string>();
    r.node = j.at("node").get<std::string>();
    r.exit_code = j.at("exit_code").get<std::string>();
    r.start_ns = j.at("start_ns").get<std::int64_t>();
    r.end_ns = j.at("end_ns").get<std::int64_t>();
    for (const auto& ev : j.at("events")) {
      diagnose::LoggedEvent e;
      e.wall_ns = ev.at("time_ns").get<std::int64_t>();
      e.source = ev.at("source").get<std::string>();
      e.event.kind = ev.at("kind").get<std::string>();
      const auto sev = ev.at("severity").get<std::string>();
      e.event.severity = sev == "critical"  ? diagnose::Severity::kCritical
                         : sev == "warning" ? diagnose::Severity::kWarning
                                            : diagnose::Severity::kInfo;
      e.event.explanation = ev.at("explanation").get<std::string>();
      e.event.action = ev.at("action").get<std::string>();
      e.event.fields = ev.at("fields").get<std::map<std::string, std::string>>();
      r.events.push_back(std::move(e));
    }
    r.notes = j.at("notes").get<std::vector<std::string>>();
  } catch (const inventory::Json::exception& e) {
    return fail(std::string("a job report with a bad field (") + e.what() + ")", path);
  }
  std::optional<JobRecord> record;
  if (!j.at("record").is_null()) {
    auto rec = record_from_json(j.at("record"), path);
    if (!rec) return tl::unexpected(rec.error());
    record = std::move(*rec);
  }
  diagnose::DoctorReport log;
  log.since_wall_ns = r.start_ns;
  log.events = r.events;
  EpilogRequest request{r.job_id, r.user, r.node, r.exit_code};
  auto rebuilt = build_report(request, std::move(record), log, r.end_ns);
  rebuilt.notes = r.notes;
  return render_text(rebuilt);
}

Result<EpilogRequest> epilog_request(const host::Root& root, EpilogRequest given,
                                     const std::map<std::string, std::string>& env,
                                     const std::string& host_name) {
  const auto var = [&](const char* name, const std::string& fallback = {}) {
    const auto it = env.find(name);
    return it != env.end() && !it->second.empty() ? it->second : fallback;
  };
  if (given.job_id.empty()) given.job_id = var("SLURM_JOB_ID");
  if (auto ok = check_job_id(given.job_id); !ok)
    return fail(ok.error().message() + " (--job, or $SLURM_JOB_ID as slurmd sets it)");
  // Under slurmd (SLURM_SCRIPT_CONTEXT=epilog_slurmd) the job has ended, whatever is left.
  if (var("SLURM_SCRIPT_CONTEXT") != "epilog_slurmd")
    if (const auto group = running_job_group(root, given.job_id))
      return fail(
          fmt::format("job {} still runs on this node ({}): the Epilog reports a job that "
                      "has ended; `dltune slurm efficiency {}` measures a running one",
                      given.job_id, *group, given.job_id));
  given.user = var("SLURM_JOB_USER");
  given.node = var("SLURMD_NODENAME", host_name);
  given.exit_code = var("SLURM_JOB_EXIT_CODE2");
  return given;
}

}  // namespace dltune::slurm
