#pragma once
// `dltune profile`'s text: the verdict, its evidence, the action to try first, what else was
// seen, and what could not be measured.
#include <string>
#include <vector>

#include "diagnose/bottleneck.hpp"

namespace dltune::diagnose {

// "pid 1234 (python3 train.py), 2 DataLoader workers"
[[nodiscard]] std::string describe_job(const JobSeen& job);

// What limits the verdict: a process that is no training job, a job that ended, sources that
// were missing (the job's own PSI, schedstat, /proc/PID/io, the cgroup), too few samples.
[[nodiscard]] std::vector<std::string> profile_notes(const Profile& p, const JobSeen& job);

// `source` says what was profiled: "recording run.db", "pid 1234 for 30 s".
[[nodiscard]] std::string render_text(const Profile& p, const JobSeen& job,
                                      const std::string& source,
                                      const std::vector<std::string>& notes);

}  // namespace dltune::diagnose
