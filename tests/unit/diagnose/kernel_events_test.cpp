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

namespace kernel_events_test {

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
  // The NVIDIA driver loading, EDAC and the machine-check code starting, a memory controller
  // driver's own lines before its EDAC MCn line, the context lines of a machine check, nouveau's
  // lines after the one that says it took a GPU, the lines after an SXid and an RmInitAdapter
  // failure about the same error, and panics that are no machine check.
  for (const char* line : {
           "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC "
           "2023",
           "NVRM: this kernel module has the version 530.30.02.  Please",
           "NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5",
           "NVRM: RmInitAdapter: Cannot initialize GSP firmware RM",
           "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  "
           "525.125.06",
           "nvidia 0000:3b:00.0: enabling device (0000 -> 0003)",
           "EDAC MC: Ver: 3.0.0",
           "EDAC MC0: Giving out device to module skx_edac controller Skylake socket#0 IMC#0: DEV "
           "0000:3a:0a.0 (INTERRUPT)",
           "EDAC skx MC3: HANDLING MCE MEMORY ERROR",
           "EDAC sbridge MC1: CPU 1: Machine Check Event: 0 Bank 11: 8c00004f000800c2",
           "EDAC MC0: 0 CE memory read error on DIMM_A1 (channel:0 page:0x0 offset:0x0 grain:8)",
           "EDAC MC0: 1 CE memory read error",
           "mce: CPU0: Thermal monitoring enabled (TM1)",
           "mce: CPU supports 7 MCE banks",
           "mce: [Hardware Error]: TSC 0 ADDR fef4c9e0 ",
           "mce: [Hardware Error]: PROCESSOR 0:706a1 TIME 1537152664 SOCKET 0 APIC 0 microcode 28",
           "mce: [Hardware Error]: Run the above through 'mcelog --ascii'",
           "mce: [Hardware Error]: CPU 0: Machine Check",
           "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)",
           "nouveau 0000:02:00.0: DRM: VRAM: 10240 MiB",
           "nouveau 0000:02:00.0: bios: version 94.02.74.00.05",
           "nouveau 0000:02:00.0: enabling device (0000 -> 0003)",
           "nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 10002, Severity 5 Engine instance 00 "
           "Sub-engine instance 00",
           "nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 10002, Data {0x00000000, 0x00000000}",
           "nvidia-nvswitch0: SXid (PCI:0000:c2:00.0): ",
       }) {
    EXPECT_FALSE(classify(line, xids()).has_value()) << line;
  }
}

