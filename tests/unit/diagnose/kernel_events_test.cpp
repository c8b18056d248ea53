// Kernel log lines → events (doctor's groundwork), on real lines, each with its source:
// this VM's own log (dmesg during dltune's run tests), public bug reports, and lines written from
// the kernel's and the driver's printk formats (named at each parser) where no public line was at
// hand. The message text only: the timestamp and facility are the source's business.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "diagnose/kernel_events.hpp"
#include "diagnose/kernel_log.hpp"
#include "diagnose/syslog_files.hpp"

using namespace dltune::diagnose;

namespace {

const XidTable& xids() {
  const auto& t = builtin_xid_table();
  EXPECT_TRUE(t) << t.error().message();
  return *t;
}

KernelEvent must(std::string_view line) {
  auto e = classify(line, xids());
  EXPECT_TRUE(e.has_value()) << line;
  return e.value_or(KernelEvent{});
}

}  // namespace

TEST(XidTable, EveryCodeTheIssueNamesIsThereWithItsSource) {
  for (int code :
       {13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 140}) {
    const auto* x = xids().find(code);
    ASSERT_NE(x, nullptr) << code;
    EXPECT_NE(x->source.find("NVIDIA XID Errors"), std::string::npos) << code;
    EXPECT_FALSE(x->action.empty()) << code;
  }
  EXPECT_EQ(xids().find(79)->severity, Severity::kCritical);
  EXPECT_EQ(xids().find(45)->severity, Severity::kInfo);
  EXPECT_EQ(xids().find(7), nullptr);
}

TEST(XidTable, BadTablesAreErrorsNamingTheEntry) {
  const auto err = [](const std::string& t) {
    auto r = parse_xid_table(t, "x.toml");
    return r ? std::string("(parsed)") : r.error().message();
  };
  const std::string ok =
      "[[xid]]\ncode = 1\nname = \"n\"\nmeaning = \"m\"\naction = \"a\"\nseverity = \"info\"\n"
      "source = \"s\"\n";
  EXPECT_EQ(err(ok), "(parsed)");
  EXPECT_NE(err(ok + ok).find("listed twice"), std::string::npos);
  // A float code is not converted (toml++ would, unchecked: 1e99 is UB; found by fuzz_toml).
  for (const char* code : {"1e99", "79.0", "3000000000"}) {
    std::string f = ok;
    f.replace(f.find("code = 1"), 8, std::string("code = ") + code);
    EXPECT_NE(err(f).find("code: expected a positive whole number"), std::string::npos) << code;
  }
  EXPECT_NE(err(ok + "colour = 1\n").find("unknown key 'colour'"), std::string::npos);
  std::string bad = ok;
  bad.replace(bad.find("\"info\""), 6, "\"dire\"");
  EXPECT_NE(err(bad).find("severity"), std::string::npos);
  EXPECT_NE(err(bad).find("x.toml: [[xid]] #1"), std::string::npos);
  EXPECT_NE(err("").find("no [[xid]]"), std::string::npos);
  EXPECT_NE(err("[[xid]\n").find("x.toml"), std::string::npos);
}

TEST(KernelEvents, OomKillsFromThisVm) {
  // This VM's dmesg, dltune run's memory-limit test (mm/oom_kill.c, Linux 6.1).
  auto e = must(
      "Memory cgroup out of memory: Killed process 17749 (python3) total-vm:488048kB, "
      "anon-rss:102016kB, file-rss:5440kB, shmem-rss:0kB, UID:0 pgtables:264kB oom_score_adj:0");
  EXPECT_EQ(e.kind, "oom_kill");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["pid"], "17749");
  EXPECT_EQ(e.fields["task"], "python3");
  EXPECT_EQ(e.fields["scope"], "cgroup");
  EXPECT_EQ(e.fields["anon_rss"], "102016kB");
  EXPECT_NE(e.explanation.find("memory cgroup"), std::string::npos);
  EXPECT_NE(e.action.find("--memory"), std::string::npos);
  // The same kill's context line (this VM).
  e = must(
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/"
      "dltune/test-17747-AJob,task_memcg=/dltune/test-17747-AJob,task=python3,pid=17749,uid=0");
  EXPECT_EQ(e.kind, "oom_context");
  EXPECT_EQ(e.fields["cgroup"], "/dltune/test-17747-AJob");
  EXPECT_EQ(e.fields["pid"], "17749");
  // A global OOM of a DataLoader worker (torch 2.2+ names them pt_data_worker), in
  // mm/oom_kill.c's format.
  e = must(
      "Out of memory: Killed process 21037 (pt_data_worker) total-vm:9000000kB, "
      "anon-rss:4000000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:9000kB oom_score_adj:0");
  EXPECT_EQ(e.fields["scope"], "global");
  EXPECT_NE(e.explanation.find("a DataLoader worker"), std::string::npos);
  EXPECT_NE(e.explanation.find("the machine"), std::string::npos);
}

