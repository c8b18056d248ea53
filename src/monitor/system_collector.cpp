// SystemCollector: the host-wide files, each opened once and pread at every sample into a buffer
// of its own (the activity counters every activity_every samples, carried between). A file that
// is not there switches its part off with one notice.
#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "monitor/parse_system.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

namespace {

// One file kept open, and what its absence means.
struct Source {
  Source(const char* p, const char* m, const char* k = nullptr)
      : path(p), missing(m), key(k != nullptr ? k : p) {}
  const char* path;
  const char* missing;  // the notice when the file is not there
  const char* key;      // what the notice names: the three PSI files are one source
  std::optional<host::OpenFile> file;
  std::string buf;
  bool tried = false, off = false;
};

constexpr const char* kNoPsi =
    "the kernel has no PSI (built without CONFIG_PSI, or booted with psi=0): no host pressure "
    "figures";

}  // namespace

struct SystemCollector::State {
  host::Root root;
  Source stat{"/proc/stat", "no CPU, context switch or fork figures"};
  Source meminfo{"/proc/meminfo", "no memory figures"};
  Source vmstat{"/proc/vmstat", "no swap, fault or reclaim figures"};
  Source psi_cpu{"/proc/pressure/cpu", kNoPsi, "/proc/pressure"};
  Source psi_memory{"/proc/pressure/memory", kNoPsi, "/proc/pressure"};
  Source psi_io{"/proc/pressure/io", kNoPsi, "/proc/pressure"};
  Source diskstats{"/proc/diskstats", "no disk figures"};
  Source net_dev{"/proc/net/dev", "no network figures"};
  // Whether a diskstats name is a whole disk, decided once per name.
  std::vector<std::pair<std::string, bool>> whole;
  std::optional<bool> sys_block;  // whether /sys/block is there at all
  std::function<bool(std::string_view)> is_whole;
  // activity_every: the collects between two readings of the activity counters, the collects
  // so far, and the last reading (carried into the collects between).
  unsigned every = 1;
  std::uint64_t turn = 0;
  bool have_last = false;
  std::int64_t last_ns = 0;
  VmStat last_vm;
  Pressures last_pressure;
  std::vector<Disk> last_disks;
  std::vector<NetDevice> last_net;

  explicit State(const host::Root& r) : root(r) {
    is_whole = [this](std::string_view name) { return whole_disk(name); };
  }

  // /sys/block lists whole disks only: a partition is /sys/block/DISK/PART (sysfs-block ABI).
  // loop and ram devices are left out: a loop device's reads are counted again on the disk
  // that holds its file, and a RAM disk is memory. zram stays: it is where swap goes on hosts
  // that swap to compressed memory, and its traffic is that swap's.
  bool whole_disk(std::string_view name) {
    for (const auto& [n, w] : whole)
      if (n == name) return w;
    bool w = name.substr(0, 4) != "loop" && name.substr(0, 3) != "ram" &&
             root.exists("/sys/block/" + std::string(name));
    whole.emplace_back(std::string(name), w);
    return w;
  }

  // The text of `s` now; empty (and the part off, said once) when the file is not there.
  Result<std::optional<std::string_view>> read(Source& s, Notices& notices) {
    if (s.off) return std::optional<std::string_view>();
    if (!s.tried) {
      s.tried = true;
      auto f = root.open(s.path);
      if (!f) return tl::unexpected(f.error());
      s.file = std::move(*f);
    }
    if (s.file) {
      auto text = s.file->read(s.buf);
      // EOPNOTSUPP: PSI compiled in but switched off at run time (kernel/sched/psi.c).
      if (!text && text.error().errno_ != EOPNOTSUPP) return tl::unexpected(text.error());
      if (text && *text) return *text;
    }
    s.off = true;
    s.file.reset();
    notices.once(s.key, std::string("no ") + s.key + ": " + s.missing);
    return std::optional<std::string_view>();
  }

  Result<void> pressure(Source& s, std::optional<Pressure>& out, Notices& notices) {
    auto text = read(s, notices);
    if (!text) return tl::unexpected(text.error());
    if (!*text) {
      out.reset();
      return {};
    }
    if (!out) out.emplace();
    return parse_pressure(**text, s.path, *out);
  }
};

SystemCollector::SystemCollector(const host::Root& root) : state_(std::make_unique<State>(root)) {}
SystemCollector::~SystemCollector() = default;
SystemCollector::SystemCollector(SystemCollector&&) noexcept = default;
SystemCollector& SystemCollector::operator=(SystemCollector&&) noexcept = default;

void SystemCollector::activity_every(unsigned n) {
  state_->every = std::max(1u, n);
  state_->turn = 0;
}

Result<void> SystemCollector::collect(System& out, Notices& notices, std::int64_t now_ns) {
  State& s = *state_;
  auto text = s.read(s.stat, notices);
  if (!text) return tl::unexpected(text.error());
  if (*text) {
    if (auto ok = parse_proc_stat(**text, out); !ok) return ok;
  }
  text = s.read(s.meminfo, notices);
  if (!text) return tl::unexpected(text.error());
  if (*text) {
    if (auto ok = parse_meminfo(**text, out.memory); !ok) return ok;
  }

  // The activity counters: this collect's turn to read them, or the last reading carried (the
  // vectors assigned element by element: their strings' storage is kept).
  const bool read_now = s.every <= 1 || !s.have_last || s.turn % s.every == 0;
  ++s.turn;
  if (!read_now) {
    out.vm = s.last_vm;
    out.pressure = s.last_pressure;
    out.disks = s.last_disks;
    out.net = s.last_net;
    out.activity_ns = s.last_ns;
    out.activity_carried = true;
    return {};
  }
  out.activity_ns = now_ns;
  out.activity_carried = false;
  text = s.read(s.vmstat, notices);
  if (!text) return tl::unexpected(text.error());
  if (*text) {
    if (auto ok = parse_vmstat(**text, out.vm); !ok) return ok;
  }
  if (auto ok = s.pressure(s.psi_cpu, out.pressure.cpu, notices); !ok) return ok;
  if (auto ok = s.pressure(s.psi_memory, out.pressure.memory, notices); !ok) return ok;
  if (auto ok = s.pressure(s.psi_io, out.pressure.io, notices); !ok) return ok;

  if (!s.sys_block) {
    s.sys_block = s.root.exists("/sys/block");
    if (!*s.sys_block)
      notices.once("/sys/block",
                   "no /sys/block: whole disks cannot be told from partitions; no disk figures");
  }
  text = *s.sys_block ? s.read(s.diskstats, notices)
                      : Result<std::optional<std::string_view>>(std::nullopt);
  if (!text) return tl::unexpected(text.error());
  if (*text) {
    if (auto ok = parse_diskstats(**text, s.is_whole, out.disks); !ok) return ok;
  } else {
    out.disks.clear();
  }
  text = s.read(s.net_dev, notices);
  if (!text) return tl::unexpected(text.error());
  if (*text) {
    if (auto ok = parse_net_dev(**text, out.net); !ok) return ok;
  } else {
    out.net.clear();
  }
  if (s.every > 1) {
    s.last_vm = out.vm;
    s.last_pressure = out.pressure;
    s.last_disks = out.disks;
    s.last_net = out.net;
    s.last_ns = now_ns;
    s.have_last = true;
  }
  return {};
}

}  // namespace dltune::monitor
