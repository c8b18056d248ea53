// The kernel log through /dev/kmsg (diagnose/kernel_log.hpp).
#include "diagnose/kernel_log.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "host/parse/kmsg.hpp"

namespace dltune::diagnose {

KmsgRead read_kmsg(const std::string& path, std::int64_t since_wall_ns) {
  KmsgRead out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    out.unavailable = fmt::format(
        "cannot open {}: {}{}", path, std::strerror(e),
        e == EACCES || e == EPERM ? " (it needs root, or kernel.dmesg_restrict=0)" : "");
    return out;
  }
  const std::int64_t offset = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
  // A record is at most 8 KiB (CONSOLE_LOG_MAX/PRINTKRB_RECORD_MAX in kernel/printk); a larger
  // read buffer costs nothing.
  std::string buf(16384, '\0');
  for (std::size_t n = 0; n < 10'000'000; ++n) {
    const auto got = ::read(fd, buf.data(), buf.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) {  // overwritten under us: the next read gives the oldest left
        ++out.lost;
        continue;
      }
      if (errno != EAGAIN)
        out.unavailable = fmt::format("cannot read {}: {}", path, std::strerror(errno));
      break;
    }
    if (got == 0) break;
    const auto rec =
        host::parse::kmsg_record(std::string_view(buf.data(), static_cast<std::size_t>(got)));
    if (!rec) {
      ++out.garbled;
      continue;
    }
    const std::int64_t wall = offset + static_cast<std::int64_t>(rec->usec) * 1000;
    if (wall < since_wall_ns) continue;
    out.records.push_back(LogRecord{wall, rec->seq, rec->priority, "kmsg", rec->text});
  }
  ::close(fd);
  return out;
}

std::vector<LoggedEvent> events_of(const std::vector<LogRecord>& records, const XidTable& xids) {
  std::vector<LoggedEvent> out;
  std::map<std::string, LoggedEvent> context;  // "oom-kill:" lines by pid, until their kill
  for (const auto& r : records) {
    auto e = classify(r.text, xids);
    if (!e) continue;
    LoggedEvent le{std::move(*e), r.wall_ns, r.source, {r.text}};
    if (le.event.kind == "oom_context") {
      context[le.event.fields["pid"]] = std::move(le);
      continue;
    }
    if (le.event.kind == "oom_kill") {
      const auto it = context.find(le.event.fields["pid"]);
      if (it != context.end()) {
        auto& f = it->second.event.fields;
        le.event.fields["cgroup"] = f["cgroup"];
        le.event.fields["constraint"] = f["constraint"];
        if (!f["oom_memcg"].empty()) le.event.fields["oom_memcg"] = f["oom_memcg"];
        le.raw.insert(le.raw.begin(), it->second.raw.front());
        if (!f["cgroup"].empty()) le.event.explanation += " Its cgroup: " + f["cgroup"] + ".";
        context.erase(it);
      }
    }
    out.push_back(std::move(le));
  }
  // A context line whose kill line was not read (lost, or outside the window) still says a kill
  // happened.
  for (auto& [pid, le] : context) {
    le.event.kind = "oom_kill";
    le.event.severity = Severity::kCritical;
    out.push_back(std::move(le));
  }
  std::stable_sort(out.begin(), out.end(), [](const LoggedEvent& a, const LoggedEvent& b) {
    return a.wall_ns < b.wall_ns;
  });
  return out;
}

}  // namespace dltune::diagnose