TEST(KernelEvents, XidsWithTheirMeaningPciAndProcess) {
  // NVIDIA/open-gpu-kernel-modules issue #1151 (an RTX 5080 falling off the bus).
  auto e = must("NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.");
  EXPECT_EQ(e.kind, "xid");
  EXPECT_EQ(e.fields["xid"], "79");
  EXPECT_EQ(e.fields["pci"], "0000:2b:00");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_NE(e.explanation.find("GPU has fallen off the bus"), std::string::npos);
  // stas00/ml-engineering, compute/accelerator/nvidia/debug.md (row remapping).
  e = must(
      "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
      "reset gpu to activate.");
  EXPECT_EQ(e.fields["xid"], "63");
  EXPECT_EQ(e.fields["pid"], "1896");
  EXPECT_NE(e.action.find("Reset the GPU"), std::string::npos);
  // The driver's form with the process name (r535+).
  e = must(
      "NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python3, Graphics SM Warp Exception on "
      "(GPC 0, TPC 0, SM 0): Out Of Range Address");
  EXPECT_EQ(e.fields["task"], "python3");
  EXPECT_EQ(e.severity, Severity::kWarning);
  // An older driver without "PCI:" and a code not in the table (pastebin xJaypMZt).
  e = must("NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007 M 00001ffc Data ffffffff");
  EXPECT_EQ(e.fields["pci"], "0000:01:00");
  EXPECT_NE(e.explanation.find("not in dltune's table"), std::string::npos);
  // The GPU lost without an Xid line (same issue #1151).
  e = must("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.");
  EXPECT_EQ(e.kind, "gpu_lost");
  EXPECT_EQ(e.fields["pci"], "0000:2b:00.0");
  // Truncated: no code.
  EXPECT_FALSE(classify("NVRM: Xid (PCI:0000:2b:00): ", xids()).has_value());
}

TEST(KernelEvents, PcieErrorsAndADowngradedLink) {
  // drivers/pci/pcie/aer.c formats (Linux 6.1), as a GPU's root port logs them.
  auto e = must("pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0");
  EXPECT_EQ(e.kind, "aer");
  EXPECT_EQ(e.fields["device"], "0000:01:00.0");
  EXPECT_EQ(e.severity, Severity::kWarning);
  e = must(
      "pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
      "(Receiver ID)");
  EXPECT_EQ(e.fields["device"], "0000:00:01.0");
  EXPECT_EQ(e.fields["type"], "Physical Layer");
  e = must(
      "nvidia 0000:3b:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), "
      "type=Transaction Layer, (Requester ID)");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["severity"], "Uncorrected (Non-Fatal)");
  e = must("pcieport 0000:00:03.0: AER: Multiple Corrected error received: 0000:3b:00.0");
  EXPECT_EQ(e.fields["severity"], "Corrected");
  // drivers/pci/pci.c __pcie_print_link_status.
  e = must(
      "nvidia 0000:3b:00.0: 2.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x1 "
      "link at 0000:00:1c.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)");
  EXPECT_EQ(e.kind, "pcie_link");
  EXPECT_EQ(e.fields["device"], "0000:3b:00.0");
  EXPECT_EQ(e.fields["limited_by"], "2.5 GT/s PCIe x1");
  EXPECT_EQ(e.fields["at"], "0000:00:1c.0");
}

