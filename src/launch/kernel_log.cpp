#include "launch/kernel_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace dltune::launch {

OomWatch::OomWatch() {
  // Documentation/ABI/testing/dev-kmsg: each read() returns one record; SEEK_END skips the
  // backlog; EAGAIN when there is nothing new; EPIPE when unread records were overwritten.
  fd_ = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ >= 0 && ::lseek(fd_, 0, SEEK_END) < 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

OomWatch::~OomWatch() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<host::parse::OomKill> OomWatch::victims(const std::string& cgroup_name) {
  std::vector<host::parse::OomKill> out;
  if (fd_ < 0) return out;
  const std::string suffix = "/dltune/" + cgroup_name;
  char buf[8192];
  for (int records = 0; records < 100000; ++records) {
    const auto n = ::read(fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: some were lost; go on
      break;                                           // EAGAIN: nothing more
    }
    if (n == 0) break;
    const auto record =
        host::parse::kmsg_record(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!record) continue;
    auto kill = host::parse::oom_kill(record->text);
    if (kill && kill->task_memcg.ends_with(suffix)) out.push_back(std::move(*kill));
  }
  return out;
}

}  // namespace dltune::launch
