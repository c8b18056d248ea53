#pragma once
// `dltune record -o FILE`: a recording of a scope (--pid, --cgroup, --slurm-job, or the host)
// until it ends or is stopped, or of a job it starts (-- COMMAND) from its start to its end. Every
// choice is checked before the file is made; a job that cannot start leaves no file behind.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"

namespace dltune::record {

struct RecordChoices {
  std::string output;                        // -o FILE (an output target; never "-")
  bool force = false;                        // --force: it may replace a file
  std::vector<std::string> command;          // -- COMMAND: the job to start; empty: the scope below
  pid_t pid = 0;                             // --pid: its tree
  std::string cgroup;                        // --cgroup
  std::string slurm_job;                     // --slurm-job: its cgroup on this node
  std::int64_t interval_ns = 1'000'000'000;  // --interval
  std::optional<std::int64_t> duration_ns;   // --duration
  bool gpus = true;                          // not --no-gpus
  bool python_stacks = true;                 // not --no-stacks
  bool quiet = false;                        // -q
};

struct RecordContext {
  std::map<std::string, std::string> environment;  // PATH for the job; SUDO_UID: whom it runs as
  std::string nvml_library;                        // DLTUNE_NVML_LIBRARY
  std::function<void(const std::string&)> notice;  // what happens to the recording, said
  // Sampling of a scope has started: what is recorded ("HOST  pid 42 and its tree").
  std::function<void(const std::string& scope)> started;
};

// Records as `choices` say. The exit status to give: the job's (1 when it exited 0 but its
// recording could not be completed); for a scope 0, or 1 when the recording could not be
// completed (its notice said why). Every failure is bad input: a choice refused, or the job not
// started (no file is left).
[[nodiscard]] tl::expected<int, Failure> record_command(const host::Root& root,
                                                        const RecordChoices& choices,
                                                        const RecordContext& context);

}  // namespace dltune::record
