// serve --no-host-metrics: the host families node_exporter exports are left out, the three
// /proc/vmstat counters its default collectors do not export stay, and nothing else changes.
#include <set>

#include <gtest/gtest.h>

#include "serve/exposition.hpp"
#include "unit/serve/exposition_parser.hpp"
#include "unit/serve/snapshot_fixture.hpp"

namespace dltune::serve::host_families_test {
namespace {

std::set<std::string> families(const Snapshot& s) {
  std::string out;
  TextSink sink(out);
  render(s, sink);
  const auto e = testing::parse_exposition(out);
  EXPECT_TRUE(e.errors.empty());
  return {e.families.begin(), e.families.end()};
}

TEST(HostFamilies, WithoutNodeExportersOnlyThoseItLacks) {
  const auto f = testing::full_fixture();
  auto all_snapshot = f.snapshot();
  const auto all = families(all_snapshot);
  auto fewer_snapshot = f.snapshot();
  fewer_snapshot.host = HostFamilies::kBeyondNodeExporter;
  const auto fewer = families(fewer_snapshot);

  // What node_exporter has (cpu, meminfo, vmstat's default fields, pressure, diskstats,
  // netdev): gone.
  for (const char* gone :
       {"dltune_cpu_seconds_total", "dltune_cpus", "dltune_context_switches_total",
        "dltune_procs_running", "dltune_memory_total_bytes", "dltune_memory_available_bytes",
        "dltune_swap_free_bytes", "dltune_swap_in_bytes_total", "dltune_page_faults_total",
        "dltune_major_page_faults_total", "dltune_oom_kills_total",
        "dltune_pressure_stall_seconds_total", "dltune_disk_read_bytes_total",
        "dltune_disk_io_time_seconds_total", "dltune_network_receive_bytes_total"}) {
    EXPECT_TRUE(all.count(gone)) << gone;
    EXPECT_FALSE(fewer.count(gone)) << gone;
  }
  // What it lacks, and everything that is not the host's: still there.
  for (const char* kept :
       {"dltune_workingset_refault_file_total", "dltune_thp_fault_alloc_total",
        "dltune_compact_stall_total", "dltune_build_info", "dltune_sample_timestamp_seconds"})
    EXPECT_TRUE(fewer.count(kept)) << kept;
  for (const auto& name : all) {
    const bool host = name.rfind("dltune_cpu", 0) == 0 || name.rfind("dltune_memory_", 0) == 0 ||
                      name.rfind("dltune_swap_", 0) == 0 || name.rfind("dltune_disk_", 0) == 0 ||
                      name.rfind("dltune_network_", 0) == 0 ||
                      name == "dltune_pressure_stall_seconds_total";
    if (!host && name.find("page_faults") == std::string::npos &&
        name != "dltune_context_switches_total" && name != "dltune_forks_total" &&
        name != "dltune_procs_running" && name != "dltune_procs_blocked" &&
        name != "dltune_oom_kills_total")
      EXPECT_TRUE(fewer.count(name)) << name << " is not a host family node_exporter has";
  }
  EXPECT_LT(fewer.size(), all.size());
}

}  // namespace
}  // namespace dltune::serve::host_families_test
