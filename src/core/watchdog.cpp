#include "core/watchdog.hpp"

#include <cstdio>
#include <cstdlib>

namespace dltune {

Watchdog::Watchdog(std::chrono::nanoseconds limit, std::string message, int exit_status)
    : Watchdog(limit,
               std::function<std::string()>([message = std::move(message)] { return message; }),
               exit_status) {}

Watchdog::Watchdog(std::chrono::nanoseconds limit, std::function<std::string()> message,
                   int exit_status)
    : thread_([this, limit, message = std::move(message), exit_status] {
        std::unique_lock lock(mutex_);
        if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
        const std::string text = message();
        std::fputs(text.c_str(), stderr);
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