TEST(KernelEvents, TheNvidiaDriverFailingToLoadOrBind) {
  // The driver's version check (RmPerformVersionCheck), its record on one line.
  auto e = must(
      "NVRM: API mismatch: the client has the version 535.104.05, but this kernel module has the "
      "version 535.86.10.  Please make sure that this kernel module and all NVIDIA driver "
      "components have the same version.");
  EXPECT_EQ(e.kind, "driver_mismatch");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["client_version"], "535.104.05");
  EXPECT_EQ(e.fields["module_version"], "535.86.10");
  EXPECT_NE(e.explanation.find("(version 535.104.05) do not match its loaded kernel module "
                               "(version 535.86.10)"),
            std::string::npos)
      << e.explanation;
  EXPECT_EQ(e.action.rfind("Reboot so that the installed driver's kernel module loads", 0), 0u);
  EXPECT_NE(e.action.find("modprobe -r nvidia_drm nvidia_modeset nvidia_uvm nvidia && modprobe "
                          "nvidia"),
            std::string::npos);
  // The same record from /dev/kmsg, its newlines escaped (Documentation/ABI/testing/dev-kmsg).
  e = must(
      "NVRM: API mismatch: the client has the version 535.104.05, but\\x0aNVRM: this kernel "
      "module has the version 535.86.10.  Please\\x0aNVRM: make sure that this kernel module and "
      "all NVIDIA driver\\x0aNVRM: components have the same version.");
  EXPECT_EQ(e.fields["client_version"], "535.104.05");
  EXPECT_EQ(e.fields["module_version"], "535.86.10");
  // rsyslog's "#012" for the newlines (stackhpc/ansible-slurm-appliance#287).
  e = must(
      "NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this kernel module "
      "has the version 530.30.02.  Please#012NVRM: make sure that this kernel module and all "
      "NVIDIA driver#012NVRM: components have the same version.");
  EXPECT_EQ(e.fields["client_version"], "535.54.03");
  EXPECT_EQ(e.fields["module_version"], "530.30.02");
  // Newer drivers name the client (Frogging-Family/nvidia-all#394), as the journal keeps it.
  e = must(
      "NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)\nNVRM: has the version 595.84, "
      "but this kernel module has\nNVRM: the version 595.80.  Please make sure that this\nNVRM: "
      "kernel module and all NVIDIA driver components\nNVRM: have the same version.");
  EXPECT_EQ(e.fields["task"], "kwin_wayland");
  EXPECT_EQ(e.fields["pid"], "1005");
  EXPECT_EQ(e.fields["client_version"], "595.84");
  EXPECT_EQ(e.fields["module_version"], "595.80");
  EXPECT_NE(e.explanation.find("used by kwin_wayland (pid 1005)"), std::string::npos);
  // An older kernel's first record alone (one record a line): the module's version unknown.
  e = must("NVRM: API mismatch: the client has the version 169.12, but");
  EXPECT_EQ(e.fields["client_version"], "169.12");
  EXPECT_EQ(e.fields.count("module_version"), 0u);
  EXPECT_NE(e.explanation.find("kernel module (version unknown)"), std::string::npos);

  // drivers/base/dd.c's older form and the driver's count after it (an H100 fallen off the bus,
  // DaoCloud's KubeCon HK 2024 talk).
  e = must("nvidia: probe of 0000:5d:00.0 failed with error -1");
  EXPECT_EQ(e.kind, "gpu_probe_failed");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["pci"], "0000:5d:00.0");
  EXPECT_EQ(e.fields["error"], "-1");
  EXPECT_NE(e.explanation.find("the GPU at PCI 0000:5d:00.0 (probe error -1): the GPU is not "
                               "usable"),
            std::string::npos);
  EXPECT_NE(e.action.find("NVRM lines just before it"), std::string::npos);
  e = must("NVRM: The NVIDIA probe routine failed for 1 device(s).");
  EXPECT_EQ(e.kind, "gpu_probe_failed");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["count"], "1");
  // The newer form, after the device (pop-os/cosmic-epoch#2146).
  e = must("nvidia 0000:01:00.0: probe with driver nvidia failed with error -1");
  EXPECT_EQ(e.kind, "gpu_probe_failed");
  EXPECT_EQ(e.fields["pci"], "0000:01:00.0");
  // Another driver holds the GPUs (mattshma/bigdata#133).
  e = must("NVRM: The NVIDIA probe routine was not called for 3 device(s).");
  EXPECT_EQ(e.kind, "gpu_probe_failed");
  EXPECT_EQ(e.fields["count"], "3");
  EXPECT_NE(e.explanation.find("another driver"), std::string::npos);
  EXPECT_NE(e.action.find("/etc/modprobe.d/blacklist-nouveau.conf"), std::string::npos);

  // RmInitAdapter (NVIDIA/gpu-operator#1146; an H100's, from its format; the older form without the
  // GPU: Bumblebee-Project/Bumblebee#722).
  e = must("NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)");
  EXPECT_EQ(e.kind, "gpu_init_failed");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["pci"], "0000:0a:00.0");
  EXPECT_EQ(e.fields["code"], "0x24:0x72:1568");
  e = must("NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1601)");
  EXPECT_EQ(e.fields["pci"], "0000:3b:00.0");
  EXPECT_EQ(e.fields["code"], "0x26:0xffff:1601");
  EXPECT_NE(e.explanation.find("failed to initialise the GPU at PCI 0000:3b:00.0"),
            std::string::npos);
  EXPECT_NE(e.explanation.find("power, its seating or its firmware"), std::string::npos);
  EXPECT_EQ(e.action.rfind("Cold-reboot the node", 0), 0u);
  EXPECT_NE(e.action.find("reseat the GPU"), std::string::npos);
  EXPECT_NE(e.action.find("serviced if it recurs"), std::string::npos);
  e = must("NVRM: RmInitAdapter failed! (0x26:0xffff:1375)");
  EXPECT_EQ(e.kind, "gpu_init_failed");
  EXPECT_EQ(e.fields.count("pci"), 0u);
  EXPECT_EQ(e.fields["code"], "0x26:0xffff:1375");

  // nouveau took an NVIDIA GPU (dartraiden/NVIDIA-patcher#73; a GH100): check's
  // gpu.nouveau fix, word for word.
  e = must("nouveau 0000:02:00.0: NVIDIA GA102 (b72000a1)");
  EXPECT_EQ(e.kind, "nouveau_bound");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_EQ(e.fields["pci"], "0000:02:00.0");
  EXPECT_EQ(e.fields["chip"], "GA102");
  EXPECT_NE(e.explanation.find("nouveau driver took the NVIDIA GPU at PCI 0000:02:00.0 (GA102)"),
            std::string::npos);
  EXPECT_NE(e.action.find("printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > "
                          "/etc/modprobe.d/blacklist-nouveau.conf && update-initramfs -u && "
                          "reboot"),
            std::string::npos)
      << e.action;
  e = must("nouveau 0000:3b:00.0: NVIDIA GH100 (180000a1)");
  EXPECT_EQ(e.fields["chip"], "GH100");
  // A line of the nvidia driver's device that is none of these is read as before.
  e = must(
      "nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
      "(Receiver ID)");
  EXPECT_EQ(e.kind, "aer");
}

