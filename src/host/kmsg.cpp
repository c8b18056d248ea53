#include "host/kmsg.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace dltune::host {

KmsgReader& KmsgReader::operator=(KmsgReader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

KmsgReader::~KmsgReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<KmsgReader> KmsgReader::open(const Root& root, Start start) {
  if (!root.live())
    return fail("no ring buffer in a host tree (" + root.base() + "):", kKmsgPath, ENOENT);
  const std::string path = root.outside(kKmsgPath);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail("cannot open", kKmsgPath, errno);
  if (start == Start::kEnd && ::lseek(fd, 0, SEEK_END) < 0) {
    const int e = errno;
    ::close(fd);
    return fail("cannot seek to the end of", kKmsgPath, e);
  }
  return KmsgReader(fd);
}

KmsgReader::Batch KmsgReader::read_available(std::size_t max_records) {
  Batch out;
  if (fd_ < 0) return out;
  // A record is at most 8 KiB (CONSOLE_LOG_MAX/PRINTKRB_RECORD_MAX in kernel/printk); a larger
  // read buffer costs nothing.
  std::string buf(16384, '\0');
  for (std::size_t n = 0; n < max_records; ++n) {
    const auto got = ::read(fd_, buf.data(), buf.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) {  // overwritten under us: the next read gives the oldest left
        ++out.lost;
        continue;
      }
      if (errno != EAGAIN) out.error = Error{"cannot read", kKmsgPath, errno};
      break;
    }
    if (got == 0) break;
    auto rec = parse::kmsg_record(std::string_view(buf.data(), static_cast<std::size_t>(got)));
    if (!rec) {
      ++out.garbled;
      continue;
    }
    out.records.push_back(std::move(*rec));
  }
  return out;
}

bool KmsgReader::wait(int timeout_ms) const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) > 0;
}

}  // namespace dltune::host
