#include "launch/cpu_latency.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace dltune::launch {

Result<CpuLatencyHold> CpuLatencyHold::hold(int microseconds) {
  CpuLatencyHold h;
  // Close-on-exec: the request is dltune's, released when the job ends, not the job's to keep.
  h.fd_ = ::open(kCpuDmaLatency, O_WRONLY | O_CLOEXEC);
  if (h.fd_ < 0) return fail("cannot open", kCpuDmaLatency, errno);
  const std::int32_t value = microseconds;
  if (::write(h.fd_, &value, sizeof value) != static_cast<ssize_t>(sizeof value))
    return fail("cannot write the latency request to", kCpuDmaLatency, errno);
  return h;
}

CpuLatencyHold::~CpuLatencyHold() {
  if (fd_ >= 0) ::close(fd_);  // the request goes with the last descriptor
}

}  // namespace dltune::launch
