#pragma once
// /proc/interrupts (proc(5); kernel/irq/proc.c show_interrupts): a header naming the online
// CPUs, then one line per IRQ with a count per CPU, the interrupt chip, the hardware IRQ and
// trigger, and the handlers' names.
//
//              CPU0       CPU1
//    38:          0       3535 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
//   NMI:          0          0   Non-maskable interrupts
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::host::parse {

// How much of /proc/interrupts a reader takes: about 11 bytes a CPU and IRQ, so that a host of
// 512 CPUs and 2,000 IRQs (11 MiB) is read whole.
inline constexpr std::size_t kInterruptsMaxBytes = 16 << 20;

struct InterruptLine {
  int irq = 0;
  std::vector<std::uint64_t> counts;  // per CPU, in the header's order (InterruptTable::cpus)
  std::string chip;                   // "PCI-MSIX-0000:00:03.0", "IO-APIC"
  std::string name;  // what follows the chip: "1-edge virtio2-input.0" (spaces normalised)
};

struct InterruptTable {
  std::vector<int> cpus;             // the CPU of each count column (offline CPUs have none)
  std::vector<InterruptLine> lines;  // the numbered IRQs only (not NMI, LOC, ...)
  std::vector<std::string> errors;   // "line 7: ..." for a numbered line that does not parse
};

// A table without a header, or a line whose counts are not numbers, is reported in `errors`;
// what parses is kept.
[[nodiscard]] InterruptTable interrupts(std::string_view text);

}  // namespace dltune::host::parse
