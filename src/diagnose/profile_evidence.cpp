#include "diagnose/profile_evidence.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "audit/env_rules.hpp"
#include "diagnose/profile_job.hpp"
#include "diagnose/py_activity.hpp"
#include "host/parse/process.hpp"
#include "inventory/host_facts.hpp"
#include "monitor/scope.hpp"

namespace dltune::diagnose {

namespace {

// "loading and decoding data 71%, the model 20%, other Python work <1%": by share, largest
// first.
std::string activity_shares(const PySummary& py, const PyActivities& table) {
  std::vector<std::pair<std::size_t, std::string>> parts;
  for (std::size_t i = 0; i < py.by_activity.size(); ++i)
    if (py.by_activity[i] > 0)
      parts.emplace_back(py.by_activity[i],
                         i < table.list.size() ? table.list[i].label : "other Python work");
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a > b; });
  std::string shares;
  for (const auto& [n, label] : parts) {
    const double pct = 100.0 * static_cast<double>(n) / static_cast<double>(py.samples);
    shares += fmt::format("{}{} {}", shares.empty() ? "" : ", ", label,
                          pct < 1 ? std::string("<1%") : fmt::format("{:.0f}%", pct));
  }
  return shares;
}

// An ordered JSON value (inventory's and audit's documents) as the plain one a profile's
// report is, structure for structure: no text in between.
nlohmann::json plain_json(const inventory::Json& v) {
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, x] : v.items()) out[k] = plain_json(x);
    return out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : v) out.push_back(plain_json(x));
    return out;
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) return v.get<double>();
  return nullptr;
}

}  // namespace

void add_python_evidence(const PySummary& py, nlohmann::json& extra,
                         std::vector<std::string>& notes) {
  const auto& table = builtin_py_activities();
  if (!table || py.samples == 0) return;
  extra["python"] = python_json(py, *table);
  std::string top;
  if (!py.top_stacks.empty())
    top = fmt::format(
        "; most often ({:.0f}%): {}",
        100.0 * static_cast<double>(py.top_stacks[0].second) / static_cast<double>(py.samples),
        py.top_stacks[0].first);
  notes.push_back(fmt::format("the main thread's Python stacks ({}, {} read): {}{}", py.interpreter,
                              py.samples, activity_shares(py, *table), top));
}

void add_python_workers(const std::vector<std::pair<pid_t, PySummary>>& workers,
                        nlohmann::json& extra, std::vector<std::string>& notes) {
  const auto& table = builtin_py_activities();
  if (!table || workers.empty()) return;
  auto& out = extra["python"]["workers"] = nlohmann::json::array();
  for (const auto& [pid, w] : workers) {
    auto j = python_json(w, *table);
    j["pid"] = pid;
    out.push_back(std::move(j));
    notes.push_back(fmt::format("DataLoader worker {}'s Python stacks ({} read): {}", pid,
                                w.samples, activity_shares(w, *table)));
  }
}

RankEvidence rank_evidence(const std::vector<std::pair<pid_t, PySummary>>& ranks) {
  RankEvidence out;
  for (const auto& [pid, py] : ranks) {
    nlohmann::json mine = nlohmann::json::object();
    add_python_evidence(py, mine, out.notes[pid]);
    out.extra[pid] = std::move(mine);
  }
  return out;
}

void add_environment_evidence(const host::Root& root, pid_t pid,
                              const inventory::CollectOptions& collect, nlohmann::json& extra,
                              std::vector<std::string>& notes) {
  auto raw = root.read(fmt::format("/proc/{}/environ", pid), 256 * 1024);
  if (!raw || !*raw) {
    notes.push_back(
        fmt::format("the job's environment (/proc/{}/environ) could not be read: its NCCL and CUDA "
                    "variables are not judged (root can)",
                    pid));
    return;
  }
  auto options = collect;
  options.launch_only = true;
  options.network = true;
  const auto facts = inventory::collect(root, options);
  const auto env = host::parse::environ_entries(**raw);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : audit::judge_environment(env, facts)) {
    list.push_back(plain_json(audit::to_json(p)));
    if (p.severity >= audit::Severity::kWarn) notes.push_back("environment: " + audit::one_line(p));
  }
  extra["environment"] = {
      {"pid", pid}, {"variables", audit::training_variables(env)}, {"problems", std::move(list)}};
}

ProfileResult<ProfileReport> judge_recording(const Rules& rules, const std::string& path,
                                             JudgeRequest request,
                                             std::optional<std::int64_t> skip_ns) {
  auto job = read_recorded_job(path);
  if (!job) return tl::unexpected(job.error());
  for (auto& n : job->notes) request.notes.push_back(std::move(n));
  request.job_errors = std::move(job->job_errors);
  if (job->python) add_python_evidence(*job->python, request.extra, request.notes);
  auto ranks = rank_evidence(job->python_ranks);
  request.rank_extra = std::move(ranks.extra);
  request.rank_notes = std::move(ranks.notes);
  request.skip_ns = skip_ns.value_or(job->launched ? kLaunchedSkipNs : 0);
  return judge_job(rules, job->windows, request);
}

ProfileResult<ProfileReport> judge_live(const host::Root& root, const Rules& rules, LiveJob job,
                                        const std::string& what, pid_t pid,
                                        const inventory::CollectOptions& collect,
                                        JudgeRequest request) {
  request.notes = std::move(job.notes);
  if (pid != 0) add_environment_evidence(root, pid, collect, request.extra, request.notes);
  if (job.python) add_python_evidence(*job.python, request.extra, request.notes);
  add_python_workers(job.python_workers, request.extra, request.notes);
  auto ranks = rank_evidence(job.python_ranks);
  request.rank_extra = std::move(ranks.extra);
  request.rank_notes = std::move(ranks.notes);
  request.source = fmt::format("{}, sampled for {:.1f} s", what, job.seconds);
  return judge_job(rules, job.windows, request);
}

ProfileResult<ProfileReport> profile_live(const host::Root& root, const Rules& rules,
                                          const LiveProfile& live) {
  LiveRequest request;
  request.pid = live.pid;
  std::string what = fmt::format("pid {}", live.pid);
  if (!live.slurm_job.empty()) {
    auto group = monitor::slurm_job_cgroup(root, live.slurm_job);
    if (!group) return refused(group.error());
    request.cgroup = *group;
    what = fmt::format("Slurm job {} ({})", live.slurm_job, *group);
  }
  request.interval_ns = live.interval_ns;
  if (live.duration_ns) request.duration_ns = *live.duration_ns;
  monitor::raise_open_file_limit();
  request.sampler = monitor::sampler_options({}, live.interval_ns, live.gpus, live.nvml_library);
  if (!live.python_stacks) request.python_interval_ns = 0;
  request.on_start = [&] {
    if (live.on_start) live.on_start(what, request.duration_ns);
  };
  auto job = sample_live(root, request);
  if (!job) return tl::unexpected(job.error());
  inventory::CollectOptions collect;
  collect.gpus = live.gpus;
  collect.nvml_library = live.nvml_library;
  JudgeRequest judge;
  judge.skip_ns = live.skip_ns;
  return judge_live(root, rules, std::move(*job), what, live.pid, collect, std::move(judge));
}

}  // namespace dltune::diagnose
