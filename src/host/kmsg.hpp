#pragma once
// The kernel's ring buffer, /dev/kmsg: the one reader of it for every command (doctor's report
// and --follow, the OOM kills of run's job). Source: Documentation/ABI/testing/dev-kmsg. Each
// read(2) returns one record "PRIO,SEQ,USEC,FLAGS;TEXT" (parse::kmsg_record); EPIPE means
// records were overwritten before they were read (the reader goes on from the oldest left and
// counts it); EAGAIN, the descriptor being non-blocking, means there is nothing more now.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "host/parse/kmsg.hpp"
#include "host/root.hpp"

namespace dltune::host {

inline constexpr const char* kKmsgPath = "/dev/kmsg";

class KmsgReader {
 public:
  enum class Start { kOldest, kEnd };  // the oldest record the buffer holds, or only new ones

  KmsgReader() = default;
  KmsgReader(KmsgReader&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  KmsgReader& operator=(KmsgReader&& other) noexcept;
  KmsgReader(const KmsgReader&) = delete;
  KmsgReader& operator=(const KmsgReader&) = delete;
  ~KmsgReader();

  // The ring buffer of `root`'s host: only a live Root has one (a tree is refused, naming it).
  // Errors name /dev/kmsg and the errno (EACCES/EPERM: it needs root, or
  // kernel.dmesg_restrict=0).
  [[nodiscard]] static Result<KmsgReader> open(const Root& root, Start start);

  struct Batch {
    std::vector<parse::KmsgRecord> records;  // in the order of the log
    std::size_t garbled = 0;                 // records that did not parse: skipped
    std::size_t lost = 0;                    // times records were overwritten unread (EPIPE)
    std::optional<Error> error;              // a read that failed otherwise: the reading stopped
  };
  // Every record there is now, up to `max_records` reads.
  [[nodiscard]] Batch read_available(std::size_t max_records);
  // Waits up to `timeout_ms` for a record to read; false on a timeout.
  [[nodiscard]] bool wait(int timeout_ms) const;
  [[nodiscard]] bool is_open() const { return fd_ >= 0; }

 private:
  explicit KmsgReader(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace dltune::host
