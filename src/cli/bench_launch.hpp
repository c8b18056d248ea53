#pragma once
// How `dltune bench` starts each run and stops on a signal: `dltune run` in a process
// group of its own, its output in the run's log, and SIGINT/SIGTERM/SIGHUP caught so that bench
// stops the run, rolls back and reports instead of dying with a profile applied.
#include <array>
#include <csignal>
#include <string>
#include <vector>

namespace dltune::cli::bench_launch {

// The signal that asked bench to stop since StopSignals was made; 0: none.
[[nodiscard]] int stop_signal();

// While it lives, SIGINT, SIGTERM and SIGHUP are noted (stop_signal) and passed on to the run
// that is going, instead of ending bench.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  std::array<struct sigaction, 3> old_{};
};

struct Launch {
  int exit_code = 0;  // dltune run's (the job's, 128+N for a signal N)
  double seconds = 0;
  std::string error;  // fork/exec or the log could not be made
};

// Runs `argv` (argv[0] is executed directly: /proc/self/exe for dltune itself) with stdin
// /dev/null and stdout and stderr into `log`, in a process group of its own, and waits for it.
// A stop signal that came before it started is passed on at once.
[[nodiscard]] Launch launch_run(const std::vector<std::string>& argv, const std::string& log);

}  // namespace dltune::cli::bench_launch