TEST(KernelEvents, MemoryErrorsOfTheHost) {
  // A corrected error, after the sbridge driver's own lines (radiasoft/devops#134).
  auto e = must(
      "EDAC MC1: 1 CE memory scrubbing error on CPU_SrcID#1_Ha#0_Chan#0_DIMM#0 (channel:0 slot:0 "
      "page:0xee30a0 offset:0x0 grain:32 syndrome:0x0 -  area:DRAM err_code:0008:00c2 socket:1 "
      "ha:0 channel_mask:1 rank:0)");
  EXPECT_EQ(e.kind, "memory_error");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_EQ(e.fields["mc"], "1");
  EXPECT_EQ(e.fields["count"], "1");
  EXPECT_EQ(e.fields["dimm"], "CPU_SrcID#1_Ha#0_Chan#0_DIMM#0");
  EXPECT_EQ(e.fields["type"], "CE");
  EXPECT_EQ(e.fields["error"], "memory scrubbing error");
  EXPECT_EQ(e.fields["location"], "channel:0 slot:0");
  EXPECT_NE(e.explanation.find("Memory controller 1 reported 1 corrected memory error on "
                               "CPU_SrcID#1_Ha#0_Chan#0_DIMM#0 (channel:0 slot:0)"),
            std::string::npos)
      << e.explanation;
  EXPECT_NE(e.action.find("/sys/devices/system/edac/mc/mc1/"), std::string::npos);
  EXPECT_NE(e.action.find("replace the DIMM if it keeps growing"), std::string::npos);
  // edac_mc.c edac_ce_error's form on a Haswell-EP label.
  e = must(
      "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 "
      "page:0x1234 offset:0x0 grain:32 syndrome:0x0 - area:DRAM err_code:0001:0090 socket:0 ha:0 "
      "channel_mask:2 rank:0)");
  EXPECT_EQ(e.fields["mc"], "0");
  EXPECT_EQ(e.fields["dimm"], "CPU_SrcID#0_Ha#0_Chan#1_DIMM#0");
  EXPECT_EQ(e.fields["location"], "channel:1 slot:0");
  EXPECT_NE(e.action.find("/sys/devices/system/edac/mc/mc0/"), std::string::npos);
  // Uncorrected, after the skx driver's own lines (Tony Luck's LKML mail of 2021-08-12).
  e = must(
      "EDAC MC3: 1 UE memory read error on CPU_SrcID#0_MC#3_Chan#0_DIMM#0 (channel:0 slot:0 "
      "page:0x7e025e offset:0x400 grain:32 -  err_code:0x00a0:0x0090  SystemAddress:0x7e025e400 "
      "ProcessorSocketId:0x0 MemoryControllerId:0x3 ChannelAddress:0xec04bc00 ChannelId:0x0 "
      "RankAddress:0x76025c00 PhysicalRankId:0x1 DimmSlotId:0x0 Row:0x3b01 Column:0x380 Bank:0x0 "
      "BankGroup:0x2 ChipSelect:0x1 ChipId:0x0)");
  EXPECT_EQ(e.kind, "memory_error");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["type"], "UE");
  EXPECT_EQ(e.fields["mc"], "3");
  EXPECT_EQ(e.fields["dimm"], "CPU_SrcID#0_MC#3_Chan#0_DIMM#0");
  EXPECT_NE(e.explanation.find("1 uncorrected memory error on CPU_SrcID#0_MC#3_Chan#0_DIMM#0"),
            std::string::npos);
  EXPECT_EQ(e.action.rfind("Drain the node and replace the DIMM (CPU_SrcID#0_MC#3_Chan#0_DIMM#0 "
                           "on memory controller 3)",
                           0),
            0u)
      << e.action;
  // Several at once and no error named (edac_mc.c with an empty msg).
  e = must(
      "EDAC MC0: 2 CE on DIMM_A1 (csrow:0 channel:0 page:0x0 offset:0x0 grain:8 syndrome:0x0)");
  EXPECT_EQ(e.fields["count"], "2");
  EXPECT_EQ(e.fields["dimm"], "DIMM_A1");
  EXPECT_EQ(e.fields.count("error"), 0u);
  EXPECT_NE(e.explanation.find("2 corrected memory errors on DIMM_A1 (csrow:0 channel:0)"),
            std::string::npos);
  // Before Linux 3.5 (tikiold.cldn.cz's MemoryECCError page).
  e = must(
      "EDAC MC1: CE row 1, channel 0, label \"CPU_SrcID#1_Channel#0_DIMM#1\": 1 Unknown "
      "error(s): memory scrubbing on FATAL area : cpu=6 Err=0008:00c1 (ch=1), addr = 0x1fb6d78000 "
      "=> socket=1, Channel=0(mask=1), rank=5");
  EXPECT_EQ(e.kind, "memory_error");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_EQ(e.fields["mc"], "1");
  EXPECT_EQ(e.fields["dimm"], "CPU_SrcID#1_Channel#0_DIMM#1");
  EXPECT_EQ(e.fields["count"], "1");
}

