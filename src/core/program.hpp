#pragma once
// Running another program and reading what it printed: argv exec'd directly (never a shell),
// with a deadline after which it is killed. For the cluster tools dltune plugs into (Slurm's
// scontrol), whose answers are short.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace dltune::program {

struct Options {
  std::chrono::milliseconds timeout{10'000};
  // The program's whole environment; nullopt: this process's own.
  std::optional<std::map<std::string, std::string>> env;
  std::size_t max_output = 1 << 20;  // bytes kept of each stream; the rest is read and dropped
};

struct Output {
  int exit_code = 0;  // 128 + signal when it was killed
  int signal = 0;
  bool timed_out = false;  // killed (SIGKILL) at the deadline
  std::string out, err;
  // "scontrol: exit 1: Node x not found" (stderr's first line, else stdout's), for messages.
  [[nodiscard]] std::string failure(const std::string& name) const;
};

// Runs argv (argv[0] looked up in PATH, or in /usr/bin:/bin when PATH is unset, as execvp does)
// with stdin from /dev/null, and waits for it to end or for the deadline. Errors only when it
// could not be started ("cannot run scontrol: No such file or directory").
[[nodiscard]] Result<Output> run(const std::vector<std::string>& argv, const Options& options = {});

}  // namespace dltune::program
