#pragma once
// Samples for the recording tests: one with every field set to a distinct value (so that a
// column left out of the schema, or two columns swapped, changes what is read back), one with
// every optional empty, a realistic one for the size benchmark, and a field-by-field comparison.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "monitor/sample.hpp"

namespace dltune::testing {

// A new field in these structs must be added to fill_all(), expect_same_sample() and the
// recording's schema; these sizes (x86-64, libstdc++) are the reminder.
// Process::stat_ns is not recorded: a recording reads every process at every sample, so it is 0
// when read back and the model takes the samples' own interval. Neither are
// System::activity_ns and activity_carried: a recording reads the activity counters at every
// sample (only top carries them), so they read back as 0 and false, which means the same.
// Gpu::lost and Sample::gpu_slots (whether each GPU on PCI answered) are not recorded either:
// serve exports them; a recording keeps the readings NVML gave. Nor is Gpu::xid_codes (serve's
// Xid counts by code, since it started).
static_assert(sizeof(monitor::Process) == 304, "a Process field was added: see above");
static_assert(sizeof(monitor::Cgroup) == 648, "a Cgroup field was added: see above");
static_assert(sizeof(monitor::Gpu) == 568, "a Gpu field was added: see above");
static_assert(sizeof(monitor::System) == 640, "a System field was added: see above");
static_assert(sizeof(monitor::Sample) == 1416, "a Sample field was added: see above");
static_assert(sizeof(monitor::Disk) == 104, "a Disk field was added: see above");
static_assert(sizeof(monitor::NetDevice) == 96, "a NetDevice field was added: see above");
static_assert(sizeof(monitor::GpuProcess) == 32, "a GpuProcess field was added: see above");
static_assert(sizeof(monitor::Pressures) == 240, "a Pressures field was added: see above");

// Every field set, from `n` upwards, each value different from every other.
monitor::Sample fill_all(std::uint64_t n);
// Every optional empty and every vector empty; the scalars still distinct.
monitor::Sample fill_empty(std::uint64_t n);
// A 1 Hz sample of a 20-process training job on 2 CPUs, 2 disks and 2 NICs, at second `t`.
monitor::Sample realistic(int t);

void expect_same_sample(const monitor::Sample& a, const monitor::Sample& b);

}  // namespace dltune::testing
