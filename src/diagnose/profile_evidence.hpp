#pragma once
// What a profile's verdict carries beside the OS signals: the Python stacks of the job's main
// thread, of its DataLoader workers and of each rank (JSON "python" and a note each), and the
// job's own environment variables judged against this host (JSON "environment" and a note for
// each warning). `profile` adds them to the request it judges.
#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/py_sampler.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"

namespace dltune::diagnose {

// The main thread's stacks: "python" in `extra` and one note with the shares of the activities
// and the most frequent stack. Nothing without samples.
void add_python_evidence(const PySummary& py, nlohmann::json& extra,
                         std::vector<std::string>& notes);
// A sample of the DataLoader workers' stacks: "python.workers" and a note each.
void add_python_workers(const std::vector<std::pair<pid_t, PySummary>>& workers,
                        nlohmann::json& extra, std::vector<std::string>& notes);

// Each rank's own stacks, for its own verdict.
struct RankEvidence {
  std::map<pid_t, nlohmann::json> extra;
  std::map<pid_t, std::vector<std::string>> notes;
};
[[nodiscard]] RankEvidence rank_evidence(const std::vector<std::pair<pid_t, PySummary>>& ranks);

// The job's NCCL, CUDA, PyTorch and thread variables (/proc/PID/environ) against this host's
// facts (collected with `collect`, launch_only with the network): "environment" in `extra`, a
// note for each warning; a note that says why when the environment cannot be read (another
// user's process without root).
void add_environment_evidence(const host::Root& root, pid_t pid,
                              const inventory::CollectOptions& collect, nlohmann::json& extra,
                              std::vector<std::string>& notes);

}  // namespace dltune::diagnose
