#pragma once
// Ends the process with `exit_status` when the work it guards takes longer than `limit`, after
// writing `message` to stderr: a health check that hangs (a stuck NVML call, a file system that
// does not answer) says so and changes nothing instead of holding its caller's slot. The work is
// done when the watchdog is destroyed.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace dltune {

class Watchdog {
 public:
  Watchdog(std::chrono::nanoseconds limit, std::string message, int exit_status);
  // The message made when the limit passes (it may say what the work was doing then).
  Watchdog(std::chrono::nanoseconds limit, std::function<std::string()> message, int exit_status);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace dltune
