// The device interrupts on a bound job's CPUs (two readings of /proc/interrupts) and irqbalance's
// banned CPUs, on hand-made trees.
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "host/irqbalance.hpp"
#include "host/parse/interrupts.hpp"
#include "launch/job_interrupts.hpp"
#include "support/temp_tree.hpp"

namespace job_interrupts_test {

using namespace dltune;

namespace {

// Four CPUs, CPU 2 offline (no column), then three device IRQs and the local timer.
constexpr const char* kBefore =
    "           CPU0       CPU1       CPU3\n"
    "  38:        10         20         30   PCI-MSIX-0000:00:03.0   1-edge      eth0-rx\n"
    "  39:         0          5          0   PCI-MSIX-0000:00:03.0   2-edge      eth0-tx\n"
    "  40:       100          0          0   PCI-MSIX-0000:00:04.0   1-edge      nvme0q1\n"
    " LOC:      9999       9999       9999   Local timer interrupts\n";
constexpr const char* kAfter =
    "           CPU0       CPU1       CPU3\n"
    "  38:        10        120         35   PCI-MSIX-0000:00:03.0   1-edge      eth0-rx\n"
    "  39:         0          9          0   PCI-MSIX-0000:00:03.0   2-edge      eth0-tx\n"
    "  40:       900          0          0   PCI-MSIX-0000:00:04.0   1-edge      nvme0q1\n"
    "  41:         0          2          0   PCI-MSIX-0000:00:05.0   1-edge      new-device\n"
    " LOC:     99999      99999      99999   Local timer interrupts\n";

}  // namespace

TEST(JobInterrupts, CountsTheDeviceIrqsOnTheJobsCpusOnly) {
  const auto before = host::parse::interrupts(kBefore);
  const auto after = host::parse::interrupts(kAfter);
  // CPUs 1 and 3 (2 is offline: no column, counted as nothing).
  const auto i = launch::interrupts_between(before, after, {3, 2, 1});
  EXPECT_EQ(i.cpus, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(i.count, 100u + 5u + 4u + 2u);  // eth0-rx on 1 and 3, eth0-tx, the new IRQ
  ASSERT_EQ(i.top.size(), 3u);
  EXPECT_EQ(i.top[0].irq, 38);
  EXPECT_EQ(i.top[0].count, 105u);
  EXPECT_EQ(i.top[0].name, "1-edge eth0-rx");
  EXPECT_EQ(i.top[1].irq, 39);
  EXPECT_EQ(i.top[2].irq, 41);  // not there before: counted from zero
  // nvme0q1 sent 800 to CPU 0, which is not the job's.
  const auto zero = launch::interrupts_between(before, after, {0});
  EXPECT_EQ(zero.count, 800u);
  // A counter that went down (a reading from another boot) counts nothing.
  const auto back = launch::interrupts_between(after, before, {0, 1, 3});
  EXPECT_EQ(back.count, 0u);
  EXPECT_TRUE(back.top.empty());
}

TEST(JobInterrupts, IrqbalancesBannedCpusFromItsEnvironmentAndTheIsolatedOnes) {
  dltune::testing::TempTree t;
  t.write("proc/1/comm", "init\n")
      .write("proc/731/comm", "irqbalance\n")
      .write("proc/731/cmdline", std::string("/usr/sbin/irqbalance\0--foreground\0--banirq=38\0-i\0"
                                             "39\0",
                                             52))
      .write("proc/731/environ", std::string("PATH=/usr/bin\0IRQBALANCE_BANNED_CPULIST=4-5\0", 44))
      .write("sys/devices/system/cpu/isolated", "7\n")
      .write("sys/devices/system/cpu/nohz_full", "(null)\n");
  const auto b = host::find_irqbalance(t.root());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->pid, 731);
  EXPECT_EQ(b->banned_irqs, (std::set<int>{38, 39}));
  EXPECT_EQ(b->banned_cpus, (std::set<int>{4, 5, 7}));
  EXPECT_TRUE(b->environment_read);

  // The older form: a hex mask.
  t.write("proc/731/environ", std::string("IRQBALANCE_BANNED_CPUS=0000000c\0", 32));
  const auto mask = host::find_irqbalance(t.root());
  ASSERT_TRUE(mask);
  EXPECT_EQ(mask->banned_cpus, (std::set<int>{2, 3, 7}));

  // What the summary says of a job on CPUs 2-5 with that irqbalance.
  launch::JobInterrupts i;
  i.cpus = {2, 3, 4, 5};
  i.irqbalance_pid = 731;
  i.irqbalance_environment_read = true;
  i.unbanned = {4, 5};
  const auto advice = launch::irqbalance_advice(i);
  ASSERT_TRUE(advice);
  EXPECT_NE(advice->find("irqbalance (pid 731) may place device IRQs on the job's CPUs 4-5"),
            std::string::npos)
      << *advice;
  EXPECT_NE(advice->find("IRQBALANCE_BANNED_CPULIST=4-5 in /etc/default/irqbalance"),
            std::string::npos);
  EXPECT_EQ(launch::to_json(i)["irqbalance_unbanned_cpus"], "4-5");
  i.unbanned.clear();
  EXPECT_FALSE(launch::irqbalance_advice(i));
  EXPECT_FALSE(launch::to_json(i).contains("advice"));

  // No irqbalance: nothing.
  dltune::testing::TempTree none;
  none.write("proc/1/comm", "init\n");
  EXPECT_FALSE(host::find_irqbalance(none.root()));
}

}  // namespace job_interrupts_test
