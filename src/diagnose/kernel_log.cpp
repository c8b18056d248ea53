// The kernel log through /dev/kmsg (diagnose/kernel_log.hpp).
#include "diagnose/kernel_log.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/clock.hpp"
#include "host/kmsg.hpp"

namespace dltune::diagnose {

namespace {

// A ring-buffer record as the log's: its time since boot (CLOCK_MONOTONIC, usec) made wall time
// with `offset` (realtime - monotonic).
LogRecord log_record(host::parse::KmsgRecord&& rec, std::int64_t offset) {
  return LogRecord{offset + static_cast<std::int64_t>(rec.usec) * 1000, rec.seq, rec.priority,
                   "kmsg", std::move(rec.text)};
}

}  // namespace

KmsgRead read_kmsg(const host::Root& root, std::int64_t since_wall_ns) {
  KmsgRead out;
  auto reader = host::KmsgReader::open(root, host::KmsgReader::Start::kOldest);
  if (!reader) {
    const int e = reader.error().errno_;
    out.unavailable = fmt::format(
        "cannot open {}: {}{}", host::kKmsgPath, std::strerror(e),
        e == EACCES || e == EPERM ? " (it needs root, or kernel.dmesg_restrict=0)" : "");
    return out;
  }
  const std::int64_t offset = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
  auto batch = reader->read_available(10'000'000);
  out.lost = batch.lost;
  out.garbled = batch.garbled;
  if (batch.error)
    out.unavailable =
        fmt::format("cannot read {}: {}", host::kKmsgPath, std::strerror(batch.error->errno_));
  for (auto& rec : batch.records) {
    auto r = log_record(std::move(rec), offset);
    if (out.oldest_wall_ns == 0) out.oldest_wall_ns = r.wall_ns;
    if (r.wall_ns >= since_wall_ns) out.records.push_back(std::move(r));
  }
  return out;
}

namespace {

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '[' || s[i] == ']')) ++i;
    const auto start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '[' && s[i] != ']') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

}  // namespace

void EventCollector::oom_report(std::string_view text) {
  if (text.starts_with("memory: usage ")) {
    usage_line_ = std::string(text.substr(8));  // "usage 65536kB, limit 65536kB, failcnt 98"
    return;
  }
  if (text.starts_with("[  pid  ]")) {  // a new dump: its columns differ between kernels
    tasks_.clear();
    rss_column_ = -1;
    const auto cols = words(text);
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == "rss") rss_column_ = static_cast<int>(i);
    return;
  }
  if (rss_column_ < 0 || !text.starts_with("[")) return;
  const auto cols = words(text);
  if (cols.size() <= static_cast<std::size_t>(rss_column_) + 1) return;
  TaskRow row;
  row.pid = std::string(cols[0]);
  row.name = std::string(cols.back());
  const auto rss = cols[static_cast<std::size_t>(rss_column_)];
  if (std::from_chars(rss.data(), rss.data() + rss.size(), row.rss_pages).ec != std::errc()) return;
  if (tasks_.size() < 100000) tasks_.push_back(std::move(row));
}

void EventCollector::attach_report(LoggedEvent& kill) {
  auto& f = kill.event.fields;
  if (!usage_line_.empty()) {
    f["memory"] = usage_line_;
    kill.event.explanation += " At the time: " + usage_line_ + ".";
  }
  if (!tasks_.empty()) {
    std::sort(tasks_.begin(), tasks_.end(),
              [](const TaskRow& a, const TaskRow& b) { return a.rss_pages > b.rss_pages; });
    std::vector<std::string> top;
    for (std::size_t i = 0; i < tasks_.size() && i < 3; ++i)
      top.push_back(fmt::format("{} (pid {}) {:.0f} MiB", tasks_[i].name, tasks_[i].pid,
                                static_cast<double>(tasks_[i].rss_pages) * 4096 / 1048576));
    f["largest"] = fmt::format("{}", fmt::join(top, "; "));
    kill.event.explanation += " Largest then: " + f["largest"] + ".";
  }
  usage_line_.clear();
  tasks_.clear();
  rss_column_ = -1;
}

void EventCollector::add(std::int64_t wall_ns, const std::string& source, std::string_view text) {
  if (text.starts_with("memory: usage ") || text.starts_with("[")) {
    oom_report(text);
    return;
  }
  auto e = classify(text, xids_);
  if (!e) return;
  LoggedEvent le{std::move(*e), wall_ns, source, {std::string(text)}};
  if (le.event.kind == "oom_context") {
    attach_report(le);
    context_[le.event.fields["pid"]] = std::move(le);
    return;
  }
  if (le.event.kind == "oom_kill") {
    const auto it = context_.find(le.event.fields["pid"]);
    if (it != context_.end()) {
      auto& f = it->second.event.fields;
      le.event.fields["cgroup"] = f["cgroup"];
      le.event.fields["constraint"] = f["constraint"];
      if (!f["oom_memcg"].empty()) le.event.fields["oom_memcg"] = f["oom_memcg"];
      le.raw.insert(le.raw.begin(), it->second.raw.front());
      if (!f["cgroup"].empty()) le.event.explanation += " Its cgroup: " + f["cgroup"] + ".";
      for (const char* key : {"memory", "largest"})
        if (f.count(key)) le.event.fields[key] = f[key];
      if (f.count("memory")) le.event.explanation += " At the time: " + f["memory"] + ".";
      if (f.count("largest")) le.event.explanation += " Largest then: " + f["largest"] + ".";
      context_.erase(it);
    }
  }
  out_.push_back(std::move(le));
}

std::vector<LoggedEvent> EventCollector::take() {
  std::vector<LoggedEvent> out;
  out.swap(out_);
  return out;
}

