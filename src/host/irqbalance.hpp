#pragma once
// irqbalance, when it runs: the daemon that spreads device interrupts over the CPUs and rewrites
// every IRQ's affinity it has not been told to leave alone (irqbalance(1)).
#include <optional>
#include <set>
#include <vector>

#include "host/root.hpp"

namespace dltune::host {

struct Irqbalance {
  int pid = 0;
  // The IRQs it leaves alone: --banirq=N, --banirq N, -i N, -iN on its command line.
  std::set<int> banned_irqs;
  // The CPUs it puts no IRQ on: IRQBALANCE_BANNED_CPULIST (a CPU list, irqbalance 1.8 and later)
  // or IRQBALANCE_BANNED_CPUS (a hex mask, the older form) in its environment, and the CPUs the
  // kernel isolates (isolcpus, nohz_full), which irqbalance 1.8 and later leave out themselves.
  std::set<int> banned_cpus;
  bool environment_read = false;  // its /proc/PID/environ could be read (root only)
};

// The CPUs the kernel keeps from general work: isolcpus= and nohz_full=
// (/sys/devices/system/cpu/isolated and nohz_full, Documentation/ABI/testing/
// sysfs-devices-system-cpu), sorted and distinct; none when neither lists any.
[[nodiscard]] std::vector<int> isolated_cpus(const Root& root);

// The first process named irqbalance; nullopt when none runs (or /proc cannot be listed).
[[nodiscard]] std::optional<Irqbalance> find_irqbalance(const Root& root);

}  // namespace dltune::host
