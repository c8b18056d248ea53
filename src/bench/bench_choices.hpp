#pragma once
// bench's options as the command line gave them, checked into a BenchRequest with both sides'
// plans made from the host as it is: nothing has been changed when this fails.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/session.hpp"
#include "core/error.hpp"

namespace dltune::bench {

struct BenchChoices {
  Side a, b;                          // -a/-b, --set-a/--set-b, --only-a/--only(-b), --run-a/-b
  std::vector<std::string> run_args;  // --run: for both sides
  std::vector<std::string> command;   // the job, after --
  int runs = 6, warmup = 1;
  std::string order = "abba";  // or "ab"
  std::string rate_regex;      // --rate-regex
  double confidence = 95;      // --confidence, in percent
  std::int64_t interval_ns = 1'000'000'000;
  std::vector<std::string> data;  // tune's --data
  std::string html;               // --html FILE: checked as an output now, written at the end
  bool force = false;             // --force: --html may replace a file
};

// Parses one side's run options (the words `dltune run` takes) for the job.
using ParseRun = std::function<Result<launch::RunRequest>(const std::vector<std::string>& args)>;

// The choices, checked: the job's program found on the environment's PATH, --rate-regex
// compiled, --html an output, each side planned from `root` (the facts collected with
// `collect`) with its run options parsed by `parse_run`. `dir` is left for the caller to make.
[[nodiscard]] Result<BenchRequest> make_request(
    const host::Root& root, BenchChoices choices,
    const std::map<std::string, std::string>& environment, const inventory::CollectOptions& collect,
    const ParseRun& parse_run);

}  // namespace dltune::bench
