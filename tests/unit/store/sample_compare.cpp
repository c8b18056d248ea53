// expect_same_sample: every field of two Samples compared, with the field named on failure.
#include <string>
#include <vector>

#include "unit/store/sample_fields.hpp"

namespace dltune::testing {

using namespace monitor;

#define SAME(field) EXPECT_EQ(a.field, b.field) << where << #field

namespace {

void same_cpu(const CpuTimes& a, const CpuTimes& b, const std::string& where) {
  SAME(cpu);
  SAME(user);
  SAME(nice);
  SAME(system);
  SAME(idle);
  SAME(iowait);
  SAME(irq);
  SAME(softirq);
  SAME(steal);
}

void same_line(const PressureLine& a, const PressureLine& b, const std::string& where) {
  SAME(avg10);
  SAME(avg60);
  SAME(avg300);
  SAME(total_us);
}

void same_pressures(const Pressures& a, const Pressures& b, const std::string& where) {
  const std::optional<Pressure>* pa[] = {&a.cpu, &a.memory, &a.io};
  const std::optional<Pressure>* pb[] = {&b.cpu, &b.memory, &b.io};
  for (int i = 0; i < 3; ++i) {
    const std::string w = where + "pressure " + std::to_string(i) + " ";
    ASSERT_EQ(pa[i]->has_value(), pb[i]->has_value()) << w;
    if (!pa[i]->has_value()) continue;
    same_line((*pa[i])->some, (*pb[i])->some, w + "some.");
    ASSERT_EQ((*pa[i])->full.has_value(), (*pb[i])->full.has_value()) << w;
    if ((*pa[i])->full) same_line(*(*pa[i])->full, *(*pb[i])->full, w + "full.");
  }
}

void same_cgroup(const Cgroup& a, const Cgroup& b, const std::string& where) {
  SAME(path);
  SAME(version);
  SAME(cpu_usage_us);
  SAME(cpu_user_us);
  SAME(cpu_system_us);
  SAME(nr_periods);
  SAME(nr_throttled);
  SAME(throttled_us);
  SAME(cpu_quota_cpus);
  SAME(cpuset_cpus);
  SAME(memory_bytes);
  SAME(memory_limit_bytes);
  SAME(memory_peak_bytes);
  SAME(swap_bytes);
  SAME(anon_bytes);
  SAME(file_bytes);
  SAME(failcnt);
  SAME(events_high);
  SAME(events_oom);
  SAME(events_oom_kill);
  SAME(workingset_refault_file);
  SAME(workingset_refault_anon);
  SAME(pgmajfault);
  SAME(pids);
  same_pressures(a.pressure, b.pressure, where + "cgroup ");
}

void same_process(const Process& a, const Process& b, const std::string& where) {
  SAME(pid);
  SAME(ppid);
  SAME(comm);
  SAME(cmdline);
  SAME(role);
  SAME(rank);
  SAME(state);
  SAME(start_ticks);
  SAME(utime);
  SAME(stime);
  SAME(minflt);
  SAME(majflt);
  SAME(threads);
  SAME(rss_bytes);
  SAME(processor);
  SAME(run_ns);
  SAME(wait_ns);
  SAME(timeslices);
  SAME(voluntary_switches);
  SAME(involuntary_switches);
  SAME(read_bytes);
  SAME(write_bytes);
  SAME(rchar);
  SAME(wchar);
}

void same_gpu(const Gpu& a, const Gpu& b, const std::string& where) {
  SAME(index);
  SAME(uuid);
  SAME(name);
  SAME(pci_bus_id);
  SAME(utilization_gpu_pct);
  SAME(utilization_memory_pct);
  SAME(memory_used_bytes);
  SAME(memory_total_bytes);
  SAME(power_watts);
  SAME(temperature_celsius);
  SAME(sm_clock_mhz);
  SAME(memory_clock_mhz);
  SAME(clock_event_reasons);
  SAME(pcie_tx_kib_s);
  SAME(pcie_rx_kib_s);
  SAME(energy_mj);
  SAME(sampled_at_ns);
  SAME(pcie_replay_count);
  SAME(xid_errors);
  SAME(last_xid);
  SAME(ecc_corrected);
  SAME(ecc_uncorrected);
  SAME(vendor);
  SAME(nvlink_tx_kib);
  SAME(nvlink_rx_kib);
  SAME(memory_free_bytes);
  SAME(minor_number);
  SAME(sm_active_ratio);
  SAME(sm_occupancy_ratio);
  SAME(tensor_active_ratio);
  SAME(dram_active_ratio);
  ASSERT_EQ(a.processes.size(), b.processes.size()) << where;
  for (std::size_t i = 0; i < a.processes.size(); ++i) {
    EXPECT_EQ(a.processes[i].pid, b.processes[i].pid) << where << i;
    EXPECT_EQ(a.processes[i].used_memory_bytes, b.processes[i].used_memory_bytes) << where << i;
    EXPECT_EQ(a.processes[i].sm_util_pct, b.processes[i].sm_util_pct) << where << i;
  }
}

}  // namespace

void expect_same_sample(const Sample& a, const Sample& b) {
  std::string where = "sample.";
  SAME(wall_ns);
  SAME(monotonic_ns);
  SAME(ticks_per_second);
  SAME(page_size);
  where = "system.";
  SAME(system.context_switches);
  SAME(system.processes_forked);
  SAME(system.procs_running);
  SAME(system.procs_blocked);
  SAME(system.memory.total);
  SAME(system.memory.free);
  SAME(system.memory.available);
  SAME(system.memory.buffers);
  SAME(system.memory.cached);
  SAME(system.memory.shmem);
  SAME(system.memory.swap_total);
  SAME(system.memory.swap_free);
  SAME(system.memory.dirty);
  SAME(system.memory.writeback);
  SAME(system.memory.anon_huge);
  SAME(system.memory.swap_cached);
  SAME(system.vm.pswpin);
  SAME(system.vm.pswpout);
  SAME(system.vm.pgfault);
  SAME(system.vm.pgmajfault);
  SAME(system.vm.pgscan);
  SAME(system.vm.pgsteal);
  SAME(system.vm.workingset_refault_file);
  SAME(system.vm.workingset_refault_anon);
  SAME(system.vm.thp_fault_alloc);
  SAME(system.vm.thp_fault_fallback);
  SAME(system.vm.thp_collapse_alloc);
  SAME(system.vm.compact_stall);
  SAME(system.vm.oom_kill);
  same_cpu(a.system.total, b.system.total, "total cpu ");
  same_pressures(a.system.pressure, b.system.pressure, "system ");
  ASSERT_EQ(a.system.cpus.size(), b.system.cpus.size());
  for (std::size_t i = 0; i < a.system.cpus.size(); ++i)
    same_cpu(a.system.cpus[i], b.system.cpus[i], "cpu " + std::to_string(i) + " ");
  ASSERT_EQ(a.system.disks.size(), b.system.disks.size());
  for (std::size_t i = 0; i < a.system.disks.size(); ++i) {
    const Disk &da = a.system.disks[i], &db = b.system.disks[i];
    EXPECT_EQ(da.name, db.name);
    EXPECT_EQ(std::vector({da.reads, da.read_sectors, da.read_ms, da.writes, da.write_sectors,
                           da.write_ms, da.in_flight, da.io_ms, da.weighted_io_ms}),
              std::vector({db.reads, db.read_sectors, db.read_ms, db.writes, db.write_sectors,
                           db.write_ms, db.in_flight, db.io_ms, db.weighted_io_ms}))
        << da.name;
  }
  ASSERT_EQ(a.system.net.size(), b.system.net.size());
  for (std::size_t i = 0; i < a.system.net.size(); ++i) {
    const NetDevice &na = a.system.net[i], &nb = b.system.net[i];
    EXPECT_EQ(na.name, nb.name);
    EXPECT_EQ(std::vector({na.rx_bytes, na.rx_packets, na.rx_errors, na.rx_dropped, na.tx_bytes,
                           na.tx_packets, na.tx_errors, na.tx_dropped}),
              std::vector({nb.rx_bytes, nb.rx_packets, nb.rx_errors, nb.rx_dropped, nb.tx_bytes,
                           nb.tx_packets, nb.tx_errors, nb.tx_dropped}))
        << na.name;
  }
  EXPECT_EQ(a.observer_cpu_us, b.observer_cpu_us) << where << "observer_cpu_us";
  ASSERT_EQ(a.cgroup.has_value(), b.cgroup.has_value());
  if (a.cgroup) same_cgroup(*a.cgroup, *b.cgroup, "cgroup.");
  ASSERT_EQ(a.processes.size(), b.processes.size());
  for (std::size_t i = 0; i < a.processes.size(); ++i)
    same_process(a.processes[i], b.processes[i], "process " + std::to_string(i) + " ");
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (std::size_t i = 0; i < a.gpus.size(); ++i)
    same_gpu(a.gpus[i], b.gpus[i], "gpu " + std::to_string(i) + " ");
}

}  // namespace dltune::testing
