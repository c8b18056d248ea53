#pragma once
// The device interrupts that a bound job's CPUs handled while it ran (/proc/interrupts before
// and after: the numbered IRQs, not the local timer or IPIs), and whether irqbalance may steer
// more onto those CPUs. An interrupt on a CPU of the job preempts the job's thread there: the
// data loaders' and NCCL's progress threads feel it as jitter.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "host/irqbalance.hpp"
#include "host/parse/interrupts.hpp"
#include "host/root.hpp"

namespace dltune::launch {

struct IrqSource {
  int irq = 0;
  std::string name;  // the handler's ("1-edge virtio2-input.0")
  std::uint64_t count = 0;
};

struct JobInterrupts {
  std::vector<int> cpus;    // the job's
  std::uint64_t count = 0;  // device interrupts on them while the job ran
  double seconds = 0;
  std::vector<IrqSource> top;  // the IRQs that sent the most, at most three
  std::optional<int> irqbalance_pid;
  // The job's CPUs that irqbalance may place IRQs on (not banned from its environment, not
  // isolated); empty when it does not run or bans them all.
  std::vector<int> unbanned;
  bool irqbalance_environment_read = false;
};

// The interrupts between two readings of /proc/interrupts on `cpus` (an IRQ not there before
// counts from zero; one gone after, or whose count went down, counts nothing).
[[nodiscard]] JobInterrupts interrupts_between(const host::parse::InterruptTable& before,
                                               const host::parse::InterruptTable& after,
                                               const std::vector<int>& cpus);

// Reads /proc/interrupts when made and again at finish(): nothing when the job is not bound to
// CPUs or the file cannot be read.
class InterruptWatch {
 public:
  InterruptWatch(const host::Root& root, std::vector<int> cpus);
  [[nodiscard]] std::optional<JobInterrupts> finish() const;

 private:
  const host::Root& root_;
  std::vector<int> cpus_;
  std::optional<host::parse::InterruptTable> before_;
  std::chrono::steady_clock::time_point start_;
};

// What the summary says: "1234 on CPUs 2-3 (56/s), most from IRQ 38 virtio2-input.0 (1000)".
[[nodiscard]] std::string render_text(const JobInterrupts& i);
// The advice when irqbalance may place IRQs on the job's CPUs; nullopt otherwise.
[[nodiscard]] std::optional<std::string> irqbalance_advice(const JobInterrupts& i);
[[nodiscard]] inventory::Json to_json(const JobInterrupts& i);

}  // namespace dltune::launch
