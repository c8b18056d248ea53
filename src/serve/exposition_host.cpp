// The host's families: /proc/stat, meminfo, vmstat, pressure/*, diskstats, net/dev, as the
// Sample holds them (monitor/sample.hpp), in base units. Sources per family: docs/metrics.md.
#include <fmt/format.h>

#include "serve/exposition.hpp"

namespace dltune::serve {

namespace {

using monitor::Sample;
using enum MetricType;

// A small number as a label value, without allocating.
struct NumberLabel {
  explicit NumberLabel(std::uint64_t v) : text_(v) {}
  [[nodiscard]] std::string_view view() const { return {text_.data(), text_.size()}; }
  fmt::format_int text_;
};

double ticks_to_seconds(std::uint64_t ticks, std::uint64_t per_second) {
  return static_cast<double>(ticks) / static_cast<double>(per_second == 0 ? 100 : per_second);
}

void cpus(const Sample& s, MetricSink& sink) {
  sink.family("dltune_cpu_seconds_total", kCounter,
              "Time each online CPU spent in each mode (/proc/stat; guest time is in user and "
              "nice)");
  const auto hz = s.ticks_per_second;
  for (const auto& c : s.system.cpus) {
    if (c.cpu < 0) continue;
    const NumberLabel cpu(static_cast<std::uint64_t>(c.cpu));
    const std::pair<const char*, std::uint64_t> modes[] = {
        {"user", c.user},     {"nice", c.nice}, {"system", c.system},   {"idle", c.idle},
        {"iowait", c.iowait}, {"irq", c.irq},   {"softirq", c.softirq}, {"steal", c.steal}};
    for (const auto& [mode, ticks] : modes)
      sink.sample({{"cpu", cpu.view()}, {"mode", mode}}, ticks_to_seconds(ticks, hz));
  }
  sink.family("dltune_cpus", kGauge, "Online CPUs (the cpuN lines of /proc/stat)");
  sink.sample({}, static_cast<std::uint64_t>(s.system.cpus.size()));
  sink.family("dltune_context_switches_total", kCounter,
              "Context switches on all CPUs (/proc/stat ctxt)");
  sink.sample({}, s.system.context_switches);
  sink.family("dltune_forks_total", kCounter,
              "Processes and threads created (/proc/stat processes)");
  sink.sample({}, s.system.processes_forked);
  sink.family("dltune_procs_running", kGauge, "Runnable threads now (/proc/stat procs_running)");
  sink.sample({}, s.system.procs_running);
  sink.family("dltune_procs_blocked", kGauge,
              "Threads blocked on I/O now (/proc/stat procs_blocked)");
  sink.sample({}, s.system.procs_blocked);
}

void memory(const Sample& s, MetricSink& sink, HostFamilies which) {
  const bool all = which == HostFamilies::kAll;
  const auto& m = s.system.memory;
  const std::tuple<const char*, std::uint64_t, const char*> gauges[] = {
      {"dltune_memory_total_bytes", m.total, "Usable RAM (/proc/meminfo MemTotal)"},
      {"dltune_memory_free_bytes", m.free, "Unused RAM (/proc/meminfo MemFree)"},
      {"dltune_memory_available_bytes", m.available,
       "RAM available for new work without swapping, the kernel's estimate (/proc/meminfo "
       "MemAvailable)"},
      {"dltune_memory_buffers_bytes", m.buffers, "Block device buffers (/proc/meminfo Buffers)"},
      {"dltune_memory_cached_bytes", m.cached, "Page cache (/proc/meminfo Cached)"},
      {"dltune_memory_shmem_bytes", m.shmem,
       "Shared memory and tmpfs, /dev/shm included (/proc/meminfo Shmem)"},
      {"dltune_memory_dirty_bytes", m.dirty,
       "Page cache waiting to be written back (/proc/meminfo Dirty)"},
      {"dltune_memory_writeback_bytes", m.writeback,
       "Page cache being written back now (/proc/meminfo Writeback)"},
      {"dltune_memory_anon_huge_bytes", m.anon_huge,
       "Anonymous memory in transparent huge pages (/proc/meminfo AnonHugePages)"},
      {"dltune_swap_total_bytes", m.swap_total, "Swap space (/proc/meminfo SwapTotal)"},
      {"dltune_swap_free_bytes", m.swap_free, "Unused swap space (/proc/meminfo SwapFree)"},
  };
  if (all) {
    for (const auto& [name, value, help] : gauges) {
      sink.family(name, kGauge, help);
      sink.sample({}, value);
    }
  }
  const auto& v = s.system.vm;
  const auto page = s.page_size;
  // The last field: node_exporter exports it by default (its vmstat collector's default fields,
  // ^(oom_kill|pgpg|pswp|pg.*fault).*), so --no-host-metrics leaves it out.
  const std::tuple<const char*, std::uint64_t, const char*, bool> counters[] = {
      {"dltune_swap_in_bytes_total", v.pswpin * page,
       "Memory read back from swap (/proc/vmstat pswpin, pages times the page size)", true},
      {"dltune_swap_out_bytes_total", v.pswpout * page,
       "Memory written to swap (/proc/vmstat pswpout, pages times the page size)", true},
      {"dltune_page_faults_total", v.pgfault, "Page faults, minor and major (/proc/vmstat pgfault)",
       true},
      {"dltune_major_page_faults_total", v.pgmajfault,
       "Page faults that needed I/O (/proc/vmstat pgmajfault)", true},
      {"dltune_workingset_refault_file_total", v.workingset_refault_file,
       "Page cache read again soon after it was evicted: the cache is too small for the data "
       "(/proc/vmstat workingset_refault_file)",
       false},
      {"dltune_thp_fault_alloc_total", v.thp_fault_alloc,
       "Transparent huge pages allocated at a fault (/proc/vmstat thp_fault_alloc)", false},
      {"dltune_compact_stall_total", v.compact_stall,
       "Allocations that stalled to compact memory (/proc/vmstat compact_stall)", false},
      {"dltune_oom_kills_total", v.oom_kill,
       "Processes killed by the kernel's out-of-memory killer (/proc/vmstat oom_kill)", true},
  };
  for (const auto& [name, value, help, node_exporter_has_it] : counters) {
    if (node_exporter_has_it && !all) continue;
    sink.family(name, kCounter, help);
    sink.sample({}, value);
  }
}

void pressure(const Sample& s, MetricSink& sink) {
  sink.family("dltune_pressure_stall_seconds_total", kCounter,
              "Time in which some (or, kind=full, all non-idle) tasks were stalled on the "
              "resource (/proc/pressure/*, total=)");
  for_each_stall(s.system.pressure, [&](const char* resource, const char* kind, double seconds) {
    sink.sample({{"resource", resource}, {"kind", kind}}, seconds);
  });
}

// A sector in /proc/diskstats is 512 bytes whatever the device's (iostats.rst).
constexpr std::uint64_t kSector = 512;

void disks(const Sample& s, MetricSink& sink) {
  const auto& d = s.system.disks;
  using Get = std::uint64_t (*)(const monitor::Disk&);
  const std::tuple<const char*, const char*, Get> counters[] = {
      {"dltune_disk_read_bytes_total", "Bytes read from the disk (/proc/diskstats sectors read)",
       [](const monitor::Disk& x) { return x.read_sectors * kSector; }},
      {"dltune_disk_written_bytes_total",
       "Bytes written to the disk (/proc/diskstats sectors written)",
       [](const monitor::Disk& x) { return x.write_sectors * kSector; }},
      {"dltune_disk_reads_completed_total", "Reads completed (/proc/diskstats)",
       [](const monitor::Disk& x) { return x.reads; }},
      {"dltune_disk_writes_completed_total", "Writes completed (/proc/diskstats)",
       [](const monitor::Disk& x) { return x.writes; }},
  };
  for (const auto& [name, help, get] : counters) {
    sink.family(name, kCounter, help);
    for (const auto& x : d) sink.sample({{"device", x.name}}, get(x));
  }
  sink.family("dltune_disk_io_time_seconds_total", kCounter,
              "Time the disk had I/O in flight (/proc/diskstats time spent doing I/Os)");
  for (const auto& x : d) sink.sample({{"device", x.name}}, static_cast<double>(x.io_ms) / 1e3);
  sink.family("dltune_disk_io_in_progress", kGauge,
              "I/Os in flight on the disk now (/proc/diskstats)");
  for (const auto& x : d) sink.sample({{"device", x.name}}, x.in_flight);
}

void network(const Sample& s, MetricSink& sink) {
  using Get = std::uint64_t (*)(const monitor::NetDevice&);
  const std::tuple<const char*, const char*, Get> counters[] = {
      {"dltune_network_receive_bytes_total", "Bytes received (/proc/net/dev)",
       [](const monitor::NetDevice& x) { return x.rx_bytes; }},
      {"dltune_network_transmit_bytes_total", "Bytes sent (/proc/net/dev)",
       [](const monitor::NetDevice& x) { return x.tx_bytes; }},
      {"dltune_network_receive_errors_total", "Receive errors (/proc/net/dev)",
       [](const monitor::NetDevice& x) { return x.rx_errors; }},
      {"dltune_network_transmit_errors_total", "Transmit errors (/proc/net/dev)",
       [](const monitor::NetDevice& x) { return x.tx_errors; }},
      {"dltune_network_receive_drop_total", "Received packets dropped (/proc/net/dev)",
       [](const monitor::NetDevice& x) { return x.rx_dropped; }},
      {"dltune_network_transmit_drop_total", "Packets dropped before sending (/proc/net/dev)",
       [](const monitor::NetDevice& x) { return x.tx_dropped; }},
  };
  for (const auto& [name, help, get] : counters) {
    sink.family(name, kCounter, help);
    for (const auto& x : s.system.net) sink.sample({{"device", x.name}}, get(x));
  }
}

}  // namespace

void render_host(const Sample& s, MetricSink& sink, HostFamilies which) {
  const bool all = which == HostFamilies::kAll;
  if (all) cpus(s, sink);
  memory(s, sink, which);
  if (!all) return;
  pressure(s, sink);
  disks(s, sink);
  network(s, sink);
}

}  // namespace dltune::serve
