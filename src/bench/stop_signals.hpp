#pragma once
// How `dltune bench` stops on a signal: SIGINT, SIGTERM and SIGHUP are caught, so that bench
// stops the running job, rolls back and compares what ran instead of dying with a profile
// applied. While a job runs, launch takes those signals itself (and passes them on); the run's
// summary lists them, and bench notes them here.
#include <array>
#include <csignal>
#include <vector>

namespace dltune::bench {

// The signal that asked bench to stop since StopSignals was made; 0: none.
[[nodiscard]] int stop_signal();

// Notes the first of `signals` that asks bench to stop (SIGINT, SIGTERM, SIGHUP), as if it had
// been caught: those launch received while a job ran.
void note_stop_signals(const std::vector<int>& signals);

// While it lives, SIGINT, SIGTERM and SIGHUP are noted (stop_signal) instead of ending bench.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  std::array<struct sigaction, 3> old_{};
};

}  // namespace dltune::bench