TEST(KernelEvents, MachineChecks) {
  // arch/x86/kernel/cpu/mce/core.c mce_notify_irq (andikleen/mcelog#116).
  auto e = must("mce: [Hardware Error]: Machine check events logged");
  EXPECT_EQ(e.kind, "machine_check");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_NE(e.action.find("ras-mc-ctl --errors"), std::string::npos);
  EXPECT_NE(e.action.find("mcelog"), std::string::npos);
  EXPECT_NE(e.action.find("serviced if machine checks repeat"), std::string::npos);
  // __print_mce, a corrected error: bit 61 of the status clear
  // (home-assistant/operating-system#2989; then from the format).
  e = must("mce: [Hardware Error]: CPU 2: Machine Check: 0 Bank 6: cc59dec000041152");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_EQ(e.fields["cpu"], "2");
  EXPECT_EQ(e.fields["bank"], "6");
  EXPECT_EQ(e.fields["status"], "cc59dec000041152");
  EXPECT_NE(e.explanation.find("CPU 2 reported a corrected hardware error (machine check, bank "
                               "6, status cc59dec000041152)"),
            std::string::npos)
      << e.explanation;
  e = must("mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: cc00008000010091");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_EQ(e.fields["cpu"], "3");
  EXPECT_EQ(e.fields["bank"], "7");
  // Bit 61 (UC) set: not corrected (andikleen/mcelog#70).
  e = must("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 4: a600000000020408");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_NE(e.explanation.find("an uncorrected hardware error"), std::string::npos);
  EXPECT_EQ(e.action.rfind("Drain the node", 0), 0u);
  // mce_panic's reason, then the panic; older kernels said "Fatal Machine check".
  e = must("mce: [Hardware Error]: Machine check: Processor context corrupt");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_NE(e.explanation.find("Processor context corrupt"), std::string::npos);
  for (const char* line : {"Kernel panic - not syncing: Fatal machine check",
                           "Kernel panic - not syncing: Fatal Machine check"}) {
    e = must(line);
    EXPECT_EQ(e.kind, "machine_check") << line;
    EXPECT_EQ(e.severity, Severity::kCritical) << line;
    EXPECT_NE(e.explanation.find("the node went down"), std::string::npos) << line;
    EXPECT_NE(e.action.find("ipmitool sel list"), std::string::npos) << line;
  }
  // kill_me_maybe: a process read poisoned memory (Tony Luck's LKML mail of 2021-08-12).
  e = must("mce: Uncorrected hardware memory error in user-access at 7e025e400");
  EXPECT_EQ(e.kind, "machine_check");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["address"], "7e025e400");
}

