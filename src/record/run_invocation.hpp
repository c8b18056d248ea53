#pragma once
// What `dltune run`'s options ask for (and profile's and bench's --run), from the values given to
// the checked request that record::run_with_facts runs: nothing is done before every option has
// been checked.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"
#include "launch/run_job.hpp"
#include "record/recorded_run.hpp"

namespace dltune::record {

// run's options as the command line gave them (launch::RunOptions holds the job's limits and
// placement; its command is the invocation's).
struct RunChoices {
  launch::RunOptions options;
  std::string profile = "training";  // -p: its limits.nofile and limits.memlock
  std::string rate_regex;            // --rate-regex
  std::string json_path;             // --json FILE ("-": stdout)
  std::string record;                // --record FILE
  std::int64_t record_interval_ns = 1'000'000'000;
  bool as_root = false;       // --as-root: under sudo, the job runs as root
  bool watch_stdout = false;  // --watch-stdout
  bool quiet = false;         // -q: no summary on stderr
  bool force = false;         // --force: --json and --record may replace a file
};

// The checked request for launch::run_job and what is done around it.
struct RunInvocation {
  launch::RunRequest request;
  std::optional<JobRecording> recording;  // --record
  std::string json_path;                  // --json ("-": stdout)
  bool force = false;
  bool quiet = false;
};

// What the invocation needs of the process that makes it.
struct RunContext {
  std::map<std::string, std::string> environment;  // the job's starts from it
  inventory::CollectOptions collect;               // the host facts, NVML's library
  std::function<void(const std::string&)> notice;  // what happens to the recording, said
};

// `choices` for `command`, checked: --record and --json as output targets (a recording is a
// file, never "-"), the profile loaded from `root`, --rate-regex compiled. An error names the
// option; nothing has been done.
[[nodiscard]] Result<RunInvocation> make_invocation(RunChoices choices,
                                                    std::vector<std::string> command,
                                                    const host::Root& root, RunContext context);

// The run's summary as --json asked: its JSON document written to the invocation's json_path
// ("-": standard output), replacing a file only with --force; nothing when none was asked.
[[nodiscard]] Result<void> write_summary(const RunInvocation& invocation,
                                         const launch::RunSummary& summary);

}  // namespace dltune::record
