// The profile for people (diagnose/profile_text.hpp).
#include "diagnose/profile_text.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/text.hpp"

namespace dltune::diagnose {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

bool absent(const Profile& p, Signal s) {
  return !p.values[static_cast<std::size_t>(s)];
}

}  // namespace

std::string describe_job(const JobSeen& job) {
  if (job.main == 0) return "no job";
  std::string what = job.cmdline.empty() ? job.comm : job.cmdline;
  if (what.size() > 60) what = what.substr(0, 57) + "...";
  std::string gpus;
  for (const auto& g : job.gpus)
    gpus += fmt::format("{}{}{}", gpus.empty() ? ", on GPU " : ", ", g.index,
                        g.peak_memory_bytes > 0
                            ? fmt::format(" ({} at most)", text::human_bytes(g.peak_memory_bytes))
                            : std::string());
  return fmt::format(
      "pid {} ({}), {} DataLoader worker{}{}{}", job.main, what, job.max_workers,
      job.max_workers == 1 ? "" : "s",
      job.max_children > 0 ? fmt::format(", {} other children", job.max_children) : std::string(),
      gpus);
}

std::vector<std::string> profile_notes(const Profile& p, const JobSeen& job) {
  std::vector<std::string> notes;
  if (job.main != 0 && job.max_workers == 0 && job.max_children == 0 &&
      job.cmdline.find("python") == std::string::npos &&
      job.comm.find("python") == std::string::npos)
    notes.push_back(fmt::format(
        "pid {} ({}) is not a Python process and has no children: profiled as a generic process "
        "tree (the DataLoader rules cannot apply)",
        job.main, job.comm));
  if (job.main_gone)
    notes.push_back("the job ended while it was profiled: the verdict rests on what was seen");
  if (absent(p, Signal::kJobPsiCpu))
    notes.push_back(
        "no pressure (PSI) for the job's own cgroup: the host's PSI is shown but not judged on, "
        "other tenants pollute it (start the job with dltune run to get the job's own)");
  if (absent(p, Signal::kMainRunQueue) && job.main != 0)
    notes.push_back("no /proc/PID/schedstat: run-queue waits are unknown (CONFIG_SCHED_INFO)");
  if (absent(p, Signal::kJobReadBytes) && job.main != 0)
    notes.push_back("the job's /proc/PID/io was unreadable (another user's processes need root)");
  if (absent(p, Signal::kCgroupThrottled) && job.main != 0)
    notes.push_back("no cgroup counters for the job (its group could not be read)");
  if (p.samples < 8)
    notes.push_back(fmt::format(
        "only {} steady samples: profile longer (--duration) for a confident verdict", p.samples));
  return notes;
}

std::string render_text(const Profile& p, const JobSeen& job, const std::string& source,
                        const std::vector<std::string>& notes) {
  std::string out;
  const double secs = static_cast<double>(p.end_ns - p.start_ns) / 1e9;
  out += fmt::format(
      "dltune profile: {}\n  {}\n  {:.1f} s of steady samples ({}){}\n\n", source,
      describe_job(job), secs, p.samples,
      p.skipped > 0 ? fmt::format(", {} start-up samples left out", p.skipped) : std::string());
  const auto& v = p.verdict;
  out += fmt::format("VERDICT: {}  (confidence {}{})\n", upper(v.verdict), v.confidence,
                     v.healthy ? ", healthy" : "");
  out += fmt::format("  {}\n  {}\n", v.title, v.summary);
  if (!v.evidence.empty()) {
    out += "\nEvidence\n";
    for (const auto& e : v.evidence)
      out += fmt::format("  {} {}\n", e.supporting ? "+" : "*", e.text);
  }
  if (!v.action.empty()) {
    out += "\nTry first\n";
    out += fmt::format("  {}\n", v.action);
    if (!v.run.empty()) out += fmt::format("  -> {}\n", v.run);
  }
  if (!p.also.empty()) {
    out += "\nAlso seen\n";
    for (const auto& a : p.also)
      out += fmt::format("  {} (confidence {}): {}\n", a.title, a.confidence, a.summary);
  }
  if (!p.also_try.empty()) {
    out += "\nAlso try (weaker signals than a verdict needs; prove it with the bench line)\n";
    for (const auto& a : p.also_try) {
      out += fmt::format("  {}: {}\n", a.title, a.why);
      out += fmt::format("    measured: {}\n", a.measured);
      out += fmt::format("    -> {}\n", a.bench);
    }
  }
  if (!p.near_misses.empty() && (v.verdict == "inconclusive" || v.verdict == "mixed")) {
    out += "\nNearest rules\n";
    for (const auto& m : p.near_misses) {
      out += fmt::format("  {} ({} of {} conditions): lacked {}\n", m.title, m.met, m.total,
                         fmt::join(m.lacking, "; "));
      if (!m.disambiguate.empty()) out += fmt::format("    to settle it: {}\n", m.disambiguate);
    }
  }
  if (!notes.empty()) {
    out += "\nNotes\n";
    for (const auto& n : notes) out += fmt::format("  - {}\n", n);
  }
  return out;
}

}  // namespace dltune::diagnose
