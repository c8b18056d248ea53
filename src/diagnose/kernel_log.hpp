#pragma once
// Reading the kernel's log for `dltune doctor`: /dev/kmsg's structured records, each
// turned into a wall time, and the events in them (diagnose/kernel_events.hpp), with the OOM
// killer's two lines about one kill joined into one event.
//
// Source: Documentation/ABI/testing/dev-kmsg. Each read() returns one record "PRIO,SEQ,USEC,
// FLAGS;TEXT"; EPIPE means records were overwritten before they were read (the reader goes on
// from the oldest left and says so); EAGAIN with O_NONBLOCK means the end. USEC is the kernel's
// local clock since boot, taken here as CLOCK_MONOTONIC (they agree to well under a second on
// Linux, and both stop in suspend), and turned into wall time as realtime - monotonic + USEC.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "diagnose/kernel_events.hpp"
#include "gpu/backend.hpp"
#include "host/kmsg.hpp"
#include "host/root.hpp"

namespace dltune::diagnose {

struct LogRecord {
  std::int64_t wall_ns = 0;
  std::uint64_t seq = 0;
  int priority = 0;
  std::string source;  // "kmsg"
  std::string text;
};

struct KmsgRead {
  std::vector<LogRecord> records;   // at or after `since_wall_ns`, in order
  std::size_t garbled = 0;          // records that did not parse: skipped and counted
  std::size_t lost = 0;             // times the ring buffer wrapped under the reader (EPIPE)
  std::int64_t oldest_wall_ns = 0;  // the oldest record the buffer held (0: none)
  // Why nothing could be read ("cannot open /dev/kmsg: Permission denied (needs root, or
  // kernel.dmesg_restrict=0)"); empty when it was read.
  std::optional<std::string> unavailable;
};

// Reads what the ring buffer of `root` (a live Root) holds now.
[[nodiscard]] KmsgRead read_kmsg(const host::Root& root, std::int64_t since_wall_ns);

// New records as they come (doctor --follow): opened at the end of the log.
class KmsgFollower {
 public:
  // Error naming the path and errno when it cannot be opened.
  [[nodiscard]] static Result<KmsgFollower> open(const host::Root& root);
  // Waits up to `timeout_ms` for records and returns those that came (none on a timeout).
  [[nodiscard]] std::vector<LogRecord> wait(int timeout_ms);
  [[nodiscard]] std::size_t lost() const { return lost_; }

 private:
  explicit KmsgFollower(host::KmsgReader reader) : reader_(std::move(reader)) {}
  host::KmsgReader reader_;
  std::size_t lost_ = 0;
};

struct LoggedEvent {
  KernelEvent event;
  std::int64_t wall_ns = 0;
  std::string source;
  std::vector<std::string> raw;  // the line(s) it was read from
};

// Events from records given one at a time (a large log is streamed through it: only the events
// are kept); an "oom-kill:" context line adds its cgroup and constraint to the kill of the same
// pid that follows it instead of standing alone.
class EventCollector {
 public:
  explicit EventCollector(const XidTable& xids) : xids_(xids) {}
  void add(std::int64_t wall_ns, const std::string& source, std::string_view text);
  // The events, in time order (context lines whose kill was not seen become kills of their own).
  [[nodiscard]] std::vector<LoggedEvent> finish();
  // The events complete so far, taken out (--follow prints them as they come); a context line
  // waits for its kill.
  [[nodiscard]] std::vector<LoggedEvent> take();

 private:
  // The OOM report before the kill (mm/oom_kill.c dump_header): the group's usage and limit
  // (mm/memcontrol.c: "memory: usage %llukB, limit %llukB, failcnt %lu") and the task dump
  // ("[  pid  ]   uid  tgid total_vm      rss ... name" and a row per task, rss in pages).
  struct TaskRow {
    std::string pid, name;
    std::uint64_t rss_pages = 0;
  };
  void oom_report(std::string_view text);
  void attach_report(LoggedEvent& kill);
  std::string usage_line_;
  std::vector<TaskRow> tasks_;
  int rss_column_ = -1;  // in the current dump's header; -1 outside a dump

  const XidTable& xids_;
  std::vector<LoggedEvent> out_;
  std::map<std::string, LoggedEvent> context_;  // "oom-kill:" lines by pid, until their kill
};

// A GPU as doctor names it: its PCI address and, when NVML knew it, its index and UUID.
struct GpuName {
  std::string pci;  // "0000:3b:00.0"
  std::optional<unsigned> index;
  std::optional<std::string> uuid;
  // The state of its memory now (ECC counts, row remapping or page retirement, from NVML), and
  // the action it calls for; said with the memory Xids (48, 63, 64, 92, 94, 95).
  std::optional<std::string> memory_now;
  std::optional<std::string> memory_action;
};
// The memory state of an NVML device as GpuName carries it: "uncorrectable ECC errors 2 since
// the driver loaded (5 in its life); rows remapped 0 for corrected, 1 for uncorrected errors; a
// remap waits for a GPU reset", and the action when one is due. Nothing when NVML said nothing.
void describe_memory(const gpu::Device& d, GpuName& name);
// Adds `gpu` (index) and `uuid` to the events whose PCI address or device is one of `gpus` (an
// Xid's "0000:3b:00" names domain, bus and device, without the function), and says which GPU it
// was in the explanation. Returns whether any event was about a GPU.
bool name_gpus(std::vector<LoggedEvent>& events, const std::vector<GpuName>& gpus);
// Whether any event names a PCI address (only then are the GPUs worth asking NVML about).
[[nodiscard]] bool names_pci(const std::vector<LoggedEvent>& events);

// The events in `records`, in order.
[[nodiscard]] std::vector<LoggedEvent> events_of(const std::vector<LogRecord>& records,
                                                 const XidTable& xids);

}  // namespace dltune::diagnose
