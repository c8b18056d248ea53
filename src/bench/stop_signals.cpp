#include "bench/stop_signals.hpp"

#include <algorithm>

namespace dltune::bench {

namespace {

constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int sig) {
  g_stop = sig;
}

}  // namespace

int stop_signal() {
  return g_stop;
}

void note_stop_signals(const std::vector<int>& signals) {
  if (g_stop != 0) return;
  for (const int sig : signals)
    if (std::find(kSignals.begin(), kSignals.end(), sig) != kSignals.end()) {
      g_stop = sig;
      return;
    }
}

StopSignals::StopSignals() {
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  ::sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
}

}  // namespace dltune::bench
