#pragma once
// The kernel's lines in syslog files, for `dltune doctor` when /dev/kmsg is not readable or no
// longer holds them: /var/log/kern.log (Debian, Ubuntu; else syslog, else messages) with its
// rotations, plain (kern.log.1) and gzip'd (kern.log.2.gz), oldest first, streamed line by line
// (zlib's gzgets reads both, in bounded memory).
//
// Two line formats: rsyslog's traditional one, "Nov 30 14:05:01 host kernel: [12345.678] text"
// (local time, no year: the year is the file's, or the one before when that would put the line
// after the file was last written), and RFC 3339, "2026-11-30T14:05:01.123456+01:00 host kernel:
// text" (Debian 12's rsyslog default).
#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/root.hpp"

namespace dltune::diagnose {

struct SyslogLine {
  std::int64_t wall_ns = 0;
  std::string_view text;  // the kernel's message, without "kernel:" and its [uptime] stamp
};

// One line; nullopt for a line that is not the kernel's or does not parse. `file_mtime` is the
// file's last write (seconds since the epoch), for the traditional format's missing year.
[[nodiscard]] std::optional<SyslogLine> parse_syslog_line(std::string_view line,
                                                          std::time_t file_mtime);

// The kernel log files under `root`, oldest first ("/var/log/kern.log.2.gz", ...,
// "/var/log/kern.log").
[[nodiscard]] std::vector<std::string> syslog_files(const host::Root& root);

struct SyslogStats {
  std::size_t lines = 0, kernel_lines = 0, skipped = 0;  // skipped: too long or unreadable
  std::vector<std::string> errors;                       // files that could not be read
};

// Calls `each(path, line)` for every kernel line of `files` whose message `wanted` accepts, at or
// after `since_wall_ns` and before `until_wall_ns` (0: no end). The files are read in 1 MiB
// chunks and a line's time is parsed only when `wanted` said yes: an ordinary line costs a
// bounded search for " kernel: " and whatever `wanted` does.
SyslogStats read_syslog(const host::Root& root, const std::vector<std::string>& files,
                        std::int64_t since_wall_ns, std::int64_t until_wall_ns,
                        const std::function<bool(std::string_view)>& wanted,
                        const std::function<void(const std::string&, const SyslogLine&)>& each);

}  // namespace dltune::diagnose