TEST(KernelEvents, NvSwitchSxidsBesideTheGpusNvLinkXid) {
  // NVSWITCH_PRINT_SXID (the MENTHOS data set's lines, and from the format).
  auto e = must("nvidia-nvswitch0: SXid (PCI:0000:c2:00.0): 20034, Fatal, Link 28 LTSSM Fault Up");
  EXPECT_EQ(e.kind, "sxid");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["switch"], "nvswitch0");
  EXPECT_EQ(e.fields["pci"], "0000:c2:00.0");
  EXPECT_EQ(e.fields["sxid"], "20034");
  EXPECT_EQ(e.fields["link"], "28");
  EXPECT_EQ(e.fields["severity"], "Fatal");
  EXPECT_EQ(e.fields["detail"], "LTSSM Fault Up");
  EXPECT_NE(e.explanation.find("NVSwitch nvswitch0 (PCI 0000:c2:00.0) reported a fatal error "
                               "SXid 20034 on link 28 (LTSSM Fault Up)"),
            std::string::npos)
      << e.explanation;
  EXPECT_NE(e.action.find("systemctl restart nvidia-fabricmanager"), std::string::npos);
  EXPECT_NE(e.action.find("nvidia-smi -r"), std::string::npos);
  EXPECT_NE(e.action.find("reboot the node"), std::string::npos);
  e = must("nvidia-nvswitch3: SXid (PCI:0000:08:00.0): 20034, Fatal, Link 30 LTSSM Fault Up");
  EXPECT_EQ(e.fields["switch"], "nvswitch3");
  EXPECT_EQ(e.fields["pci"], "0000:08:00.0");
  EXPECT_EQ(e.fields["link"], "30");
  e = must(
      "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted "
      "PRIV error");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_EQ(e.fields["sxid"], "12028");
  EXPECT_EQ(e.fields["link"], "32");
  EXPECT_EQ(e.fields["detail"], "egress non-posted PRIV error");
  EXPECT_EQ(e.action.rfind("Watch how often it comes", 0), 0u);
  EXPECT_NE(e.action.find("serviced"), std::string::npos);
  // " (First)": the first of its kind latched, no part of the error's name.
  e = must(
      "nvidia-nvswitch4: SXid (PCI:0000:c6:00.0): 19084, Non-fatal, Link 29 AN1 Heartbeat "
      "Timeout Error (First)");
  EXPECT_EQ(e.fields["detail"], "AN1 Heartbeat Timeout Error");
  // intr_nvswitch.h's other forms: a corrected error (info), and one of no link.
  e = must(
      "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20001, Correctable, Link 04 TX Replay Error");
  EXPECT_EQ(e.severity, Severity::kInfo);
  EXPECT_EQ(e.fields["link"], "4");
  e = must(
      "nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 10007, Fatal, PRI timeout error, instance=0, "
      "chiplet=1");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields.count("link"), 0u);
  EXPECT_EQ(e.fields["detail"], "PRI timeout error, instance=0, chiplet=1");
  // The GPU's own NVLink error is still an Xid 74 with its meaning from knowledge/xid.toml.
  e = must(
      "NVRM: Xid (PCI:0000:3b:00): 74, pid=4242, name=python3, NVLink: fatal error detected on "
      "link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)");
  EXPECT_EQ(e.kind, "xid");
  EXPECT_EQ(e.fields["xid"], "74");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_NE(e.explanation.find("Xid 74 (NVLink Error)"), std::string::npos);
}

