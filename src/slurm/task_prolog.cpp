#include "slurm/task_prolog.hpp"

#include <sched.h>
#include <unistd.h>

#include <fmt/core.h>

#include "core/environment.hpp"
#include "core/text.hpp"
#include "launch/job_plan.hpp"

namespace dltune::slurm {

namespace {

std::string value_of(const std::map<std::string, std::string>& env, const std::string& key) {
  const auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

}  // namespace

TaskPrologResult task_prolog(const host::Root& root, const std::map<std::string, std::string>& env,
                             int task_cpus, int machine_cpus) {
  TaskPrologResult out;
  const std::string off = text::to_lower(value_of(env, "DLTUNE_TASK_PROLOG"));
  if (off == "off" || off == "0" || off == "no" || off == "false") {
    out.opted_out = true;
    out.notes.push_back("DLTUNE_TASK_PROLOG=" + value_of(env, "DLTUNE_TASK_PROLOG") +
                        ": nothing set for this job");
    return out;
  }
  launch::EnvironmentRequest request;
  request.cpus = std::max(1, task_cpus);
  request.machine_cpus = std::max(request.cpus, machine_cpus);
  if (const auto w = value_of(env, "DLTUNE_WORKERS"); !w.empty()) {
    const auto n = text::to_uint(w);
    if (n && *n <= 1024)
      request.workers = static_cast<int>(*n);
    else
      out.notes.push_back("DLTUNE_WORKERS=" + w + " ignored: expected a number of workers");
  }
  if (const auto a = value_of(env, "DLTUNE_ALLOCATOR"); !a.empty()) {
    if (auto parsed = launch::parse_allocator(a)) {
      request.allocator = *parsed;
      request.allocator_asked = true;
    } else {
      out.notes.push_back("DLTUNE_ALLOCATOR=" + a +
                          " ignored: expected glibc-tuned, tcmalloc, jemalloc or default");
    }
  }
  auto planned = env;
  auto plan = launch::plan_environment(root, request, planned);
  if (!plan) {
    // An allocator asked for but not installed: the task runs with the rest of the defaults.
    out.notes.push_back(plan.error().message() + "; the allocator is left as it is");
    request.allocator = launch::Allocator::kDefault;
    planned = env;
    plan = launch::plan_environment(root, request, planned);
    if (!plan) return out;
  }
  for (const auto& [k, v] : planned)
    if (!env.count(k)) out.exports.emplace_back(k, v);
  for (auto n : plan->notes) {
    // run's options in the notes, as a task says them.
    if (n.starts_with("threads: left to torch"))
      n = "threads: left to torch (the task may use the whole machine); DLTUNE_WORKERS=N "
          "(DataLoader workers per task) sizes them";
    if (const auto at = n.find("--allocator default"); at != std::string::npos)
      n.replace(at, 19, "DLTUNE_ALLOCATOR=default");
    out.notes.push_back(n);
  }
  return out;
}

TaskPrologResult task_prolog_here(const host::Root& root) {
  const auto env = process_environment();
  cpu_set_t set;
  CPU_ZERO(&set);
  const int task_cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return task_prolog(root, env, task_cpus, online > 0 ? static_cast<int>(online) : task_cpus);
}

std::string render(const TaskPrologResult& r) {
  // slurmstepd applies each "export" line: a newline in a note (which echoes the task's own
  // DLTUNE_* values) would make a line of its own, so no control character is written.
  std::string out;
  for (const auto& [k, v] : r.exports) {
    if (text::printable(k) != k || text::printable(v) != v) {
      out += "# dltune: " + text::printable(k) + " not set: its value holds control characters\n";
      continue;
    }
    out += fmt::format("export {}={}\n", k, v);
  }
  for (const auto& n : r.notes) out += "# dltune: " + text::printable(n) + "\n";
  return out;
}

}  // namespace dltune::slurm