TEST(KernelEvents, HungTasksLockupsAndCrashesOfTrainingProcesses) {
  // kernel/hung_task.c.
  auto e = must("INFO: task pt_data_worker:5121 blocked for more than 120 seconds.");
  EXPECT_EQ(e.kind, "hung_task");
  EXPECT_EQ(e.fields["pid"], "5121");
  EXPECT_NE(e.explanation.find("DataLoader worker"), std::string::npos);
  // kernel/watchdog.c.
  e = must("watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [python3:4242]");
  EXPECT_EQ(e.kind, "soft_lockup");
  EXPECT_EQ(e.fields["cpu"], "3");
  EXPECT_EQ(e.fields["task"], "python3");
  // arch/x86/mm/fault.c show_signal_msg (Linux 6.1 adds "likely on CPU").
  e = must(
      "python3[4242]: segfault at 0 ip 00007f3a1c2b4d10 sp 00007ffd5e8c1f40 error 4 in "
      "libtorch_cpu.so[7f3a18000000+1c000000] likely on CPU 1 (core 1, socket 0)");
  EXPECT_EQ(e.kind, "segfault");
  EXPECT_EQ(e.fields["pid"], "4242");
  EXPECT_EQ(e.fields["library"], "libtorch_cpu.so");
  // arch/x86/kernel/traps.c.
  e = must(
      "traps: pt_data_worker[777] general protection fault ip:7f0c2a3b4c5d sp:7ffc1e2d3c40 "
      "error:0 in libc.so.6[7f0c2a300000+155000]");
  EXPECT_EQ(e.kind, "general_protection");
  EXPECT_EQ(e.fields["task"], "pt_data_worker");
  EXPECT_EQ(e.fields["library"], "libc.so.6");
  // mm/page_alloc.c warn_alloc.
  e = must(
      "python3: page allocation failure: order:4, mode:0x40dc0(GFP_KERNEL|__GFP_COMP|"
      "__GFP_ZERO), nodemask=(null),cpuset=/,mems_allowed=0");
  EXPECT_EQ(e.kind, "page_alloc_failure");
  EXPECT_EQ(e.fields["order"], "4");
  // A negative order (fuzz_kernel_log): said as unknown, never shifted by it (UBSan).
  e = must("x: page allocation failure: order:-1311, mode:0x0");
  EXPECT_NE(e.explanation.find("? contiguous pages"), std::string::npos) << e.explanation;
  // A year whose nanoseconds would overflow is not a syslog stamp.
  EXPECT_FALSE(parse_syslog_line("2827-01-01T00:00:00Z host kernel: x", 0));
}

TEST(KernelEvents, StorageErrorsOnDataMounts) {
  // fs/ext4/super.c __ext4_error.
  auto e = must(
      "EXT4-fs error (device nvme0n1p1): ext4_find_entry:1455: inode #2: comm python3: "
      "reading directory lblock 0");
  EXPECT_EQ(e.kind, "fs_error");
  EXPECT_EQ(e.fields["device"], "nvme0n1p1");
  e = must(
      "XFS (sdb1): metadata I/O error in \"xfs_da_read_buf+0x9b/0x110 [xfs]\" at daddr 0x40 "
      "len 8 error 5");
  EXPECT_EQ(e.fields["device"], "sdb1");
  // An XFS line that is no error.
  EXPECT_FALSE(classify("XFS (sdb1): Mounting V5 Filesystem", xids()).has_value());
  // drivers/nvme/host/pci.c nvme_timeout.
  e = must("nvme nvme0: I/O 123 QID 4 timeout, aborting");
  EXPECT_EQ(e.kind, "nvme_timeout");
  EXPECT_EQ(e.fields["device"], "nvme0");
}

TEST(KernelEvents, OrdinaryAndGarbledLinesAreNoEvents) {
  for (const char* line :
       {"", "Linux version 6.1.0-18-amd64", "EXT4-fs (vda): mounted filesystem", "Killed process",
        "Killed process x", "INFO: task nope", "BUG: soft lockup - CPU#", "[: segfault at ",
        "a: page allocation", "nvme nvme0: pci function 0000:00:04.0", "NVRM: loading NVIDIA UNIX",
        "AER: something"}) {
    EXPECT_FALSE(classify(line, xids()).has_value()) << line;
  }
}

TEST(KernelEvents, GpuEventsNameTheGpuByIndexAndUuid) {
  std::vector<LoggedEvent> events;
  for (const char* line : {"NVRM: Xid (PCI:0000:3B:00): 79, GPU has fallen off the bus.",
                           "pcieport 0000:00:01.0: AER: Corrected error received: 0000:9a:00.0",
                           "nvme nvme0: I/O 1 QID 2 timeout, aborting",
                           "NVRM: Xid (PCI:0000:5d:00): 48, Double Bit ECC Error"})
    events.push_back(LoggedEvent{must(line), 0, "kmsg", {line}});
  EXPECT_TRUE(names_pci(events));
  const std::vector<GpuName> gpus = {
      {"0000:3b:00.0", 2u, std::string("GPU-aaaa"), std::nullopt, std::nullopt},
      {"0000:9a:00.0", 5u, std::nullopt, std::nullopt, std::nullopt},
      {"0000:17:00.0", 0u, std::string("GPU-cccc"), std::nullopt, std::nullopt},
  };
  EXPECT_TRUE(name_gpus(events, gpus));
  EXPECT_EQ(events[0].event.fields["gpu"], "2");
  EXPECT_EQ(events[0].event.fields["uuid"], "GPU-aaaa");
  EXPECT_NE(events[0].event.explanation.find("This is GPU 2 (0000:3b:00.0), GPU-aaaa."),
            std::string::npos);
  EXPECT_EQ(events[1].event.fields["gpu"], "5");  // the AER's device is a GPU
  EXPECT_EQ(events[2].event.fields.count("gpu"), 0u);
  EXPECT_EQ(events[3].event.fields.count("gpu"), 0u);  // 0000:5d:00 is no GPU here
}

