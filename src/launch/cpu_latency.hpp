#pragma once
// A CPU wake-up latency request held while a job runs (the profile's cpu.latency_us): the PM QoS
// interface /dev/cpu_dma_latency keeps a request only while the file is open (Linux
// Documentation/power/pm_qos_interface.rst), so `dltune run` opens it before the job starts and
// closes it when the job has ended. C-states that take longer to wake are then not entered, and
// a DataLoader worker or NCCL's progress thread that sleeps wakes at once.
#include "core/error.hpp"

namespace dltune::launch {

class CpuLatencyHold {
 public:
  // Opens /dev/cpu_dma_latency and writes `microseconds` (an s32, as the interface takes it).
  // Error: no such device (a kernel without PM QoS), not root, a write refused.
  [[nodiscard]] static Result<CpuLatencyHold> hold(int microseconds);
  ~CpuLatencyHold();
  CpuLatencyHold(CpuLatencyHold&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  CpuLatencyHold& operator=(CpuLatencyHold&&) = delete;

 private:
  CpuLatencyHold() = default;
  int fd_ = -1;
};

inline constexpr const char* kCpuDmaLatency = "/dev/cpu_dma_latency";

}  // namespace dltune::launch