std::vector<LoggedEvent> EventCollector::finish() {
  // A context line whose kill line was not read (lost, or outside the window) still says a kill
  // happened.
  for (auto& [pid, le] : context_) {
    le.event.kind = "oom_kill";
    le.event.severity = Severity::kCritical;
    out_.push_back(std::move(le));
  }
  context_.clear();
  std::stable_sort(out_.begin(), out_.end(), [](const LoggedEvent& a, const LoggedEvent& b) {
    return a.wall_ns < b.wall_ns;
  });
  return std::move(out_);
}

Result<KmsgFollower> KmsgFollower::open(const host::Root& root) {
  auto reader = host::KmsgReader::open(root, host::KmsgReader::Start::kEnd);
  if (!reader) return tl::unexpected(reader.error());
  return KmsgFollower(std::move(*reader));
}

std::vector<LogRecord> KmsgFollower::wait(int timeout_ms) {
  std::vector<LogRecord> out;
  if (!reader_.wait(timeout_ms)) return out;
  const std::int64_t offset = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
  auto batch = reader_.read_available(10000);
  lost_ += batch.lost;
  for (auto& rec : batch.records) out.push_back(log_record(std::move(rec), offset));
  return out;
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

void describe_memory(const gpu::Device& d, GpuName& name) {
  std::vector<std::string> parts;
  const auto& c = d.ecc_errors;
  if (c.volatile_uncorrected || c.aggregate_uncorrected)
    parts.push_back(
        fmt::format("uncorrectable ECC errors {} since the driver loaded ({} in its "
                    "life)",
                    c.volatile_uncorrected.value_or(0), c.aggregate_uncorrected.value_or(0)));
  const std::string where = d.pci_bus_id.value_or(std::to_string(d.index));
  if (const auto& rr = d.row_remap) {
    parts.push_back(fmt::format("rows remapped {} for corrected, {} for uncorrected errors",
                                rr->corrected_rows, rr->uncorrected_rows));
    if (rr->failure) {
      parts.push_back("a row remap FAILED");
      name.memory_action =
          "A row remap failed, so the bad memory stays in use: drain the node and have the GPU "
          "serviced.";
    } else if (rr->pending) {
      parts.push_back("a remap waits for a GPU reset");
      name.memory_action = fmt::format(
          "Reset the GPU once its jobs have stopped (nvidia-smi -r -i {}) so that the pending "
          "row remap takes effect.",
          where);
    } else {
      parts.push_back("no remap pending");
    }
  } else if (const auto& p = d.retired_pages; p.multiple_single_bit || p.double_bit) {
    parts.push_back(
        fmt::format("pages retired {} for repeated corrected, {} for uncorrected "
                    "errors",
                    p.multiple_single_bit.value_or(0), p.double_bit.value_or(0)));
    if (p.pending == true) {
      parts.push_back("a retirement waits for a GPU reset");
      name.memory_action = fmt::format(
          "Reset the GPU once its jobs have stopped (nvidia-smi -r -i {}) so that the pending "
          "page retirement takes effect.",
          where);
    }
  }
  if (!parts.empty()) name.memory_now = fmt::format("{}", fmt::join(parts, "; "));
}

bool names_pci(const std::vector<LoggedEvent>& events) {
  for (const auto& e : events)
    if (e.event.fields.count("pci") || e.event.fields.count("device")) return true;
  return false;
}

bool name_gpus(std::vector<LoggedEvent>& events, const std::vector<GpuName>& gpus) {
  bool any = false;
  for (auto& e : events) {
    auto& f = e.event.fields;
    std::string addr;
    if (const auto it = f.find("pci"); it != f.end())
      addr = lower(it->second);
    else if (const auto d = f.find("device"); d != f.end())
      addr = lower(d->second.substr(0, d->second.find(' ')));
    if (addr.size() < 10) continue;  // "0000:3b:00" at least
    for (const auto& g : gpus) {
      const auto pci = lower(g.pci);
      // Equal, or the event's address without the function ("0000:3b:00" of "0000:3b:00.0").
      if (!(pci == addr || (pci.starts_with(addr) && pci.size() == addr.size() + 2))) continue;
      any = true;
      f["gpu_pci"] = g.pci;
      std::string which = "GPU at " + g.pci;
      if (g.index) {
        f["gpu"] = std::to_string(*g.index);
        which = fmt::format("GPU {} ({})", *g.index, g.pci);
      }
      if (g.uuid) {
        f["uuid"] = *g.uuid;
        which += ", " + *g.uuid;
      }
      e.event.explanation += " This is " + which + ".";
      // The memory Xids (NVIDIA XID Errors: 48 DBE, 63/64 remap or retirement recorded or
      // failed, 92 high single-bit rate, 94/95 contained/uncontained ECC error) with the
      // memory's state now, which says whether the reset they call for is still due.
      static constexpr std::string_view kMemoryXids[] = {"48", "63", "64", "92", "94", "95"};
      if (const auto x = f.find("xid"); x != f.end() && g.memory_now &&
                                        std::find(std::begin(kMemoryXids), std::end(kMemoryXids),
                                                  x->second) != std::end(kMemoryXids)) {
        f["memory_now"] = *g.memory_now;
        e.event.explanation += fmt::format(" Its memory now (NVML): {}.", *g.memory_now);
        if (g.memory_action) e.event.action = *g.memory_action + " " + e.event.action;
      }
      break;
    }
  }
  return any;
}

std::vector<LoggedEvent> events_of(const std::vector<LogRecord>& records, const XidTable& xids) {
  EventCollector c(xids);
  for (const auto& r : records) c.add(r.wall_ns, r.source, r.text);
  return c.finish();
}

}  // namespace dltune::diagnose