TEST(KernelEvents, MemoryXidsSayTheGpusMemoryStateNowAndTheResetItNeeds) {
  std::vector<LoggedEvent> events;
  // NVIDIA XID Errors' formats for Xid 63 (A100 row remapper) and 79 (not a memory Xid).
  for (const char* line :
       {"NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
        "reset gpu to activate.",
        "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:5d:00): 95, pid=2277, Uncontained: FBHUB. RST: Yes, D-RST: No"})
    events.push_back(LoggedEvent{must(line), 0, "kmsg", {line}});
  dltune::gpu::Device pending;
  pending.index = 1;
  pending.pci_bus_id = "0000:10:1c.0";
  pending.ecc_errors.volatile_uncorrected = 0;
  pending.ecc_errors.aggregate_uncorrected = 1;
  pending.row_remap = dltune::gpu::RowRemap{0, 1, true, false};
  dltune::gpu::Device failed;
  failed.index = 3;
  failed.pci_bus_id = "0000:5d:00.0";
  failed.row_remap = dltune::gpu::RowRemap{4, 2, false, true};
  std::vector<GpuName> gpus(3);
  gpus[0].pci = "0000:10:1c.0";
  gpus[0].index = 1u;
  gpus[1].pci = "0000:3b:00.0";
  gpus[1].index = 2u;
  gpus[2].pci = "0000:5d:00.0";
  gpus[2].index = 3u;
  describe_memory(pending, gpus[0]);
  describe_memory(failed, gpus[2]);
  dltune::gpu::Device clean;  // NVML said nothing about memory
  describe_memory(clean, gpus[1]);
  EXPECT_FALSE(gpus[1].memory_now);
  const std::string xid63_action = events[0].event.action;
  ASSERT_TRUE(name_gpus(events, gpus));
  EXPECT_NE(events[0].event.explanation.find(
                "Its memory now (NVML): uncorrectable ECC errors 0 since the driver loaded (1 in "
                "its life); rows remapped 0 for corrected, 1 for uncorrected errors; a remap "
                "waits for a GPU reset."),
            std::string::npos)
      << events[0].event.explanation;
  EXPECT_EQ(events[0].event.action,
            "Reset the GPU once its jobs have stopped (nvidia-smi -r -i 0000:10:1c.0) so that the "
            "pending row remap takes effect. " +
                xid63_action);
  EXPECT_EQ(events[1].event.fields.count("memory_now"), 0u);  // Xid 79 is not about memory
  EXPECT_NE(events[2].event.fields["memory_now"].find("a row remap FAILED"), std::string::npos);
  EXPECT_EQ(events[2].event.action.rfind("A row remap failed, so the bad memory stays in use", 0),
            0u);
}

TEST(KernelEvents, AnOomKillCarriesTheUsageLimitAndLargestTasksOfItsReport) {
  // This VM's log of one cgroup OOM kill (Linux 6.1, dltune's doctor test), in order; the
  // "memory:" line of mm/memcontrol.c and the task dump of mm/oom_kill.c come before the kill.
  EventCollector c(xids());
  for (const char* line :
       {"python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
        "memory: usage 65536kB, limit 65536kB, failcnt 98",
        "memory+swap: usage 65536kB, limit 9007199254740988kB, failcnt 0",
        "Tasks state (memory values in pages):",
        "[  pid  ]   uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes "
        "swapents oom_score_adj name",
        "[  27617]     0 27617     2000      512      400      112         0    40000        0"
        "             0 sh",
        "[  27618]     0 27618    80289    13578    12224     1354         0   167936        0"
        "             0 python3",
        "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg="
        "/dltune/doctor-test-27613,task_memcg=/dltune/doctor-test-27613,task=python3,pid=27618,"
        "uid=0",
        "Memory cgroup out of memory: Killed process 27618 (python3) total-vm:321156kB, "
        "anon-rss:48896kB, file-rss:5416kB, shmem-rss:0kB, UID:0 pgtables:164kB "
        "oom_score_adj:0"})
    c.add(1, "kmsg", line);
  const auto events = c.finish();
  ASSERT_EQ(events.size(), 1u);
  const auto& f = events[0].event.fields;
  EXPECT_EQ(f.at("memory"), "usage 65536kB, limit 65536kB, failcnt 98");
  EXPECT_EQ(f.at("largest"), "python3 (pid 27618) 53 MiB; sh (pid 27617) 2 MiB");
  EXPECT_EQ(f.at("cgroup"), "/dltune/doctor-test-27613");
  EXPECT_EQ(events[0].raw.size(), 2u);
  EXPECT_NE(events[0].event.explanation.find("At the time: usage 65536kB"), std::string::npos);
}
