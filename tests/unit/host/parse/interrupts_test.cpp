// /proc/interrupts: the CPU columns from the header, the numbered IRQs with a count per CPU and
// their names, the per-CPU counters (NMI, LOC, ...) left out, bad lines named.
#include "host/parse/interrupts.hpp"

#include <gtest/gtest.h>

namespace interrupts_test {

using dltune::host::parse::interrupts;

TEST(Interrupts, ColumnsCountsAndNamesOfTheNumberedIrqs) {
  // As this VM printed it (CPU1 offline would leave its column out: the header says which).
  const auto t = interrupts(
      "           CPU0       CPU2       \n"
      " 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
      " 38:          0       3535 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
      "NMI:          0          0   Non-maskable interrupts\n"
      "ERR:          0\n");
  EXPECT_TRUE(t.errors.empty()) << t.errors.front();
  EXPECT_EQ(t.cpus, (std::vector<int>{0, 2}));
  ASSERT_EQ(t.lines.size(), 2u);
  EXPECT_EQ(t.lines[1].irq, 38);
  EXPECT_EQ(t.lines[1].counts, (std::vector<std::uint64_t>{0, 3535}));
  EXPECT_EQ(t.lines[1].chip, "PCI-MSIX-0000:00:03.0");
  EXPECT_EQ(t.lines[1].name, "1-edge virtio2-input.0");
  EXPECT_EQ(t.lines[0].name, "5-edge ACPI:Ged");
}

TEST(Interrupts, ALineThatDoesNotParseIsNamedAndTheRestKept) {
  const auto t = interrupts(
      "  CPU0 CPU1\n"
      " 5: 1 x IO-APIC 5-edge a\n"
      " 6: 1\n"
      " 7: 2 3 IO-APIC 7-edge b\n");
  ASSERT_EQ(t.lines.size(), 1u);
  EXPECT_EQ(t.lines[0].irq, 7);
  ASSERT_EQ(t.errors.size(), 2u);
  EXPECT_EQ(t.errors[0], "line 2: IRQ 5: a count per CPU is not a number");
  EXPECT_EQ(t.errors[1], "line 3: expected 'IRQ: 2 counts ...'");
}

TEST(Interrupts, NoHeaderIsAnErrorAndNothingElse) {
  EXPECT_EQ(interrupts("").errors, (std::vector<std::string>{"no header 'CPU0 CPU1 ...'"}));
  const auto t = interrupts(" 5: 1 2 IO-APIC 5-edge a\n");
  EXPECT_TRUE(t.lines.empty());
  EXPECT_EQ(t.errors, (std::vector<std::string>{"line 1: expected the header 'CPU0 CPU1 ...'"}));
}

}  // namespace interrupts_test
