#include "core/watchdog.hpp"

#include <cstdio>
#include <cstdlib>

namespace dltune {

Watchdog::Watchdog(std::chrono::nanoseconds limit, std::string message, int exit_status)
    : thread_([this, limit, message = std::move(message), exit_status] {
        std::unique_lock lock(mutex_);
        if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
        std::fputs(message.c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(exit_status);
      }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace dltune