TEST(KernelEvents, DriverEventsNameTheirGpuAndAnNvSwitchIsNone) {
  std::vector<LoggedEvent> events;
  for (const char* line :
       {"NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1601)",
        "nouveau 0000:5d:00.0: NVIDIA GH100 (180000a1)",
        "nvidia: probe of 0000:9a:00.0 failed with error -1",
        "nvidia-nvswitch0: SXid (PCI:0000:c2:00.0): 20034, Fatal, Link 28 LTSSM Fault Up",
        "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 "
        "page:0x1234 offset:0x0 grain:32 syndrome:0x0)"})
    events.push_back(LoggedEvent{must(line), 0, "kmsg", {line}});
  EXPECT_TRUE(names_pci(events));
  const std::vector<GpuName> gpus = {
      {"0000:3b:00.0", 2u, std::string("GPU-aaaa"), std::nullopt, std::nullopt},
      {"0000:5d:00.0", 3u, std::nullopt, std::nullopt, std::nullopt},
      {"0000:9a:00.0", 5u, std::nullopt, std::nullopt, std::nullopt},
  };
  EXPECT_TRUE(name_gpus(events, gpus));
  EXPECT_EQ(events[0].event.fields["gpu"], "2");
  EXPECT_NE(events[0].event.explanation.find("This is GPU 2 (0000:3b:00.0), GPU-aaaa."),
            std::string::npos);
  EXPECT_EQ(events[1].event.fields["gpu"], "3");
  EXPECT_EQ(events[2].event.fields["gpu"], "5");
  EXPECT_EQ(events[3].event.fields.count("gpu"), 0u);  // the switch is no GPU
  EXPECT_EQ(events[4].event.fields.count("gpu"), 0u);
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

// amdgpu's failures, in the forms the driver prints them (drivers/gpu/drm/amd/amdgpu): a ring
// timeout (DRM_ERROR's form and dev_err's), a soft-recovered one, a reset begun, done or failed,
// RAS errors per block (the count where the forms put it).
TEST(KernelEvents, AmdgpuRingTimeoutsResetsAndRasErrors) {
  auto e = must(
      "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=2267, "
      "emitted seq=2269");
  EXPECT_EQ(e.kind, "amdgpu_ring_timeout");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["ring"], "gfx_0.0.0");
  EXPECT_FALSE(e.fields.count("pci"));
  e = must("amdgpu 0000:c1:00.0: amdgpu: ring sdma0 timeout, signaled seq=10, emitted seq=12");
  EXPECT_EQ(e.kind, "amdgpu_ring_timeout");
  EXPECT_EQ(e.fields["pci"], "0000:c1:00.0");
  EXPECT_EQ(e.fields["ring"], "sdma0");
  EXPECT_NE(e.explanation.find("the AMD GPU at PCI 0000:c1:00.0"), std::string::npos);
  e = must("amdgpu 0000:c1:00.0: amdgpu: ring comp_1.0.0 timeout, but soft recovered");
  EXPECT_EQ(e.severity, Severity::kWarning);
  EXPECT_EQ(e.fields["recovered"], "true");
  e = must("amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!");
  EXPECT_EQ(e.kind, "amdgpu_reset");
  EXPECT_EQ(e.severity, Severity::kWarning);
  e = must("amdgpu 0000:c1:00.0: amdgpu: GPU reset(2) succeeded!");
  EXPECT_EQ(e.kind, "amdgpu_reset");
  EXPECT_EQ(e.severity, Severity::kInfo);
  e = must("amdgpu 0000:c1:00.0: amdgpu: GPU reset(3) failed");
  EXPECT_EQ(e.kind, "amdgpu_reset_failed");
  EXPECT_EQ(e.severity, Severity::kCritical);
  e = must("amdgpu 0000:c1:00.0: amdgpu: 1 uncorrectable hardware errors detected in umc block");
  EXPECT_EQ(e.kind, "amdgpu_ras_uncorrectable");
  EXPECT_EQ(e.severity, Severity::kCritical);
  EXPECT_EQ(e.fields["block"], "umc");
  EXPECT_EQ(e.fields["count"], "1");
  e = must(
      "amdgpu 0000:c1:00.0: amdgpu: socket: 0, die: 1, 2 new uncorrectable hardware errors "
      "detected in umc block");
  EXPECT_EQ(e.fields["count"], "2");
  e = must(
      "amdgpu 0000:c1:00.0: amdgpu: 5 uncorrectable hardware errors detected in total in gfx "
      "block");
  EXPECT_EQ(e.fields["block"], "gfx");
  EXPECT_EQ(e.fields["count"], "5");
  e = must("amdgpu 0000:c1:00.0: amdgpu: 17 correctable hardware errors detected in umc block");
  EXPECT_EQ(e.kind, "amdgpu_ras_correctable");
  EXPECT_EQ(e.severity, Severity::kInfo);
  // The driver's ordinary lines are no events; its device's AER lines are still AER.
  for (const char* line :
       {"amdgpu 0000:c1:00.0: amdgpu: ring gfx_0.0.0 uses VM inv eng 0 on hub 0",
        "amdgpu 0000:c1:00.0: amdgpu: SMU is initialized successfully!",
        "[drm:amdgpu_device_init [amdgpu]] *ERROR* sw_init of IP block <gfx_v9_4_3> failed -22",
        "amdgpu: 0 uncorrectable"})
    EXPECT_FALSE(classify(line, xids())) << line;
  e = must(
      "amdgpu 0000:c1:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
      "(Receiver ID)");
  EXPECT_EQ(e.kind, "aer");
}

}  // namespace kernel_events_test
